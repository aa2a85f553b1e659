package uritemplate

import (
	"strings"
	"testing"
	"unicode/utf8"

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
		{"x://{+p}/end", []string{"p"}, false},        // {+p} can hold '/'
		{"x://{p}/end", []string{"p"}, true},          // {p} cannot
		{"x://{p}:{q}", []string{"p", "q"}, true},     // {p} cannot hold ':'
		{"x://{+p}:{q}", []string{"p", "q"}, false},   // {+p} can
		{"x://{A_1}?q=%20", []string{"A_1"}, true},    // literal query and triplet
		{"x://caf\u00e9/{id}", []string{"id"}, true},  // ucschar
		{"x://\U000F0000/{id}", []string{"id"}, true}, // iprivate
		{"x://{x*}", []string{"x"}, true},             // explode: nothing for a string
		{"x://{x:3}", []string{"x"}, false},           // prefix
		{"x://{x,y}", []string{"x", "y"}, false},      // lists
		{"x://{+x,y}", []string{"x", "y"}, false},     //
		{"x://a{#f}", []string{"f"}, false},           // level 2 fragment
		{"x://a{.ext}", []string{"ext"}, false},       // level 3 label
		{"x://a{/p,q}", []string{"p", "q"}, false},    // path segments
		{"x://a{;p,q}", []string{"p", "q"}, false},    // path parameters
		{"x://a{?q,r}", []string{"q", "r"}, false},    // query
		{"x://a?s=1{&q}", []string{"q"}, false},       // query continuation
		{"x://a{/id}{?q}{&r}", []string{"id", "q", "r"}, false},
		{"x://{a}{/b}", []string{"a", "b"}, false}, // an operator character after an expression
		{"x://{a.b}{?c.d.e,%41,_}", []string{"a.b", "c.d.e", "%41", "_"}, false},
		{"x://{x:9999}", []string{"x"}, false},
		{"{/list*,path:4}", []string{"list", "path"}, false},
	} {
		t.Run(tc.tmpl, func(t *testing.T) {
			ut, err := Parse(tc.tmpl)
			require.NoError(t, err)
			assert.Equal(t, tc.vars, ut.vars)
			assert.Equal(t, tc.greedy, ut.greedy)
		})
	}
}

// RFC 6570 refuses these (§2): the parser of the grammar alone refuses
// them, and so does the kit.
var rfcInvalidTemplates = []string{
	"x://{id",            // unclosed
	"x://id}",            // stray '}'
	"x://{}",             // empty expression
	"x://{+}",            // operator without a variable
	"x://{{a}}",          // nested
	"x://{a{b}",          // '{' inside an expression
	"x:// {a}",           // space in a literal
	"x://<{a}>",          // forbidden literal characters
	"x://\"{a}",          //
	"x://'{a}",           // (RFC 6570 §2.1 leaves out ', errata 6937 notwithstanding)
	"x://\\{a}",          //
	"x://^{a}",           //
	"x://`{a}",           //
	"x://|{a}",           //
	"x://%zz/{a}",        // broken triplet in a literal
	"x://%4/{a}",         //
	"x://\x01/{a}",       // control characters
	"x://\x7f/{a}",       //
	"x://\xc2\x85/{a}",   // C1 control character
	"x://\xff/{a}",       // invalid UTF-8
	"x://\ufdd0/{a}",     // a noncharacter, not ucschar
	"x://\ufffe/{a}",     //
	"x://\U0001fffe/{a}", //
	"x://\U000e0001/{a}", // tag characters are not ucschar
	"{/id*",              // the negative tests of the RFC 6570 test suite
	"/id*}",
	"{/?id}",
	"{var:prefix}",
	"{hello:2*}",
	"{??hello}",
	"{!hello}",
	"{with space}",
	"{ leading_space}",
	"{trailing_space }",
	"{=path}",
	"{$var}",
	"{|var*}",
	"{*keys?}",
	"{?empty=default,var}",
	"{var}{-prefix|/-/|var}",
	"?q={searchTerms}&amp;c={example:color?}",
	"x{?empty|foo=none}",
	"/h{#hello+}",
	"/h#{hello+}",
	"?{-join|&|var,list}",
	"/people/{~thing}",
	"/{default-graph-uri}",
	"/sparql{?query){&default-graph-uri*}",
	"/resolution{?x, y}",
	"{var:0}",
	"{var:01}",
	"{var:10000}",
	"{var:}",
	"{x.}",
	"{.x.}",
	"{x..y}",
	"{%2x}",
	"{%}",
	"{x,}",
	"{,x}",
	"{@x}", "{|x}", "{!x}", "{=x}", // operators reserved for the future
	"{x*:3}",
	"{x:3*}",
	"{x**}",
	"{x:1:2}",
	"{a-b}",
	"{a b}",
	"{é}",
}

// RFC 6570 accepts these; the kit refuses them (see Template.check).
var kitRefusedTemplates = []string{
	"",                        // empty
	"x://{a}{b}",              // adjacent expressions: no trace of the boundary
	"x://{+a}{b}",             //
	"x://{/a}{b}",             //
	"x://{?a}{+b}",            //
	"x://{a}/{a}",             // a variable twice
	"x://{a,a}",               //
	"x://{?a}{&a}",            //
	"x://{a}%2F{b}",           // a triplet right after an expression
	"x://{+a}%41",             //
	strings.Repeat("a", 2049), // too long
	"x://{" + strings.Repeat("v,", 32) + "w}",
}

func TestParseTemplateRejects(t *testing.T) {
	for _, tmpl := range rfcInvalidTemplates {
		t.Run(tmpl, func(t *testing.T) {
			_, err := parseRFC6570(tmpl)
			assert.Error(t, err, "RFC 6570 grammar")
			_, err = Parse(tmpl)
			assert.Error(t, err)
			assert.False(t, rfc6570Grammar.MatchString(tmpl), "the test's own grammar agrees")
		})
	}
	for _, tmpl := range kitRefusedTemplates {
		t.Run(tmpl, func(t *testing.T) {
			_, err := parseRFC6570(tmpl)
			if len(tmpl) <= 2048 {
				assert.NoError(t, err, "RFC 6570 accepts it")
			}
			_, err = Parse(tmpl)
			assert.Error(t, err)
		})
	}
}

// m builds the expected variables of a match.
func m(kv ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// The matching rules, operator by operator (nil: no match).
func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		tmpl, uri string
		want      map[string]string
	}{
		// {x}: unreserved characters and pct-encoded triplets, at least one.
		{"docs://documents/{id}", "docs://documents/42", m("id", "42")},
		{"docs://documents/{id}", "docs://documents/a-b.c_d~e", m("id", "a-b.c_d~e")},
		{"docs://documents/{id}", "docs://documents/", nil},    // not empty
		{"docs://documents/{id}", "docs://documents/a/b", nil}, // '/' is reserved
		{"docs://documents/{id}", "docs://documents/a?b", nil}, //
		{"docs://documents/{id}", "docs://documents/a#b", nil}, //
		{"docs://documents/{id}", "docs://documents/a:b", nil}, // RFC 6570 encodes every reserved character
		{"docs://documents/{id}", "docs://documents/a,b", nil}, // (',' only from a list)
		{"docs://documents/{id}", "docs://documents/a+b", nil}, //
		{"docs://documents/{id}", "docs://documents/a=b", nil}, //
		{"docs://documents/{id}", "docs://documents/a%20b", m("id", "a b")},
		{"docs://documents/{id}", "docs://documents/a b", nil},
		{"docs://documents/{id}", "docs://documents/a%2Fb", m("id", "a/b")}, // decoded
		{"docs://documents/{id}", "docs://documents/a%3Ab", m("id", "a:b")},
		{"docs://documents/{id}", "docs://documents/a%2", nil},  // broken triplet
		{"docs://documents/{id}", "docs://documents/a%zz", nil}, //
		{"docs://documents/{id}", "docs://documents/caf%C3%A9", m("id", "café")},
		{"docs://documents/{id}", "docs://documents/caf%c3%a9", m("id", "café")}, // hex case: equivalent
		{"docs://documents/{id}", "docs://documents/%41%2d", m("id", "A-")},      // encoded unreserved: equivalent
		{"docs://documents/{id}", "docs://documents/%F0%9F%98%80", m("id", "😀")}, //
		{"docs://documents/{id}", "docs://documents/%00", m("id", "\x00")},       // a character like any
		{"docs://documents/{id}", "docs://documents/%FF", nil},                   // not UTF-8: no value expands to it
		{"docs://documents/{id}", "docs://documents/%C3", nil},                   // truncated character
		{"docs://documents/{id}", "docs://documents/%C3%28", nil},                // bad continuation
		{"docs://documents/{id}", "docs://documents/%C0%AF", nil},                // overlong
		{"docs://documents/{id}", "docs://documents/%E0%80%AF", nil},             //
		{"docs://documents/{id}", "docs://documents/%ED%A0%80", nil},             // surrogate
		{"docs://documents/{id}", "docs://documents/%F4%90%80%80", nil},          // beyond U+10FFFF
		{"docs://documents/{id}", "docs://documents/%80", nil},                   // lone continuation byte
		{"docs://documents/{id}", "DOCS://documents/1", nil},                     // literals are exact
		{"docs://documents/{id}", "docs://documents/caf\u00e9", nil},             // raw non-ASCII: send it encoded
		{"x://caf%C3%A9/{id}", "x://caf%c3%a9/1", nil},                           // literals are exact, triplets too
		{"x://{a}-{b}", "x://1-2-3", m("a", "1", "b", "2-3")},                    // shortest first
		{"x://{name}.{ext}", "x://archive.tar.gz", m("name", "archive", "ext", "tar.gz")},
		{"x://{p}:{q}", "x://a:b", m("p", "a", "q", "b")},
		{"x://{x*}", "x://a", m("x", "a")}, // explode changes nothing for a string
		{"x://{x*}", "x://a,b", nil},       // a list is not a value
		// {x,y}: every variable, in order.
		{"x://{x,y}", "x://1,2", m("x", "1", "y", "2")},
		{"x://{x,y}", "x://1", nil},
		{"x://{x,y}", "x://1,", nil},
		{"x://{x,y}", "x://,2", nil},
		{"x://{x,y}", "x://1,2,3", nil},
		{"x://{x,y}", "x://1%2C2,3", m("x", "1,2", "y", "3")},
		// {x:N}: at most N characters (of the decoded value).
		{"x://{x:3}", "x://abc", m("x", "abc")},
		{"x://{x:3}", "x://abcd", nil},
		{"x://{x:3}", "x://%C3%A9%C3%A9%C3%A9", m("x", "ééé")},
		{"x://{x:3}", "x://%C3%A9%C3%A9%C3%A9%C3%A9", nil},
		{"x://{x:3}", "x://a%2Fb", m("x", "a/b")},
		{"x://{x:2}.{y}", "x://ab.c.d", m("x", "ab", "y", "c.d")},
		{"x://{x:1}{/y}", "x://a/b", m("x", "a", "y", "b")},
		// {+x}: also reserved characters raw; no triplet of a reserved character.
		{"file:///{+path}", "file:///a/b/c.txt", m("path", "a/b/c.txt")},
		{"file:///{+path}", "file:///a/b?c#d", m("path", "a/b?c#d")},
		{"file:///{+path}", "file:///[::1]:80/@!$&'()*+,;=", m("path", "[::1]:80/@!$&'()*+,;=")},
		{"file:///{+path}", "file:///a%20b", m("path", "a b")},
		{"file:///{+path}", "file:///a%2Fb", nil}, // RFC 6570 leaves '/' raw in {+x}: %2F only from a value holding "%2F"
		{"file:///{+path}", "file:///a%3fb", nil}, //
		{"file:///{+path}", "file:///a%41", m("path", "aA")},
		{"file:///{+path}", "file:///50%25", m("path", "50%")},
		{"file:///{+path}", "file:///50%25.txt", m("path", "50%.txt")},
		{"file:///{+path}", "file:///%254", m("path", "%4")},
		{"file:///{+path}", "file:///%254g", m("path", "%4g")},
		{"file:///{+path}", "file:///%2541", nil},     // %41 of the value would have been copied, not encoded
		{"file:///{+path}", "file:///%25%34%31", nil}, // (the same, encoded)
		{"file:///{+path}", "file:///%25%25", m("path", "%%")},
		{"file:///{+path}", "file:///a%", nil},
		{"x://{+p}/end", "x://a/b/end", m("p", "a/b")},
		{"x://{+p}/end", "x://a/b/end/end", m("p", "a/b/end")},
		{"x://{+p}/end", "x:///end", nil},
		{"x://{+p}/end", "x:////end", m("p", "/")},
		{"x://{+p}/end", "x:///end/", nil},
		{"x://{+x,y}", "x://a,b,c", m("x", "a", "y", "b,c")},
		{"x://{+x:2}", "x://a/", m("x", "a/")},
		{"x://{+x:2}", "x://a/b", nil},
		{"repo://{o}/{r}/blob/{+path}", "repo://me/kit/blob/src/a.go", m("o", "me", "r", "kit", "path", "src/a.go")},
		// {#x}: "#" then the values, each may be empty or absent.
		{"x://a{#f}", "x://a", m()},
		{"x://a{#f}", "x://a#", m("f", "")},
		{"x://a{#f}", "x://a#b/c?d#e", m("f", "b/c?d#e")},
		{"x://a{#f}", "x://a#b%2Fc", nil},
		{"x://a{#x,y}", "x://a#1,2", m("x", "1", "y", "2")},
		{"x://a{#x,y}", "x://a#1", m("x", "1")},
		{"x://a{#x,y}", "x://a#,2", m("x", "", "y", "2")},
		{"x://a{#x,y}", "x://a#1,2,3", m("x", "1", "y", "2,3")},
		// {.x}: labels.
		{"x://a{.ext}", "x://a.json", m("ext", "json")},
		{"x://a{.ext}", "x://a", m()},
		{"x://a{.ext}", "x://a.", m("ext", "")},
		{"x://a{.ext}", "x://a.tar.gz", m("ext", "tar.gz")},
		{"x://a{.x,y}", "x://a.1.2", m("x", "1", "y", "2")},
		{"x://a{.x,y}", "x://a.1.2.3", m("x", "1", "y", "2.3")},
		{"x://a{.x,y}", "x://a..2", m("x", "", "y", "2")},
		{"x://a{.ext}", "x://a.j/s", nil},
		// {/x}: path segments.
		{"x://a{/id}", "x://a/1", m("id", "1")},
		{"x://a{/id}", "x://a", m()},
		{"x://a{/id}", "x://a/", m("id", "")},
		{"x://a{/id}", "x://a/1/2", nil},
		{"x://a{/id}", "x://a/1%2F2", m("id", "1/2")},
		{"x://a{/p*}", "x://a/b/c", nil}, // explode: still one string
		{"x://a{/x,y}", "x://a/1/2", m("x", "1", "y", "2")},
		{"x://a{/x,y}", "x://a/1", m("x", "1")},
		{"x://a{/x,y}", "x://a//2", m("x", "", "y", "2")},
		{"x://a{/x,y}", "x://a/1/2/3", nil},
		{"x://a{/x,y}{/z}", "x://a/1/2", m("x", "1", "y", "2")},             // a list goes on rather than ends
		{"x://a{/x,y}{/z}", "x://a/1/2/3", m("x", "1", "y", "2", "z", "3")}, //
		{"x://a{/x,y}/z", "x://a/1/z", m("x", "1")},                         // "/z" is the literal
		// {;x}: path-style parameters, in template order, each at most once.
		{"x://a{;p,q}", "x://a;p=1;q=2", m("p", "1", "q", "2")},
		{"x://a{;p,q}", "x://a;q=2", m("q", "2")},
		{"x://a{;p,q}", "x://a;p", m("p", "")},
		{"x://a{;p,q}", "x://a;p;q", m("p", "", "q", "")},
		{"x://a{;p,q}", "x://a", m()},
		{"x://a{;p,q}", "x://a;p=", nil}, // an empty value is ";p"
		{"x://a{;p,q}", "x://a;q=2;p=1", nil},
		{"x://a{;p,q}", "x://a;p=1;p=2", nil},
		{"x://a{;p,q}", "x://a;r=1", nil},
		{"x://a{;p,q}", "x://a;p=1;", nil},
		{"x://a{;p,q}", "x://a;", nil},
		{"x://a{;x,xy}", "x://a;xy=1", m("xy", "1")},
		{"x://a{;x,xy}", "x://a;x;xy", m("x", "", "xy", "")},
		// {?x}: query parameters, in template order, each at most once.
		{"x://s{?q,r}", "x://s?q=1&r=2", m("q", "1", "r", "2")},
		{"x://s{?q,r}", "x://s?r=2", m("r", "2")},
		{"x://s{?q,r}", "x://s?q=", m("q", "")},
		{"x://s{?q,r}", "x://s?q=&r=", m("q", "", "r", "")},
		{"x://s{?q,r}", "x://s", m()},
		{"x://s{?q,r}", "x://s?q", nil}, // an empty value is "q="
		{"x://s{?q,r}", "x://s?r=2&q=1", nil},
		{"x://s{?q,r}", "x://s?q=1&q=2", nil},
		{"x://s{?q,r}", "x://s?q=1&z=3", nil},
		{"x://s{?q,r}", "x://s?z=3", nil},
		{"x://s{?q,r}", "x://s?", nil},
		{"x://s{?q,r}", "x://s?q=1&", nil},
		{"x://s{?q,r}", "x://s&q=1", nil},
		{"x://s{?q,r}", "x://s?Q=1", nil},
		{"x://s{?q,r}", "x://s?q=a%20b", m("q", "a b")},
		{"x://s{?q,r}", "x://s?q=a+b", nil}, // '+' is not a space here, and not a value byte
		{"x://s{?q,r}", "x://s?q=a%2Bb", m("q", "a+b")},
		{"x://s{?q,r}", "x://s?q=a%26r%3D2", m("q", "a&r=2")},
		{"x://s{?q,r}", "x://s?q=a=b", nil},
		{"x://s{?q,r}", "x://s?q=a%3Db", m("q", "a=b")},
		{"x://s{?q:2}", "x://s?q=ab", m("q", "ab")},
		{"x://s{?q:2}", "x://s?q=abc", nil},
		{"x://s{?a.b,%41}", "x://s?a.b=1&%41=2", m("a.b", "1", "%41", "2")},
		{"x://s{?a.b,%41}", "x://s?a.b=1&A=2", nil}, // names are exact
		// {&x}: continuation.
		{"x://s?fixed=1{&q}", "x://s?fixed=1&q=2", m("q", "2")},
		{"x://s?fixed=1{&q}", "x://s?fixed=1", m()},
		{"x://s?fixed=1{&q}", "x://s?fixed=1&q", nil},
		{"x://s{?q}{&r}", "x://s?q=1&r=2", m("q", "1", "r", "2")},
		{"x://s{?q}{&r}", "x://s&r=2", m("r", "2")},
		// Several expressions.
		{"docs://documents{/id}{?tag,sort}", "docs://documents", m()},
		{"docs://documents{/id}{?tag,sort}", "docs://documents/7?sort=new", m("id", "7", "sort", "new")},
		{"docs://documents{/id}{?tag,sort}", "docs://documents?tag=go&sort=new", m("tag", "go", "sort", "new")},
		{"docs://documents{/id}{?tag,sort}", "docs://documents?sort=new&tag=go", nil},
		{"x://{a}{.b}", "x://a.b.c", m("a", "a", "b", "b.c")},
		{"x://{+a}{/b}", "x://a/b/c", m("a", "a/b", "b", "c")}, // a ends as early as the rest allows
		{"docs://all", "docs://all", m()},
		{"docs://all", "docs://all/", nil},
	} {
		t.Run(tc.tmpl+" "+tc.uri, func(t *testing.T) {
			ut, err := Parse(tc.tmpl)
			require.NoError(t, err)
			got, ok := ut.Params(tc.uri)
			assert.Equal(t, tc.want != nil, ok, "match")
			assert.Equal(t, tc.want != nil, ut.Matches(tc.uri), "matches")
			if tc.want != nil {
				assert.Equal(t, tc.want, got)
			}
		})
	}
}

// TestGreedyAgreesWithDP checks the fast path against the general one.
func TestGreedyAgreesWithDP(t *testing.T) {
	for _, tmpl := range []string{"repo://{owner}/{repo}/blob/{+path}", "docs://documents/{id}", "x://{p}:{q}"} {
		ut, err := Parse(tmpl)
		require.NoError(t, err)
		require.True(t, ut.greedy)
		for _, uri := range []string{
			"repo://a/b/blob/c", "repo://a/b/blob/", "repo://a//blob/c", "repo://a/b/blob/c/d%20e",
			"repo://a%2/b/blob/c", "repo://a/b/blobc", "repo://", "repo://a/b/blob/c?x", "repo://a/b/blob/%2541",
			"repo://a/b/blob/%254", "repo://%C3%A9/b/blob/%F0%9F%98%80", "repo://%FF/b/blob/c", "repo://a/b/blob/%2F",
			"docs://documents/a", "docs://documents/%41", "docs://documents/a:b", "x://a:b", "x://a:b:c", "x://:b",
		} {
			g := make([]string, len(ut.vars))
			d := make([]string, len(ut.vars))
			okG := ut.matchGreedy(uri, g)
			present, okD := ut.matchDP(uri, d)
			assert.Equal(t, okD, okG, uri)
			if okG {
				assert.Equal(t, d, g, uri)
				assert.Equal(t, uint64(1)<<len(ut.vars)-1, present, uri)
			}
		}
	}
}

func TestMatchLimitsLength(t *testing.T) {
	for _, tmpl := range []string{"x://{+p}", "x://{?p}"} {
		ut, err := Parse(tmpl)
		require.NoError(t, err)
		u := strings.TrimSuffix(tmpl, "{+p}")
		if strings.HasSuffix(tmpl, "{?p}") {
			u = "x://?p="
		}
		assert.True(t, ut.Matches(u+strings.Repeat("a", MaxLen-len(u))), tmpl)
		assert.False(t, ut.Matches(u+strings.Repeat("a", MaxLen-len(u)+1)), tmpl)
	}
	// A prefix modifier beyond what a URI can hold is no limit.
	ut, err := Parse("x://{p:9999}")
	require.NoError(t, err)
	assert.True(t, ut.Matches("x://"+strings.Repeat("a", MaxLen-4)))
}

func TestExpand(t *testing.T) {
	for _, tc := range []struct {
		tmpl string
		vals map[string]string
		want string
		back map[string]string // what matching gives back, when not vals
	}{
		{"docs://documents/{id}", m("id", "a b/c"), "docs://documents/a%20b%2Fc", nil},
		{"docs://documents/{id}", m("id", "a:b@c"), "docs://documents/a%3Ab%40c", nil},
		{"file:///{+path}", m("path", "a b/c"), "file:///a%20b/c", nil},
		{"file:///{+path}", m("path", "a?b#c[d]"), "file:///a?b#c[d]", nil},
		{"file:///{+path}", m("path", "50%"), "file:///50%25", nil},
		{"x://{a}-{b}", m("a", "1-2", "b", "3-4"), "x://1%2D2-3-4", nil},           // '-' can start what follows a
		{"x://{name}.{ext}", m("name", "a.b", "ext", "c.d"), "x://a%2Eb.c.d", nil}, //
		{"x://{a}{.b}", m("a", "a.b", "b", "c.d"), "x://a%2Eb.c.d", nil},           // (the next expression's '.')
		{"x://a{.x,y}", m("x", "1.2", "y", "3.4"), "x://a.1%2E2.3.4", nil},         // (the separator)
		{"x://{a}", m("a", "100%"), "x://100%25", nil},
		{"x://{a}", m("a", "é"), "x://%C3%A9", nil},
		{"x://{a}", m("a", "x", "other", "ignored"), "x://x", m("a", "x")},
		{"x://{a:2}", m("a", "éèê"), "x://%C3%A9%C3%A8", m("a", "éè")}, // prefixes count characters
		{"x://{x*}", m("x", "a,b"), "x://a%2Cb", nil},                  // a string: explode changes nothing
		{"docs://documents{?tag}", m(), "docs://documents", nil},
		{"docs://documents{?tag}", m("tag", ""), "docs://documents?tag=", nil},
		{"docs://documents{?tag}", m("tag", "a b&c=d"), "docs://documents?tag=a%20b%26c%3Dd", nil},
		{"x://s{?q,r}", m("r", "2"), "x://s?r=2", nil},
		{"x://s{;p,q}", m("p", "", "q", "1"), "x://s;p;q=1", nil},
		{"x://s?fixed=1{&q}", m("q", "2"), "x://s?fixed=1&q=2", nil},
		{"x://a{/x,y}", m("x", "1/2"), "x://a/1%2F2", nil},
		{"x://a{/x,y}", m("x", "", "y", ""), "x://a//", nil},
		{"x://a{#f}", m("f", "b/c?d"), "x://a#b/c?d", nil},
		{"docs://documents{/id}{?tag,sort}", m("id", "7", "sort", "new"), "docs://documents/7?sort=new", nil},
	} {
		t.Run(tc.tmpl, func(t *testing.T) {
			got, err := expandString(tc.tmpl, tc.vals)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			ut, err := Parse(tc.tmpl)
			require.NoError(t, err)
			back, ok := ut.Params(got)
			require.True(t, ok)
			want := tc.back
			if want == nil {
				want = tc.vals
			}
			assert.Equal(t, want, back)
		})
	}
	for _, tc := range []struct {
		tmpl string
		vals map[string]string
		why  string
	}{
		{"x://{a}", m(), "a missing value of {a}"},
		{"x://{a}", m("a", ""), "an empty value of {a}"},
		{"x://{+a}", m("a", ""), "an empty value of {+a}"},
		{"x://{a,b}", m("a", "1"), "every variable of a list"},
		{"x://{a}", m("a", "\xff"), "a value that is not UTF-8"},
		{"x://{+a}", m("a", "%41"), "a triplet RFC 6570 would copy"},
		{"x://a{#a}", m("a", "x%2Fy"), "a triplet RFC 6570 would copy"},
		{"x://a{/x,y}", m("y", "2"), "reads back as x"},
		{"x://{+a}/{+b}", m("a", "1/2", "b", "3"), "reads back split at the first '/'"},
		{"x://{+a,b}", m("a", "1,2", "b", "3"), "reads back split at the first ','"},
		{"x://{a}", m("a", strings.Repeat("a", 2048)), "longer than 2048"},
		{"x://{a}{b}", m("a", "1", "b", "2"), "a template New refuses"},
		{"x://{a", m("a", "1"), "not a template"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			_, err := expandString(tc.tmpl, tc.vals)
			assert.Error(t, err)
		})
	}
}

// A value's pct-encoded characters are the UTF-8 that Go accepts: every
// lead byte against every first continuation byte, with valid and invalid
// further ones.
func TestValueUnitsAreUTF8(t *testing.T) {
	const hex = "0123456789ABCDEF"
	enc := func(bs ...byte) string {
		var b []byte
		for _, c := range bs {
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
		return string(b)
	}
	rest := []byte{0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0}
	for b0 := 0x80; b0 < 0x100; b0++ {
		for b1 := 0; b1 < 0x100; b1++ {
			for _, b2 := range rest {
				for _, b3 := range rest {
					seq := []byte{byte(b0), byte(b1), b2, b3}
					_, size := utf8.DecodeRune(seq)
					valid := size > 1
					u, _ := unitAt(enc(seq...), 0, false)
					require.Equal(t, valid, u > 0, "% x", seq)
					if valid {
						require.Equal(t, 3*size, u, "% x", seq)
					}
				}
			}
		}
	}
}

// expandString is inventory.Expand: parse, then expand.
func expandString(tmpl string, values map[string]string) (string, error) {
	t, err := Parse(tmpl)
	if err != nil {
		return "", err
	}
	return t.Expand(values)
}
