package principal_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/principal"
)

const jkt = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"

// The rules hold for every principal, whoever makes it (issue 20): a
// service's own middleware gets the same answer a verifier does.
func TestNewRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    principal.Principal
		ok   bool
		rule string // what the error names, for a refusal
	}{
		{"subject", principal.Principal{Subject: "alice"}, true, ""},
		{"no subject, client only", principal.Principal{ClientID: "svc"}, true, ""},
		{"audience only (a verified service token)", principal.Principal{Audience: "https://r.example/mcp"}, true, ""},
		{"256 UTF-16 units", principal.Principal{Subject: strings.Repeat("a", 256)}, true, ""},
		{"128 astral characters are 256 units", principal.Principal{Subject: strings.Repeat("😀", 128)}, true, ""},
		{"a thumbprint", principal.Principal{Subject: "a", DPoPThumbprint: jkt}, true, ""},
		// Attack rows: what a service's middleware could pass along.
		{"257 units", principal.Principal{Subject: strings.Repeat("a", 257)}, false, "Subject is longer than 256"},
		{"129 astral characters", principal.Principal{Subject: strings.Repeat("😀", 129)}, false, "Subject is longer than 256"},
		{"C0 control", principal.Principal{Subject: "al\x01ice"}, false, "Subject holds a control character"},
		{"DEL", principal.Principal{Subject: "al\x7fice"}, false, "Subject holds a control character"},
		{"C1 control", principal.Principal{Subject: "al\u0085ice"}, false, "Subject holds a control character"},
		{"NUL in the client", principal.Principal{ClientID: "c\x00"}, false, "ClientID holds a control character"},
		{"invalid UTF-8", principal.Principal{Subject: "a\xffb"}, false, "Subject is not valid UTF-8"},
		{"scope with a space", principal.Principal{Subject: "a", Scopes: []string{"read write"}}, false, "Scopes[0] is not an RFC 6749 scope-token"},
		{"scope with a quote", principal.Principal{Subject: "a", Scopes: []string{`re"ad`}}, false, "Scopes[0] is not an RFC 6749 scope-token"},
		{"empty scope", principal.Principal{Subject: "a", Scopes: []string{""}}, false, "Scopes[0] is not an RFC 6749 scope-token"},
		{"audience with a line break", principal.Principal{Subject: "a", Audience: "https://x\n"}, false, "Audience is not UTF-8 or holds a control character"},
		{"issuer with NUL", principal.Principal{Subject: "a", Issuer: "https://x\x00"}, false, "Issuer is not UTF-8 or holds a control character"},
		{"short thumbprint", principal.Principal{Subject: "a", DPoPThumbprint: jkt[:42]}, false, "DPoPThumbprint is not"},
		{"thumbprint with padding bits", principal.Principal{Subject: "a", DPoPThumbprint: jkt[:42] + "t"}, false, "DPoPThumbprint is not"},
		// The zero Principal names no caller: a service's middleware that
		// stored it made an anonymous request look signed in (issue 39).
		{"zero principal", principal.Principal{}, false, "Subject, ClientID and Audience are all empty"},
		{"scopes but nobody", principal.Principal{Scopes: []string{"read"}}, false, "Subject, ClientID and Audience are all empty"},
		{"empty scope at index 1", principal.Principal{Subject: "a", Scopes: []string{"read", ""}}, false, "Scopes[1]"},
		{"thumbprint not base64url", principal.Principal{Subject: "a", DPoPThumbprint: jkt[:41] + "+s"}, false, "DPoPThumbprint is not"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := principal.New(tc.p)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, principal.ErrInvalid)
				assert.Contains(t, err.Error(), tc.rule, "the error names the field and the rule")
			}
			_, err = principal.NewContext(context.Background(), tc.p)
			assert.Equal(t, tc.ok, err == nil, "NewContext agrees with New")
		})
	}
}

// Scopes are sorted once, in a slice of the principal's own: the caller's
// slice is not touched, and every order gives the same principal.
func TestNewSortsScopes(t *testing.T) {
	in := []string{"notes:write", "notes:read", "notes:write"}
	p, err := principal.New(principal.Principal{Subject: "a", Scopes: in})
	require.NoError(t, err)
	assert.Equal(t, []string{"notes:read", "notes:write"}, p.Scopes)
	assert.Equal(t, []string{"notes:write", "notes:read", "notes:write"}, in, "the caller's slice is not modified")
	q, err := principal.New(principal.Principal{Subject: "a", Scopes: []string{"notes:read", "notes:write"}})
	require.NoError(t, err)
	assert.Equal(t, p, q)
	empty, err := principal.New(principal.Principal{Subject: "a", Scopes: []string{}})
	require.NoError(t, err)
	assert.Nil(t, empty.Scopes, "no scopes is one value")
}

// HasScopes is right for any input, sorted or not (issue 20: a binary
// search over claim order refused notes:read to ["notes:write","notes:read"]).
func TestHasScopesAnyOrder(t *testing.T) {
	p := principal.Principal{Scopes: []string{"notes:write", "notes:read"}}
	assert.True(t, p.HasScopes("notes:read"))
	assert.True(t, p.HasScopes("notes:write", "notes:read"))
	assert.True(t, p.HasScopes())
	assert.False(t, p.HasScopes("notes:read", "admin"))
	assert.False(t, principal.Principal{}.HasScopes("x"))
}

func TestContext(t *testing.T) {
	_, ok := principal.FromContext(context.Background())
	assert.False(t, ok)
	ctx, err := principal.NewContext(context.Background(), principal.Principal{Subject: "alice", Scopes: []string{"b", "a"}})
	require.NoError(t, err)
	p, ok := principal.FromContext(ctx)
	require.True(t, ok)
	assert.Equal(t, []string{"a", "b"}, p.Scopes, "stored as New made it")
	bad, err := principal.NewContext(ctx, principal.Principal{Subject: "al\x01ice"})
	require.Error(t, err)
	assert.Equal(t, ctx, bad, "nothing stored for a principal that breaks the rules")
}

func TestKeys(t *testing.T) {
	single := principal.Principal{Subject: "alice", ClientID: "app"}
	multi := principal.Principal{Issuer: "https://a.example", Subject: "alice", ClientID: "app"}
	assert.Equal(t, "alice", single.Key())
	assert.Equal(t, "app", single.ClientKey())
	assert.Equal(t, "https://a.example#alice", multi.Key())
	assert.Equal(t, "https://a.example#app", multi.ClientKey())
	assert.Empty(t, principal.Principal{ClientID: "app"}.Key(), "no subject, no user key")
	assert.Empty(t, principal.SubjectKey("https://a.example", ""))

	// Sessions: another client or audience is someone else; scopes and
	// the DPoP key are not part of the identity.
	base := principal.Principal{Subject: "alice", ClientID: "app", Audience: "https://r.example/mcp"}
	same := base
	same.Scopes, same.DPoPThumbprint = []string{"x"}, jkt
	assert.Equal(t, base.SessionKey(), same.SessionKey())
	for name, other := range map[string]principal.Principal{
		"client":   {Subject: "alice", ClientID: "other", Audience: base.Audience},
		"audience": {Subject: "alice", ClientID: "app", Audience: "https://other.example/mcp"},
		"issuer":   {Issuer: "https://b.example", Subject: "alice", ClientID: "app", Audience: base.Audience},
		"subject":  {Subject: "bob", ClientID: "app", Audience: base.Audience},
	} {
		assert.NotEqual(t, base.SessionKey(), other.SessionKey(), name)
	}
}

// The binding is one encoding of the identity: the scopes as a set, and
// no two identities spelling the same bytes.
func TestAppendBinding(t *testing.T) {
	bind := func(p principal.Principal) string { return string(p.AppendBinding(nil)) }
	a := principal.Principal{Subject: "alice", ClientID: "app", Scopes: []string{"a", "b"}, Audience: "r"}
	b := a
	b.Scopes = []string{"b", "a", "b"}
	assert.Equal(t, bind(a), bind(b), "scopes are a set")
	assert.Equal(t, []string{"b", "a", "b"}, b.Scopes, "not modified")
	for name, p := range map[string]principal.Principal{
		"other scopes":        {Subject: "alice", ClientID: "app", Scopes: []string{"a"}, Audience: "r"},
		"other client":        {Subject: "alice", ClientID: "app2", Scopes: []string{"a", "b"}, Audience: "r"},
		"other audience":      {Subject: "alice", ClientID: "app", Scopes: []string{"a", "b"}, Audience: "r2"},
		"other issuer":        {Issuer: "i", Subject: "alice", ClientID: "app", Scopes: []string{"a", "b"}, Audience: "r"},
		"subject as client":   {Subject: "app", ClientID: "alice", Scopes: []string{"a", "b"}, Audience: "r"},
		"joined scopes":       {Subject: "alice", ClientID: "app", Scopes: []string{"ab"}, Audience: "r"},
		"parts moved":         {Subject: "alic", ClientID: "eapp", Scopes: []string{"a", "b"}, Audience: "r"},
		"DPoP key is no part": {Subject: "alice", ClientID: "app", Scopes: []string{"a", "b"}, Audience: "r", DPoPThumbprint: jkt},
	} {
		if name == "DPoP key is no part" {
			assert.Equal(t, bind(a), bind(p), name)
			continue
		}
		assert.NotEqual(t, bind(a), bind(p), name)
	}
}
