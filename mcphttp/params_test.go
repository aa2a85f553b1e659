package mcphttp

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// stringParam answers as jsonrpc.UnmarshalParams does for the two params
// it reads (the reference): the same error or none, the same value.
func checkStringParam(t *testing.T, params []byte) {
	t.Helper()
	var c struct {
		Cursor *string `json:"cursor"`
	}
	var u struct {
		URI *string `json:"uri"`
	}
	for _, tc := range []struct {
		name, folded string
		target       any
		field        func() *string
	}{
		{"cursor", foldedCursor, &c, func() *string { return c.Cursor }},
		{"uri", foldedURI, &u, func() *string { return u.URI }},
	} {
		wantErr := jsonrpc.UnmarshalParams(params, tc.target)
		got, present, err := stringParam(params, tc.name, tc.folded)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%s in %q: error %v, UnmarshalParams %v", tc.name, params, err, wantErr)
		}
		if err != nil {
			var a, b *jsonrpc.Error
			if !errors.As(err, &a) || !errors.As(wantErr, &b) || a.Code != b.Code || a.Message != b.Message {
				t.Fatalf("%s in %q: error %v, UnmarshalParams %v", tc.name, params, err, wantErr)
			}
			continue
		}
		want := tc.field()
		if present != (want != nil) || want != nil && got != *want {
			t.Fatalf("%s in %q: %q %v, UnmarshalParams %v", tc.name, params, got, present, want)
		}
	}
}

func TestStringParam(t *testing.T) {
	require.Equal(t, foldedCursor, string(jsonstrict.AppendFold(nil, []byte("cursor"))))
	require.Equal(t, foldedURI, string(jsonstrict.AppendFold(nil, []byte("uri"))))
	for _, p := range stringParamSeeds {
		checkStringParam(t, []byte(p))
	}
	v, present, err := stringParam([]byte(`{"cursor":"a\u00e9\"b","_meta":{"x":[1,{"Cursor":2}]}}`), "cursor", foldedCursor)
	require.NoError(t, err)
	assert.True(t, present)
	assert.Equal(t, "aé\"b", v, "unescaped; nested members are not the field's")
}

var stringParamSeeds = []string{
	`{}`, `null`, ` null `, `[]`, `"x"`, `1`, `{"cursor":"abc"}`, `{"cursor":null}`, `{"cursor":""}`,
	`{"cursor":1}`, `{"cursor":{"a":1}}`, `{"cursor":["a"]}`, `{"Cursor":"abc"}`, `{"CURSOR":"abc"}`,
	`{"curſor":"abc"}`,                     // LATIN SMALL LETTER LONG S folds to S (attack: a peer reading names exactly sees no cursor)
	`{"\u0063ursor":"abc"}`,                // an escaped name is the name itself
	`{"cursor":"a","cursor":"b"}`,          // duplicate
	`{"cursor":"a","Cursor":"b"}`,          // case-variant duplicate
	`{"cursor":"\ud800"}`,                  // lone surrogate
	"{\"cursor\":\"\xff\"}",                // invalid UTF-8
	`{"cursor":"abc"`, `{"cursor":"abc"}x`, // truncated, trailing
	`{"uri":"docs://a","URI":"docs://b"}`, `{"Uri":"x"}`, `{"uri":"docs://a","other":{"URI":1}}`,
	`{"cursor":"a","uri":"b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
}

// FuzzStringParam: on any params, stringParam agrees with UnmarshalParams.
func FuzzStringParam(f *testing.F) {
	for _, p := range stringParamSeeds {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		checkStringParam(t, params)
	})
}
