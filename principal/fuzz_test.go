package principal_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/principal"
)

// FuzzNew: New never panics, and what it accepts obeys the rules: the
// identifiers valid, the scopes sorted scope-tokens without duplicates,
// the same principal for the same set of scopes in any order.
func FuzzNew(f *testing.F) {
	f.Add("alice", "app", "b a b", "https://r.example/mcp")
	f.Add("al\x01ice", "", "", "")
	f.Add(strings.Repeat("😀", 129), "c", "x", "")
	f.Fuzz(func(t *testing.T, sub, client, scopes, aud string) {
		in := principal.Principal{Subject: sub, ClientID: client, Scopes: strings.Split(scopes, " "), Audience: aud}
		p, err := principal.New(in)
		if err != nil {
			return
		}
		if sub != "" && !principal.ValidIdentifier(p.Subject) || client != "" && !principal.ValidIdentifier(p.ClientID) {
			t.Fatalf("accepted an invalid identifier: %q %q", sub, client)
		}
		for i, s := range p.Scopes {
			if !principal.ValidScope(s) || i > 0 && p.Scopes[i-1] >= s {
				t.Fatalf("scopes not sorted scope-tokens: %q", p.Scopes)
			}
		}
		rev := slices.Clone(in.Scopes)
		slices.Reverse(rev)
		in.Scopes = rev
		q, err := principal.New(in)
		if err != nil || !slices.Equal(p.Scopes, q.Scopes) || string(p.AppendBinding(nil)) != string(q.AppendBinding(nil)) {
			t.Fatalf("another order gave another principal: %q vs %q", p.Scopes, q.Scopes)
		}
	})
}
