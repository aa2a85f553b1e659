package inventory

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTemplateAccepts(t *testing.T) {
	for _, tc := range []struct {
		tmpl   string
		vars   []string
		greedy bool
	}{
		{"docs://documents/{id}", []string{"id"}, true},
		{"file:///{+path}", []string{"path"}, true},
		{"repo://{owner}/{repo}/blob/{+path}", []string{"owner", "repo", "path"}, true},
		{"docs://all", nil, true},
		{"x://{a}-{b}", []string{"a", "b"}, false}, // '-' is unreserved: a could hold it
		{"x://{name}.{ext}", []string{"name", "ext"}, false},
		{"x://{+p}/end", []string{"p"}, false},     // {+p} can hold '/'
		{"x://{p}/end", []string{"p"}, true},       // {p} cannot
		{"x://{A_1}?q=%20", []string{"A_1"}, true}, // literal query and triplet
		{"x://caf\u00e9/{id}", []string{"id"}, true},
	} {
		t.Run(tc.tmpl, func(t *testing.T) {
			ut, err := parseTemplate(tc.tmpl)
			require.NoError(t, err)
			assert.Equal(t, tc.vars, ut.vars)
			assert.Equal(t, tc.greedy, ut.greedy)
		})
	}
}

func TestParseTemplateRejects(t *testing.T) {
	for _, tmpl := range []string{
		"",                        // empty
		"x://{id",                 // unclosed
		"x://id}",                 // stray '}'
		"x://{}",                  // empty expression
		"x://{+}",                 // empty reserved expression
		"x://{#frag}",             // level 2 fragment
		"x://{?q}",                // level 3 query
		"x://{/path}",             // level 3 path segment
		"x://{.ext}",              // label
		"x://{;p}",                // path-style parameter
		"x://{&q}",                // query continuation
		"x://{x*}",                // explode
		"x://{x:3}",               // prefix
		"x://{x,y}",               // list
		"x://{a}{b}",              // adjacent expressions
		"x://{a}/{a}",             // duplicate variable
		"x://{a-b}",               // bad variable name
		"x://{{a}}",               // nested
		"x:// {a}",                // space in literal
		"x://<{a}>",               // forbidden literal characters
		"x://%zz/{a}",             // broken triplet in literal
		"x://{a}%2F{b}",           // triplet right after an expression
		"x://\x01/{a}",            // control character
		"x://\xff/{a}",            // invalid UTF-8
		strings.Repeat("a", 2049), // too long
	} {
		t.Run(tmpl, func(t *testing.T) {
			_, err := parseTemplate(tmpl)
			assert.Error(t, err)
		})
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		tmpl, uri string
		want      map[string]string // nil: no match
	}{
		{"docs://documents/{id}", "docs://documents/42", map[string]string{"id": "42"}},
		{"docs://documents/{id}", "docs://documents/", nil},                                 // values are not empty
		{"docs://documents/{id}", "docs://documents/a/b", nil},                              // '/' not in {id}
		{"docs://documents/{id}", "docs://documents/a?b", nil},                              // '?' never
		{"docs://documents/{id}", "docs://documents/a#b", nil},                              // '#' never
		{"docs://documents/{id}", "docs://documents/a%2Fb", map[string]string{"id": "a/b"}}, // decoded
		{"docs://documents/{id}", "docs://documents/a%2", nil},                              // broken triplet
		{"docs://documents/{id}", "docs://documents/a%zz", nil},                             // broken triplet
		{"docs://documents/{id}", "docs://documents/caf%C3%A9", map[string]string{"id": "café"}},
		{"docs://documents/{id}", "docs://documents/a:b@c!$&'()*+,;=", map[string]string{"id": "a:b@c!$&'()*+,;="}},
		{"docs://documents/{id}", "DOCS://documents/1", nil},         // literals are exact
		{"docs://documents/{id}", "docs://documents/caf\u00e9", nil}, // raw non-ASCII: send it encoded
		{"file:///{+path}", "file:///a/b/c.txt", map[string]string{"path": "a/b/c.txt"}},
		{"file:///{+path}", "file:///a/b?c", nil},
		{"x://{a}-{b}", "x://1-2-3", map[string]string{"a": "1", "b": "2-3"}}, // shortest first
		{"x://{name}.{ext}", "x://archive.tar.gz", map[string]string{"name": "archive", "ext": "tar.gz"}},
		{"x://{+p}/end", "x://a/b/end", map[string]string{"p": "a/b"}},
		{"x://{+p}/end", "x://a/b/end/end", map[string]string{"p": "a/b/end"}},
		{"x://{+p}/end", "x:///end", nil},
		{"repo://{o}/{r}/blob/{+path}", "repo://me/kit/blob/src/a.go", map[string]string{"o": "me", "r": "kit", "path": "src/a.go"}},
		{"docs://all", "docs://all", map[string]string{}},
		{"docs://all", "docs://all/", nil},
	} {
		t.Run(tc.tmpl+" "+tc.uri, func(t *testing.T) {
			ut, err := parseTemplate(tc.tmpl)
			require.NoError(t, err)
			got, ok := ut.params(tc.uri)
			assert.Equal(t, tc.want != nil, ok, "match")
			assert.Equal(t, tc.want != nil, ut.matches(tc.uri), "matches")
			if tc.want != nil {
				assert.Equal(t, tc.want, got)
			}
		})
	}
}

// TestGreedyAgreesWithDP checks the fast path against the general one.
func TestGreedyAgreesWithDP(t *testing.T) {
	ut, err := parseTemplate("repo://{owner}/{repo}/blob/{+path}")
	require.NoError(t, err)
	require.True(t, ut.greedy)
	for _, uri := range []string{
		"repo://a/b/blob/c", "repo://a/b/blob/", "repo://a//blob/c", "repo://a/b/blob/c/d%20e",
		"repo://a%2/b/blob/c", "repo://a/b/blobc", "repo://", "repo://a/b/blob/c?x",
	} {
		g := make([]string, 3)
		d := make([]string, 3)
		okG, okD := ut.matchGreedy(uri, g), ut.matchDP(uri, d)
		assert.Equal(t, okD, okG, uri)
		if okG {
			assert.Equal(t, d, g, uri)
		}
	}
}

func TestMatchLimitsLength(t *testing.T) {
	ut, err := parseTemplate("x://{+p}")
	require.NoError(t, err)
	assert.True(t, ut.matches("x://"+strings.Repeat("a", maxURILen-4)))
	assert.False(t, ut.matches("x://"+strings.Repeat("a", maxURILen-3)))
}

func TestExpandRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		tmpl string
		vals map[string]string
		want string
	}{
		{"docs://documents/{id}", map[string]string{"id": "a b/c"}, "docs://documents/a%20b%2Fc"},
		{"file:///{+path}", map[string]string{"path": "a b/c"}, "file:///a%20b/c"},
		{"x://{a}-{b}", map[string]string{"a": "1-2", "b": "3-4"}, "x://1%2D2-3-4"},
		{"x://{name}.{ext}", map[string]string{"name": "a.b", "ext": "c.d"}, "x://a%2Eb.c.d"},
		{"x://{a}", map[string]string{"a": "100%"}, "x://100%25"},
	} {
		t.Run(tc.tmpl, func(t *testing.T) {
			got, err := Expand(tc.tmpl, tc.vals)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			ut, err := parseTemplate(tc.tmpl)
			require.NoError(t, err)
			back, ok := ut.params(got)
			require.True(t, ok)
			assert.Equal(t, tc.vals, back)
		})
	}
	_, err := Expand("x://{a}", map[string]string{})
	assert.Error(t, err, "a missing value is an error")
	_, err = Expand("x://{a}", map[string]string{"a": ""})
	assert.Error(t, err, "an empty value is an error")
	_, err = Expand("x://{?a}", map[string]string{"a": "1"})
	assert.Error(t, err, "an unsupported template is an error")
}
