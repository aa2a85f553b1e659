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
	}{
		{"subject", principal.Principal{Subject: "alice"}, true},
		{"no subject, client only", principal.Principal{ClientID: "svc"}, true},
		{"anonymous-looking but empty", principal.Principal{}, true},
		{"256 UTF-16 units", principal.Principal{Subject: strings.Repeat("a", 256)}, true},
		{"128 astral characters are 256 units", principal.Principal{Subject: strings.Repeat("😀", 128)}, true},
		{"a thumbprint", principal.Principal{Subject: "a", DPoPThumbprint: jkt}, true},
		// Attack rows: what a service's middleware could pass along.
		{"257 units", principal.Principal{Subject: strings.Repeat("a", 257)}, false},
		{"129 astral characters", principal.Principal{Subject: strings.Repeat("😀", 129)}, false},
		{"C0 control", principal.Principal{Subject: "al\x01ice"}, false},
		{"DEL", principal.Principal{Subject: "al\x7fice"}, false},
		{"C1 control", principal.Principal{Subject: "al\u0085ice"}, false},
		{"NUL in the client", principal.Principal{ClientID: "c\x00"}, false},
		{"invalid UTF-8", principal.Principal{Subject: "a\xffb"}, false},
		{"scope with a space", principal.Principal{Subject: "a", Scopes: []string{"read write"}}, false},
		{"scope with a quote", principal.Principal{Subject: "a", Scopes: []string{`re"ad`}}, false},
		{"empty scope", principal.Principal{Subject: "a", Scopes: []string{""}}, false},
		{"audience with a line break", principal.Principal{Subject: "a", Audience: "https://x\n"}, false},
		{"issuer with NUL", principal.Principal{Subject: "a", Issuer: "https://x\x00"}, false},
		{"short thumbprint", principal.Principal{Subject: "a", DPoPThumbprint: jkt[:42]}, false},
		{"thumbprint with padding bits", principal.Principal{Subject: "a", DPoPThumbprint: jkt[:42] + "t"}, false},
		{"thumbprint not base64url", principal.Principal{Subject: "a", DPoPThumbprint: jkt[:41] + "+s"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := principal.New(tc.p)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, principal.ErrInvalid)
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
