package inventory

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/inventory/internal/uritemplate"
	"github.com/mcpkit/mcpkit/principal"
)

// FuzzValidatePage: never panics, and a page it accepts really keeps the
// rules (checked here independently).
//
// Complexity: the independent oracle of every page rule, one check per rule.
//
//gocyclo:ignore
func FuzzValidatePage(f *testing.F) {
	f.Add("", 2, true, "k1", "docs://documents/1", "One", "", "k2", "docs://documents/2", "Two", "text/plain")
	f.Add("k1", 1, false, "k1", "docs://documents/1", "One", "", "k0", "docs://documents/1", "", "x")
	f.Add("", 0, true, "", "", "", "", "", "", "", "")
	f.Add("", 2, false, "k1", "docs://documents/1", "invoice_\u202Efdp.exe", "", "k2", "docs://documents/2", "a\u200Bb\U000E0041", "")
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
		ut, _ := uritemplate.Parse(tmpl.URITemplate)
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
			if !ut.Matches(e.URI) || len(e.URI) > 2048 || uris[e.URI] {
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
		var next string
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
			items := 0
			_, err := i.List(context.Background(), caller, cursor, func(*Item) bool { items++; return true })
			if err == nil {
				if cursor != "" && valid[i] != cursor {
					t.Fatalf("accepted a cursor it did not issue: %q", cursor)
				}
				if items == 0 {
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
