package jsonstrict_test

import (
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// Reading params without reflection: exact names, every member once.
func ExampleMembers() {
	params := []byte(`{"uri":"docs://a\u002fb","_meta":{"progressToken":7}}`)
	var uri string
	var token int64
	err := jsonstrict.Members(params, func(name []byte, v jsonstrict.Value) bool {
		switch string(name) {
		case "uri":
			uri, _ = v.Str()
		case "_meta":
			_ = jsonstrict.Members(v.Raw(), func(name []byte, v jsonstrict.Value) bool {
				if string(name) == "progressToken" {
					token, _ = v.Int()
				}
				return true
			})
		}
		return true
	})
	fmt.Println(uri, token, err)

	// A case variant is another name: it fills nothing here, and next to the
	// real name it is a duplicate.
	err = jsonstrict.Members([]byte(`{"uri":"a","URI":"b"}`), func([]byte, jsonstrict.Value) bool { return true })
	fmt.Println(errors.Is(err, jsonstrict.ErrDuplicate))
	// Output:
	// docs://a/b 7 <nil>
	// true
}

func ExampleElements() {
	var auds []string
	err := jsonstrict.Elements([]byte(`["https://a.example","https://b.example"]`), func(v jsonstrict.Value) bool {
		s, ok := v.Str()
		if ok {
			auds = append(auds, s)
		}
		return ok // stop at the first element that is not a string
	})
	fmt.Println(auds, err)
	// Output: [https://a.example https://b.example] <nil>
}

func ExampleOptions() {
	token := jsonstrict.Options{MaxDepth: 32, MaxMembers: 512}
	_, err := token.Parse([]byte(`{"sub":"alice","sub":"admin"}`))
	fmt.Println(err)
	_, err = token.Parse([]byte(`{"sub":"alice"} trailing`))
	fmt.Println(errors.Is(err, jsonstrict.ErrSyntax))
	// Output:
	// jsonstrict: duplicate member name
	// true
}

func ExampleAppendString() {
	fmt.Println(string(jsonstrict.AppendString(nil, "say \"hi\"\n<b>\u2028\xff")))
	// Output: "say \"hi\"\n<b>\u2028\ufffd"
}
