package authn

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/principal"
)

// dpopEnv is a DPoP-enabled Authenticator in front of a cached JWT
// verifier whose keys come from a real JWK Set over HTTP (testissuer),
// with a client proof key and a token bound to it.
type dpopEnv struct {
	*env
	a     *Authenticator
	cache *Cache
	key   *testissuer.ProofKey
	jkt   string
	token string // bound to key
	plain string // an unbound bearer token
	url   string // the request URL the proofs are for
}

const dpopURL = "https://mcp.example.com/mcp"

func newDPoPEnv(t *testing.T, kt testissuer.KeyType, mod func(*dpop.Options)) *dpopEnv {
	t.Helper()
	e := newEnv(t)
	jv := e.verifier(t, nil)
	cache := NewCache(jv, CacheOptions{Now: e.clock.Now})
	o := dpop.Options{Mode: dpop.Allowed, Now: e.clock.Now}
	if mod != nil {
		mod(&o)
	}
	a, err := NewAuthenticator(cache, Options{Resource: testResource, Scopes: []string{"read"}, Logger: e.log, DPoP: o})
	require.NoError(t, err)
	k, err := testissuer.NewProofKey(kt)
	require.NoError(t, err)
	jkt, err := k.Thumbprint()
	require.NoError(t, err)
	c := claims("alice", "read")
	c.DPoPThumbprint = jkt
	return &dpopEnv{
		env: e, a: a, cache: cache, key: k, jkt: jkt,
		token: e.is.Token(t, c, testissuer.WithKey(testissuer.KidES256)),
		plain: e.is.Token(t, claims("alice", "read"), testissuer.WithKey(testissuer.KidES256)),
		url:   dpopURL,
	}
}

// proof signs a proof for method and the env's URL and token, at the
// env's clock, adjusted by mod.
func (d *dpopEnv) proof(t *testing.T, method string, mod func(*testissuer.Proof)) string {
	t.Helper()
	p := testissuer.Proof{Method: method, URL: d.url, Token: d.token, Time: d.clock.Now()}
	if mod != nil {
		mod(&p)
	}
	s, err := d.key.Sign(p)
	require.NoError(t, err)
	return s
}

// send makes a request to the Authenticator's Handler with the
// Authorization value given and each proof as one DPoP header.
func (d *dpopEnv) send(method, target, authz string, proofs ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	if authz != "" {
		r.Header.Set("Authorization", authz)
	}
	for _, p := range proofs {
		r.Header.Add("DPoP", p)
	}
	w := httptest.NewRecorder()
	d.a.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := principal.FromContext(r.Context())
		w.Header().Set("X-Subject", p.Subject)
		w.Header().Set("X-Jkt", p.DPoPThumbprint)
	})).ServeHTTP(w, r)
	return w
}

// challengeError returns the error attribute of the challenge of scheme
// in a response ("" when there is none, "-" when the scheme is absent).
func challengeError(w *httptest.ResponseRecorder, scheme string) string {
	for _, v := range w.Header().Values("WWW-Authenticate") {
		if !strings.HasPrefix(v, scheme+" ") && v != scheme {
			continue
		}
		i := strings.Index(v, `error="`)
		if i < 0 {
			return ""
		}
		rest := v[i+len(`error="`):]
		return rest[:strings.IndexByte(rest, '"')]
	}
	return "-"
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// replayLen is the number of proofs the replay cache remembers.
func (d *dpopEnv) replayLen() int {
	n, _ := d.a.dpop.c.Len()
	return n
}

// The defaults of dpop.Options the tests rely on.
const (
	testProofWindow = 60 * time.Second
	testMaxReplay   = 100_000
)
