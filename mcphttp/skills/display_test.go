package skills

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/display"
	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// A skill's description stored with characters the name rule refuses is
// served with U+FFFD in their place, written raw or escaped (issue 35),
// line breaks kept; a clean frontmatter is sent as it is, uncopied.
func TestFrontmatterIsDefused(t *testing.T) {
	for in, want := range map[string]string{
		`{"name":"a","description":"plain"}`:                      `{"name":"a","description":"plain"}`,
		`{"name":"a","description":"line\nbreak\ttab é 文 😀"}`:     `{"name":"a","description":"line\nbreak\ttab é 文 😀"}`,
		"{\"name\":\"a\",\"description\":\"in\u202Evoice\"}":      "{\"name\":\"a\",\"description\":\"in\uFFFDvoice\"}",
		`{"name":"a","description":"in\u202evoice"}`:              `{"name":"a","description":"in\ufffdvoice"}`,
		`{"name":"a","description":"tag\udb40\udc41 bell\b"}`:     `{"name":"a","description":"tag\ufffd bell\ufffd"}`,
		`{"name":"a","description":"ok\u00e9 \u2028 \"q\""}`:      `{"name":"a","description":"ok\u00e9 \u2028 \"q\""}`,
		"{\"name\":\"a\",\"description\":\"soft\u00ADhy\u034F\"}": "{\"name\":\"a\",\"description\":\"soft\uFFFDhy\uFFFD\"}",
		"{\"\x7f\":[\"de\x7fl\"]}":                                `{"\ufffd":["de\ufffdl"]}`,
	} {
		got := string(appendFrontmatter(nil, []byte(in)))
		assert.Equal(t, want, got, in)
		checkDefused(t, in, got)
	}
	plain := []byte(`{"name":"a","description":"plain"}`)
	assert.Zero(t, testing.AllocsPerRun(10, func() { _ = appendFrontmatter(make([]byte, 0, 64), plain) }))
}

// checkDefused asserts that out is a valid JSON object whose strings show
// no refused character but tab and line breaks.
func checkDefused(t *testing.T, in, out string) {
	t.Helper()
	_, err := jsonstrict.Parse([]byte(out))
	require.NoError(t, err, "%q -> %q", in, out)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			for _, r := range x {
				if display.Refused(r) && !strings.ContainsRune("\t\n\r\u2028\u2029", r) {
					t.Fatalf("%q -> %q shows %U", in, out, r)
				}
			}
		case map[string]any:
			for k, e := range x {
				walk(k)
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
}

func FuzzFrontmatterDefused(f *testing.F) {
	f.Add(`{"name":"a","description":"in\u202evoice"}`)
	f.Add("{\"name\":\"a\",\"description\":\"x\u200dy\",\"k\":[\"\\udb40\\udc41\",1]}")
	f.Fuzz(func(t *testing.T, in string) {
		v, err := jsonstrict.Parse([]byte(in))
		if err != nil || v.Kind() != jsonstrict.Object {
			return
		}
		checkDefused(t, in, string(appendFrontmatter(nil, []byte(in))))
	})
}
