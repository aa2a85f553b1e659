package inventory

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/budget"
)

// FuzzURITemplate: parsing and matching never panic; the greedy matcher
// agrees with the general one; values expanded into a template match back
// to the same values.
func FuzzURITemplate(f *testing.F) {
	f.Add("docs://documents/{id}", "docs://documents/a%2Fb", "a/b", "x")
	f.Add("file:///{+path}", "file:///a/b/c", "dir/file name.txt", "")
	f.Add("x://{a}-{b}", "x://1-2-3", "1-2", "3-4")
	f.Add("x://{name}.{ext}", "x://a.b.c", "a.b", "c")
	f.Add("repo://{o}/{r}/blob/{+p}", "repo://me/kit/blob/x/y", "m e", "%%")
	f.Add("x://{+p}/end", "x://a/end/end", "a/end", "z")
	f.Add("x://{a}%2F", "x://1%2F", "1", "")
	f.Add("{a}", "a", "\x00\xff", "")
	f.Fuzz(func(t *testing.T, tmpl, uri, v1, v2 string) {
		ut, err := parseTemplate(tmpl)
		if err != nil {
			return
		}
		vals := make([]string, len(ut.vars))
		ok := ut.match(uri, vals)
		if ut.greedy {
			dp := make([]string, len(ut.vars))
			if okDP := ut.matchDP(uri, dp); okDP != ok {
				t.Fatalf("greedy %v, DP %v for %q on %q", ok, okDP, uri, tmpl)
			} else if ok && strings.Join(dp, "\x00") != strings.Join(vals, "\x00") {
				t.Fatalf("greedy %q, DP %q for %q on %q", vals, dp, uri, tmpl)
			}
		}
		if ok {
			for _, v := range vals {
				if v == "" {
					t.Fatalf("empty value matched in %q on %q", uri, tmpl)
				}
			}
			// A plain template's URIs are copied into JSON unescaped.
			if ut.plain && string(budget.AppendString(nil, uri)) != `"`+uri+`"` {
				t.Fatalf("%q matches plain %q but needs escaping", uri, tmpl)
			}
		}
		in := make(map[string]string, len(ut.vars))
		for i, name := range ut.vars {
			v := v1
			if i%2 == 1 {
				v = v2
			}
			if v == "" {
				v = "x"
			}
			in[name] = v + strings.Repeat("y", i)
		}
		u, err := ut.expand(in)
		if err != nil {
			t.Fatalf("expand: %v", err)
		}
		if longer(u, maxURILen) {
			return
		}
		back, ok := ut.params(u)
		if !ok {
			t.Fatalf("expanded %q does not match %q", u, tmpl)
		}
		for k, v := range in {
			if back[k] != v {
				t.Fatalf("%q on %q: %s = %q, want %q", u, tmpl, k, back[k], v)
			}
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
	f.Fuzz(func(t *testing.T, a, b, v string) {
		ta, err := parseTemplate(a)
		if err != nil || len(a) > 64 {
			return
		}
		tb, err := parseTemplate(b)
		if err != nil || len(b) > 64 {
			return
		}
		w, ok := overlap(ta, tb)
		if ok {
			if !ta.matches(w) || !tb.matches(w) {
				t.Fatalf("witness %q does not match both %q and %q", w, a, b)
			}
			return
		}
		if v == "" {
			v = "x"
		}
		for _, pair := range [][2]*uriTemplate{{ta, tb}, {tb, ta}} {
			in := map[string]string{}
			for _, name := range pair[0].vars {
				in[name] = v
			}
			if u, err := pair[0].expand(in); err == nil && pair[1].matches(u) {
				t.Fatalf("no overlap reported, yet %q matches %q and %q", u, pair[0].raw, pair[1].raw)
			}
		}
	})
}

// FuzzValidatePage: never panics, and a page it accepts really keeps the
// rules (checked here independently).
func FuzzValidatePage(f *testing.F) {
	f.Add("", 2, true, "k1", "docs://documents/1", "One", "", "k2", "docs://documents/2", "Two", "text/plain")
	f.Add("k1", 1, false, "k1", "docs://documents/1", "One", "", "k0", "docs://documents/1", "", "x")
	f.Add("", 0, true, "", "", "", "", "", "", "", "")
	f.Add("a", 5, false, "b c", "docs://notes/1", "\x00", "text/plain; charset=\"x\"", "\xff", "docs://documents/%zz", "é", "a/b;c=d")
	f.Fuzz(func(t *testing.T, after string, limit int, hasMore bool, k1, u1, n1, m1, k2, u2, n2, m2 string) {
		tmpl := &Template{Name: "documents", URITemplate: "docs://documents/{id}"}
		var p Page
		p.HasMore = hasMore
		if k1 != "" || u1 != "" {
			p.Entries = append(p.Entries, Entry{Key: k1, URI: u1, Name: n1, MIMEType: m1})
		}
		if k2 != "" || u2 != "" {
			p.Entries = append(p.Entries, Entry{Key: k2, URI: u2, Name: n2, MIMEType: m2})
		}
		req := ListRequest{After: after, Limit: limit}
		err := ValidatePage(tmpl, req, p)
		if err != nil {
			var ce *ContractError
			if !errors.As(err, &ce) {
				t.Fatalf("not a *ContractError: %v", err)
			}
			if ce.Entry >= len(p.Entries) || ce.Entry < -1 {
				t.Fatalf("entry index %d out of range", ce.Entry)
			}
			return
		}
		ut, _ := parseTemplate(tmpl.URITemplate)
		src := &registered{tmpl: *tmpl, ut: ut, end: []byte("}")}
		var plain plainNames
		if validatePage("documents", ut, req, p, &plain) != nil {
			t.Fatal("validatePage disagrees with ValidatePage")
		}
		for i, e := range p.Entries {
			// An accepted entry's encoding is JSON holding the entry, with
			// and without the fast paths.
			for _, fast := range []bool{plain.has(i), false} {
				var got struct{ URI, Name, MIMEType string }
				enc := appendEntry(nil, &e, src, fast)
				if err := json.Unmarshal(enc, &got); err != nil ||
					got.URI != e.URI || got.Name != e.Name || got.MIMEType != e.MIMEType {
					t.Fatalf("entry %+v encoded as %s (%v)", e, enc, err)
				}
			}
			if plain.has(i) != jsonPlain(e.Name) {
				t.Fatalf("name %q: plain %v", e.Name, plain.has(i))
			}
		}
		if len(p.Entries) > limit || hasMore && len(p.Entries) == 0 {
			t.Fatal("accepted a page breaking the size rules")
		}
		prev := after
		uris := map[string]bool{}
		for _, e := range p.Entries {
			if len(e.Key) < 1 || len(e.Key) > 256 || e.Key <= prev {
				t.Fatalf("accepted key %q after %q", e.Key, prev)
			}
			for i := 0; i < len(e.Key); i++ {
				if e.Key[i] < 0x21 || e.Key[i] > 0x7e {
					t.Fatalf("accepted key %q", e.Key)
				}
			}
			prev = e.Key
			if !ut.matches(e.URI) || len(e.URI) > 2048 || uris[e.URI] {
				t.Fatalf("accepted URI %q", e.URI)
			}
			uris[e.URI] = true
			if e.Name == "" || len(e.Name) > 512 || !utf8.ValidString(e.Name) || strings.ContainsFunc(e.Name, func(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }) {
				t.Fatalf("accepted name %q", e.Name)
			}
			if len(e.MIMEType) > 128 || strings.ContainsFunc(e.MIMEType, func(r rune) bool { return r < 0x20 || r >= 0x7f }) ||
				e.MIMEType != "" && !strings.Contains(e.MIMEType, "/") {
				t.Fatalf("accepted MIME type %q", e.MIMEType)
			}
		}
	})
}

// FuzzInventoryCursor: List never panics on any cursor, reports every bad
// one as a *CursorError, and accepts only cursors it issued.
func FuzzInventoryCursor(f *testing.F) {
	list := func(_ context.Context, req ListRequest) (Page, error) {
		if req.After >= "k3" {
			return Page{}, nil
		}
		next := "k" + string(rune('1'+len(req.After)/2))
		if req.After == "" {
			next = "k1"
		} else {
			next = "k" + string(req.After[1]+1)
		}
		return Page{Entries: []Entry{{Key: next, URI: "docs://documents/" + next, Name: next}}, HasMore: next < "k3"}, nil
	}
	tmpl := Template{Name: "documents", URITemplate: "docs://documents/{id}", Read: TextReader("text/plain", ""), List: list, Gates: []string{"g"}}
	gated, err := New(nil, []Template{tmpl}, Options{PageSize: 1, Gates: []Gate{{Name: "g", Policy: Authenticated}}})
	if err != nil {
		f.Fatal(err)
	}
	tmpl.Gates = nil
	inv, err := New(nil, []Template{tmpl}, Options{PageSize: 1})
	if err != nil {
		f.Fatal(err)
	}
	caller := &principal.Principal{Subject: "alice"}
	valid := map[*Inventory]string{} // the one cursor each issued
	for _, i := range []*Inventory{inv, gated} {
		c, _ := i.SealListPositionForTest(caller, 0, 0, "k1", i.sealer.Now())
		valid[i] = c
		f.Add(c)
	}
	f.Add("")
	f.Add("AQ")
	f.Add(strings.Repeat("A", 100))
	f.Fuzz(func(t *testing.T, cursor string) {
		for _, i := range []*Inventory{inv, gated} { // ungated, and gated (visibility in the binding)
			var page ResourcePage
			err := i.List(context.Background(), caller, PageRequest{Cursor: cursor}, &page)
			if err == nil {
				if cursor != "" && valid[i] != cursor {
					t.Fatalf("accepted a cursor it did not issue: %q", cursor)
				}
				if len(page.Resources) == 0 {
					t.Fatal("empty page")
				}
				continue
			}
			var ce *CursorError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *CursorError", err)
			}
		}
	})
}
