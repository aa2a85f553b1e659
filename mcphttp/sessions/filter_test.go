package sessions

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
)

func TestParseFilter(t *testing.T) {
	members := []string{"toolsListChanged", ""}
	uris101 := `["` + strings.Repeat(`u","`, 100) + `u"]`
	for _, tc := range []struct {
		name, params string
		want         filter
		err          bool
	}{
		{name: "all", params: `{"notifications":{"toolsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["a","b"]}}`,
			want: filter{lists: []bool{true, false}, resources: true, uris: []string{"a", "b"}}},
		{name: "empty filter", params: `{"notifications":{}}`, want: filter{lists: []bool{false, false}}},
		{name: "nulls are absent", params: `{"notifications":{"toolsListChanged":null,"resourcesListChanged":null,"resourceSubscriptions":null}}`,
			want: filter{lists: []bool{false, false}}},
		{name: "unknown members ignored", params: `{"notifications":{"promptsListChanged":true,"x":[1]},"_meta":{}}`,
			want: filter{lists: []bool{false, false}}},
		{name: "false", params: `{"notifications":{"resourcesListChanged":false}}`, want: filter{lists: []bool{false, false}}},
		{name: "100 URIs", params: `{"notifications":{"resourceSubscriptions":["` + strings.Repeat(`u","`, 99) + `u"]}}`,
			want: filter{lists: []bool{false, false}, uris: strings.Split(strings.Repeat("u,", 99)+"u", ",")}},

		{name: "no params", params: ``, err: true},
		{name: "null params", params: `null`, err: true},
		{name: "no notifications", params: `{"_meta":{}}`, err: true},
		{name: "null notifications", params: `{"notifications":null}`, err: true},
		{name: "notifications not an object", params: `{"notifications":5}`, err: true},
		{name: "params not an object", params: `[1]`, err: true},
		{name: "a flag that is a string", params: `{"notifications":{"resourcesListChanged":"true"}}`, err: true},
		{name: "a tools flag that is a number", params: `{"notifications":{"toolsListChanged":1}}`, err: true},
		{name: "URIs not an array", params: `{"notifications":{"resourceSubscriptions":"a"}}`, err: true},
		{name: "a URI that is no string", params: `{"notifications":{"resourceSubscriptions":["a",1]}}`, err: true},
		{name: "101 URIs", params: `{"notifications":{"resourceSubscriptions":` + uris101 + `}}`, err: true},
		// attack: a case variant another decoder would read as the member
		{name: "case variant", params: `{"notifications":{"ResourcesListChanged":true}}`, err: true},
		{name: "case variant of a watcher's", params: `{"notifications":{"toolslistchanged":true}}`, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseFilter([]byte(tc.params), members)
			if tc.err {
				require.Error(t, err)
				var pe *mcpwire.ParamsError
				require.True(t, errors.As(err, &pe), "Invalid params")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, f)
		})
	}
}

func TestFilterJSON(t *testing.T) {
	members := []string{"toolsListChanged", "promptsListChanged"}
	f := filter{lists: []bool{true, false}, resources: true, uris: []string{`a"b`, "c"}}
	assert.Equal(t, `{"toolsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["a\"b","c"]}`, string(f.appendJSON(nil, members)))
	assert.Equal(t, `{}`, string((&filter{lists: []bool{false, false}}).appendJSON(nil, members)))
}

// FuzzParseFilter reads arbitrary strictly valid params as a listen
// filter: it never panics, never agrees to more than 100 URIs, and what it
// accepts re-encodes to a filter that reads back the same.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{
		`{"notifications":{"toolsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["a","b"]}}`,
		`{"notifications":{}}`, `{"notifications":null}`, `{"notifications":{"resourceSubscriptions":[1]}}`,
		`{"notifications":{"ResourcesListChanged":true}}`, `{"notifications":{"resourceSubscriptions":["\u00e9\n"]}}`,
		`null`, `[]`, `{}`,
	} {
		f.Add([]byte(s))
	}
	members := []string{"toolsListChanged", ""}
	f.Fuzz(func(t *testing.T, params []byte) {
		if _, err := jsonstrict.Parse(params); err != nil {
			return // the strict decoder refuses it before any method sees it
		}
		got, err := parseFilter(params, members)
		if err != nil {
			var pe *mcpwire.ParamsError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not Invalid params", err)
			}
			return
		}
		if len(got.uris) > maxListenURIs || len(got.lists) != len(members) {
			t.Fatalf("filter %+v", got)
		}
		enc := got.appendJSON(nil, members)
		if !json.Valid(enc) {
			t.Fatalf("invalid JSON %s", enc)
		}
		again, err := parseFilter(append(append([]byte(`{"notifications":`), enc...), '}'), members)
		if err != nil {
			t.Fatalf("re-encoded filter %s refused: %v", enc, err)
		}
		assert.Equal(t, len(got.uris), len(again.uris))
		assert.Equal(t, got.resources, again.resources)
	})
}
