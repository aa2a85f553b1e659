package uritemplate

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// rfc6570Grammar is the grammar of RFC 6570 §2 written as a regular
// expression, independently of the parser: the oracle of
// FuzzParseTemplate.
var rfc6570Grammar = func() *regexp.Regexp {
	const (
		pct     = `%[0-9A-Fa-f]{2}`
		ucs     = `\x{A0}-\x{D7FF}\x{F900}-\x{FDCF}\x{FDF0}-\x{FFEF}\x{10000}-\x{1FFFD}\x{20000}-\x{2FFFD}\x{30000}-\x{3FFFD}\x{40000}-\x{4FFFD}\x{50000}-\x{5FFFD}\x{60000}-\x{6FFFD}\x{70000}-\x{7FFFD}\x{80000}-\x{8FFFD}\x{90000}-\x{9FFFD}\x{A0000}-\x{AFFFD}\x{B0000}-\x{BFFFD}\x{C0000}-\x{CFFFD}\x{D0000}-\x{DFFFD}\x{E1000}-\x{EFFFD}`
		private = `\x{E000}-\x{F8FF}\x{F0000}-\x{FFFFD}\x{100000}-\x{10FFFD}`
		literal = `(?:[\x21\x23\x24\x26\x28-\x3B\x3D\x3F-\x5B\x5D\x5F\x61-\x7A\x7E` + ucs + private + `]|` + pct + `)`
		varchar = `(?:[A-Za-z0-9_]|` + pct + `)`
		varname = varchar + `(?:\.?` + varchar + `)*`
		varspec = varname + `(?::[1-9][0-9]{0,3}|\*)?`
		expr    = `\{[+#./;?&]?` + varspec + `(?:,` + varspec + `)*\}`
	)
	return regexp.MustCompile(`^(?:` + literal + `|` + expr + `)*$`)
}()

// FuzzParseTemplate: parsing any string never panics; the RFC 6570
// parser accepts exactly what the grammar does, and the kit's parser
// accepts nothing the grammar refuses.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{
		"docs://documents/{id}", "x://{/list*,path:4}{?q,r}{&s}", "{;x,y}{#f}", "x{.a.b,%41:9999}",
		"{var:10000}", "{x..y}", "{a}{b}", "x://\u00e9{+p}", "{@x}", "%4", "{", "}", "x://\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 256 {
			return // short inputs keep minimizing quick; long templates have unit tests
		}
		_, rfcErr := parseRFC6570(s)
		if grammar := rfc6570Grammar.MatchString(s); grammar != (rfcErr == nil) {
			t.Fatalf("%q: grammar %v, parser error %v", s, grammar, rfcErr)
		}
		ut, err := Parse(s)
		if err != nil {
			return
		}
		if rfcErr != nil {
			t.Fatalf("%q accepted but not RFC 6570: %v", s, rfcErr)
		}
		// What New accepts it also expands and matches without panicking.
		_, _ = ut.Expand(map[string]string{})
		_ = ut.Matches(s)
	})
}

// normalizeURI applies the equivalences of RFC 3986 §6.2.2.1 and
// §6.2.2.2: hexadecimal digits of triplets in upper case, triplets of
// unreserved characters decoded.
func normalizeURI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c, ok := triplet(s, i); ok {
			if charClass[c]&clU != 0 {
				b.WriteByte(c)
			} else {
				b.WriteString(strings.ToUpper(s[i : i+3]))
			}
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// reexpand expands t by RFC 6570 (without the kit's encoding of stop
// bytes) with the variables params holds, the others undefined.
func reexpand(t *testing.T, ut *Template, params map[string]string) string {
	t.Helper()
	b, err := ut.appendExpansion(nil, func(name string) value {
		if s, ok := params[name]; ok {
			return value{kind: vString, s: s}
		}
		return value{}
	}, false)
	if err != nil {
		t.Fatalf("expand %v into %q: %v", params, ut.raw, err)
	}
	return string(b)
}

// FuzzURITemplate: for templates the kit accepts,
//   - matching never panics, and the greedy matcher agrees with the
//     general one;
//   - strictness: the values any matching URI gives expand back (by
//     RFC 6570) to that URI, up to RFC 3986 normalization;
//   - expand-then-match: Expand's URI matches back to exactly the values
//     (cut to prefix modifiers), and Expand succeeds for every template
//     without {+x} or {#x} given a value for each variable;
//   - completeness: RFC 6570's own expansion of values the kit serves
//     (UTF-8; non-empty for {x} and {+x}; no triplet in {+x} and {#x})
//     matches.
//
// Complexity: four properties of one fuzz input, checked in sequence on the same parsed template.
//
//gocyclo:ignore
func FuzzURITemplate(f *testing.F) {
	f.Add("docs://documents/{id}", "docs://documents/a%2Fb", "a/b", "x")
	f.Add("file:///{+path}", "file:///a/b/c", "dir/file name.txt", "")
	f.Add("x://{a}-{b}", "x://1-2-3", "1-2", "3-4")
	f.Add("x://{name}.{ext}", "x://a.b.c", "a.b", "c")
	f.Add("repo://{o}/{r}/blob/{+p}", "repo://me/kit/blob/x/y", "m e", "%%")
	f.Add("x://{+p}/end", "x://a/end/end", "a/end", "z")
	f.Add("x://{a}%2F", "x://1%2F", "1", "")
	f.Add("{a}", "a", "\x00\xff", "")
	f.Add("docs://documents{/id}{?tag,sort}", "docs://documents/1?sort=a", "é", "a&b=c")
	f.Add("x://{.x,y}{;p,q:2}{#f}", "x://.a.b;q=xy#f,g", ".", ";=")
	f.Add("x://s?fixed=1{&q,r*}", "x://s?fixed=1&r=%25", "50%", "%41")
	f.Add("x://{+x,y}/{z:1}", "x://a,b/c", "a,b", "ç")
	f.Fuzz(func(t *testing.T, tmpl, uri, v1, v2 string) {
		if len(tmpl) > 128 || len(uri) > 256 || len(v1) > 64 || len(v2) > 64 {
			return // short inputs keep minimizing quick
		}
		ut, err := Parse(tmpl)
		if err != nil {
			return
		}
		vals := make([]string, len(ut.vars))
		present, ok := ut.match(uri, vals)
		if ut.greedy {
			dp := make([]string, len(ut.vars))
			if dpPresent, okDP := ut.matchDP(uri, dp); okDP != ok {
				t.Fatalf("greedy %v, DP %v for %q on %q", ok, okDP, uri, tmpl)
			} else if ok && (strings.Join(dp, "\x00") != strings.Join(vals, "\x00") || dpPresent != present) {
				t.Fatalf("greedy %q, DP %q for %q on %q", vals, dp, uri, tmpl)
			}
		}
		if ok {
			// A plain template's URIs are copied into JSON unescaped.
			if ut.plain && string(jsonstrict.AppendString(nil, uri)) != `"`+uri+`"` {
				t.Fatalf("%q matches plain %q but needs escaping", uri, tmpl)
			}
			params, _ := ut.Params(uri)
			if back := reexpand(t, ut, params); normalizeURI(back) != normalizeURI(uri) {
				t.Fatalf("%q matches %q as %q, which expands to %q", uri, tmpl, params, back)
			}
		}

		in := make(map[string]string, len(ut.vars))
		for i, name := range ut.vars {
			v := v1
			if i%2 == 1 {
				v = v2
			}
			in[name] = strings.ToValidUTF8(v, "?") + strings.Repeat("y", i)
		}
		reserved := false
		for _, p := range ut.parts {
			if p.expr != nil {
				for _, v := range p.expr.vars {
					if p.expr.op.first == "" && in[v.name] == "" {
						in[v.name] = "x"
					}
				}
				reserved = reserved || p.expr.op.reserved
			}
		}
		u, err := ut.Expand(in)
		switch {
		case err == nil:
			back, ok := ut.Params(u)
			if !ok {
				t.Fatalf("expanded %q does not match %q", u, tmpl)
			}
			for _, p := range ut.parts {
				if p.expr == nil {
					continue
				}
				for _, v := range p.expr.vars {
					if back[v.name] != cut(in[v.name], v.prefix) {
						t.Fatalf("%q on %q: %s = %q, want %q", u, tmpl, v.name, back[v.name], cut(in[v.name], v.prefix))
					}
				}
			}
		case !reserved && !strings.Contains(err.Error(), "longer than"):
			t.Fatalf("expand %q with %q: %v", tmpl, in, err)
		}

		// RFC 6570's expansion, once values the kit cannot serve are left out.
		for _, p := range ut.parts {
			if p.expr != nil && p.expr.op.reserved {
				for _, v := range p.expr.vars {
					if holdsTriplet(in[v.name]) {
						in[v.name] = strings.ReplaceAll(in[v.name], "%", "_")
					}
				}
			}
		}
		u = reexpand(t, ut, in)
		if longer(u, MaxLen) {
			return
		}
		params, ok := ut.Params(u)
		if !ok {
			t.Fatalf("RFC 6570 expands %q with %q to %q, which does not match", tmpl, in, u)
		}
		if back := reexpand(t, ut, params); normalizeURI(back) != normalizeURI(u) {
			t.Fatalf("%q matches %q as %q, which expands to %q", u, tmpl, params, back)
		}
	})
}

// FuzzTemplateOverlap: a reported witness matches both templates; when no
// overlap is reported, URIs built from one template never match the other.
func FuzzTemplateOverlap(f *testing.F) {
	f.Add("docs://documents/{id}", "docs://{kind}/readme", "a")
	f.Add("file:///{+path}", "file:///{dir}/{name}", "a/b")
	f.Add("x://{a}-{b}", "x://{c}", "-")
	f.Add("x://{a}.json", "x://{b}.xml", "q")
	f.Add("docs://documents{?tag}", "docs://documents{/id}", "")
	f.Add("x://{a:3}", "x://abcd", "é")
	f.Add("x://s{?q,r}", "x://s?r={r}", "1")
	f.Add("x://{+a}", "x://%2541", "%")
	f.Fuzz(func(t *testing.T, a, b, v string) {
		ta, err := Parse(a)
		if err != nil || len(a) > 64 {
			return
		}
		tb, err := Parse(b)
		if err != nil || len(b) > 64 {
			return
		}
		w, ok := Overlap(ta, tb, OverlapBudget)
		if ok {
			if w != "" && (!ta.Matches(w) || !tb.Matches(w)) {
				t.Fatalf("witness %q does not match both %q and %q", w, a, b)
			}
			return
		}
		v = strings.ToValidUTF8(v, "")
		for _, pair := range [][2]*Template{{ta, tb}, {tb, ta}} {
			for _, val := range []string{v, "x", ""} {
				in := map[string]string{}
				for _, name := range pair[0].vars {
					in[name] = val
				}
				for _, u := range []string{reexpand(t, pair[0], in), reexpand(t, pair[0], nil)} {
					if pair[0].Matches(u) && pair[1].Matches(u) {
						t.Fatalf("no overlap reported, yet %q matches %q and %q", u, pair[0].raw, pair[1].raw)
					}
				}
			}
		}
	})
}

// FuzzSimpleShape: for templates of the simple shape (a literal, one
// {x}, a literal), the forced-split matcher agrees with the general one
// (matchDP) on whether a URI matches, on the value, and on its presence.
func FuzzSimpleShape(f *testing.F) {
	for _, s := range [][3]string{
		{"docs://documents/", "", "docs://documents/d0001"},
		{"docs://documents/", ".md", "docs://documents/d0001.md"},
		{"docs://documents/", ".md", "docs://documents/.md"},
		{"docs://documents/", ".md", "docs://documents/a.b.md"},
		{"", "/x", "%C3%A9/x"},
		{"x://", "-y", "x://a%2"},
		{"x://", "%2F", "x://1%2F"},
		{"x://", "", "x://%E2%82%AC%ZZ"},
		{"a", "a", "aa"},
		{"x://", "/", "x://ab/"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, prefix, suffix, uri string) {
		if len(prefix) > 64 || len(suffix) > 64 || len(uri) > 256 {
			return
		}
		ut, err := Parse(prefix + "{id}" + suffix)
		if err != nil {
			return
		}
		if !ut.simple {
			if !strings.ContainsAny(prefix+suffix, "{}") {
				t.Fatalf("%q is not simple", ut.raw)
			}
			return // the literals held expressions
		}
		vals, dp := make([]string, 1), make([]string, 1)
		present, ok := ut.match(uri, vals)
		dpPresent, okDP := ut.matchDP(uri, dp)
		if ok != okDP {
			t.Fatalf("simple %v, DP %v for %q on %q", ok, okDP, uri, ut.raw)
		}
		if ok && (vals[0] != dp[0] || present != dpPresent) {
			t.Fatalf("simple %q (%b), DP %q (%b) for %q on %q", vals[0], present, dp[0], dpPresent, uri, ut.raw)
		}
	})
}
