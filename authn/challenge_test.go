package authn

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/internal/httpauth"
)

// parseChallenge is a strict parser for the challenges this package emits:
// `Bearer` [SP name="value" *(", " name="value")]. Names must not repeat
// (RFC 6750 §3).
func parseChallenge(h string) (map[string]string, error) {
	rest, ok := strings.CutPrefix(h, "Bearer")
	if !ok {
		return nil, errors.New("scheme")
	}
	params := map[string]string{}
	if rest == "" {
		return params, nil
	}
	rest, ok = strings.CutPrefix(rest, " ")
	if !ok {
		return nil, errors.New("space")
	}
	for {
		eq := strings.Index(rest, `="`)
		if eq <= 0 {
			return nil, errors.New("param")
		}
		name := rest[:eq]
		for _, c := range name {
			if !(c >= 'a' && c <= 'z' || c == '_') {
				return nil, errors.New("name")
			}
		}
		rest = rest[eq+2:]
		end := strings.IndexByte(rest, '"')
		if end < 0 {
			return nil, errors.New("unterminated")
		}
		if _, dup := params[name]; dup {
			return nil, errors.New("duplicate " + name)
		}
		params[name] = rest[:end]
		rest = rest[end+1:]
		if rest == "" {
			return params, nil
		}
		if rest, ok = strings.CutPrefix(rest, ", "); !ok {
			return nil, errors.New("separator")
		}
	}
}

// conforming checks every value against RFC 6750 §3's character rules.
func conforming(t *testing.T, params map[string]string) {
	t.Helper()
	for name, v := range params {
		assert.True(t, validParamValue(name, v), "%s=%q breaks RFC 6750 §3", name, v)
	}
}

func TestChallengeRendering(t *testing.T) {
	h := challenge(authParam{"error", "invalid_token"}, authParam{"error_description", descInvalidToken},
		authParam{"resource_metadata", "https://r.example/.well-known/oauth-protected-resource/mcp"}, authParam{"scope", "a b:c"})
	assert.Equal(t, `Bearer error="invalid_token", error_description="The access token is invalid or expired", `+
		`resource_metadata="https://r.example/.well-known/oauth-protected-resource/mcp", scope="a b:c"`, h)
	p, err := parseChallenge(h)
	require.NoError(t, err)
	conforming(t, p)

	// Values breaking the rules are left out, never escaped.
	for _, bad := range []authParam{
		{"error_description", `say "hi"`}, {"error_description", `back\slash`}, {"error_description", "new\nline"},
		{"error_description", "caf\u00e9"}, {"scope", "a  b"}, {"scope", " a"}, {"scope", "a "}, {"scope", `a"b`},
		{"scope", "tab\tx"}, {"resource_metadata", "https://x/ y"}, {"error", ""},
	} {
		out, n := httpauth.AppendChallenge(nil, "Bearer", httpauth.Param{Name: bad.name, Value: bad.value})
		assert.Zero(t, n, "%+v", bad)
		assert.Equal(t, "Bearer", string(out))
	}
	assert.Equal(t, "Bearer", challenge())
}

// FuzzChallenge: a rendered challenge re-parses to exactly the parameters
// whose values were valid, and every emitted byte obeys RFC 6750.
func FuzzChallenge(f *testing.F) {
	f.Add("The access token is invalid", "read write")
	f.Add(`quote " here`, "a\\b")
	f.Add("", "")
	f.Add("ok", "a  b")
	f.Add("\x7f", "é")
	f.Fuzz(func(t *testing.T, desc, scope string) {
		in := []authParam{{"error", "invalid_token"}, {"error_description", desc},
			{"resource_metadata", "https://r.example/.well-known/oauth-protected-resource"}, {"scope", scope}}
		h := challenge(in...)
		for i := 0; i < len(h); i++ {
			if c := h[i]; c < 0x20 || c > 0x7e {
				t.Fatalf("byte %#x in %q", c, h)
			}
		}
		got, err := parseChallenge(h)
		if err != nil {
			t.Fatalf("%q does not re-parse: %v", h, err)
		}
		want := map[string]string{}
		for _, p := range in {
			if validParamValue(p.name, p.value) {
				want[p.name] = p.value
			}
		}
		if len(got) != len(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("%s: got %q, want %q", k, got[k], v)
			}
		}
		conformingF(t, got)
	})
}

func conformingF(t *testing.T, params map[string]string) {
	for name, v := range params {
		if !validParamValue(name, v) {
			t.Fatalf("%s=%q breaks RFC 6750 §3", name, v)
		}
	}
}
