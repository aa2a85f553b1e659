package sessions_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
)

// multiFixture serves one inventory to two real issuers (their own keys),
// the same subject "alice" in both, over HTTP, with DPoP allowed.
type multiFixture struct {
	a, b    *testissuer.Issuer
	srv     *httptest.Server
	url     string // the MCP endpoint, also the resource
	inv     *inventory.Inventory
	hub     *notify.Hub
	dpopKey *testissuer.ProofKey
}

func newMultiFixture(t *testing.T) *multiFixture {
	t.Helper()
	f := &multiFixture{}
	var h http.Handler
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(f.srv.Close)
	f.url = f.srv.URL + "/mcp"
	f.a = testissuer.Start(t, testissuer.Options{Audience: f.url, UniqueKeys: true})
	f.b = testissuer.Start(t, testissuer.Options{Audience: f.url, UniqueKeys: true})
	mv, err := authn.NewMultiIssuerVerifier(context.Background(), authn.MultiIssuerOptions{Resource: f.url, JWT: []authn.JWTOptions{
		{Issuer: f.a.ID(), JWKSURL: f.a.JWKSURL()}, {Issuer: f.b.ID(), JWKSURL: f.b.JWKSURL()},
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = mv.Close() })
	auth, err := authn.NewAuthenticator(authn.NewCache(mv, authn.CacheOptions{}), authn.Options{
		Resource: f.url, DPoP: dpop.Options{Mode: dpop.Allowed},
	})
	require.NoError(t, err)
	f.hub = notify.New(notify.Options{})
	t.Cleanup(f.hub.Close)
	beta := inventory.Resource{URI: "test://beta", Name: "beta", MIMEType: "text/plain", Gates: []string{"beta"},
		Read: inventory.TextReader("text/plain", "beta")}
	f.inv, err = inventory.New([]inventory.Resource{beta}, nil, inventory.Options{Gates: []inventory.Gate{{Name: "beta"}}})
	require.NoError(t, err)
	ep, err := mcphttp.New(f.inv, mcphttp.Options{ServerInfo: mcphttp.Implementation{Name: "multi", Version: "1"}, Authenticator: auth}, newPart(t, f.hub))
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/mcp", ep)
	h = mux
	f.dpopKey, err = testissuer.NewProofKey(testissuer.EC256)
	require.NoError(t, err)
	return f
}

// call posts a legacy JSON-RPC body as alice of is, with a DPoP-bound
// token and a proof when dpop is set.
func (f *multiFixture) call(t *testing.T, is *testissuer.Issuer, dpop bool, session, body string) *http.Response {
	t.Helper()
	c := testissuer.Claims{Subject: "alice"}
	if dpop {
		jkt, err := f.dpopKey.Thumbprint()
		require.NoError(t, err)
		c.DPoPThumbprint = jkt
	}
	tok := is.Token(t, c)
	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if dpop {
		proof, err := f.dpopKey.Sign(testissuer.Proof{Method: http.MethodPost, URL: f.url, Token: tok})
		require.NoError(t, err)
		req.Header.Set("Authorization", "DPoP "+tok)
		req.Header.Set("DPoP", proof)
	} else {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	return resp
}

// listen opens a modern subscriptions/listen stream as alice of is.
func (f *multiFixture) listen(t *testing.T, is *testissuer.Issuer) *mcptest.Stream {
	t.Helper()
	body, hdr := listenBody(9)
	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.Header.Set("Authorization", "Bearer "+is.Token(t, testissuer.Claims{Subject: "alice"}))
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	s := openStream(t, resp)
	require.Contains(t, s.Next(t), "subscriptions/acknowledged")
	return s
}

// Two issuers, the same subject: grants and notifications for one never
// reach the other, and a session owned by one is unusable by the other
// (while the same identity keeps it with a bearer or a DPoP-bound token).
func TestSameSubjectOfTwoIssuers(t *testing.T) {
	f := newMultiFixture(t)
	ka, kb := principal.SubjectKey(f.a.ID(), "alice"), principal.SubjectKey(f.b.ID(), "alice")
	ctx := context.Background()
	streamA := f.listen(t, f.a)
	defer streamA.Close()
	streamB := f.listen(t, f.b)
	defer streamB.Close()
	mcptest.WaitSubscribers(t, f.hub, ka, 1)
	mcptest.WaitSubscribers(t, f.hub, kb, 1)
	assert.Zero(t, f.hub.Subscribers("alice"), "no stream is keyed by the bare subject")

	// Grants: the gate is opened for alice of A only.
	changed, err := f.inv.Authorize(ctx, ka, "beta")
	require.NoError(t, err)
	require.True(t, changed)
	assert.Contains(t, streamA.Next(t), "notifications/resources/list_changed")
	streamB.None(t)

	// Notifications published to B's alice reach B's stream only.
	f.hub.ListChanged(ctx, kb)
	assert.Contains(t, streamB.Next(t), "notifications/resources/list_changed")
	streamA.None(t)

	// Sessions: A's alice's session is not B's alice's.
	resp := f.call(t, f.a, true, "", mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	assert.Equal(t, http.StatusOK, status(f.call(t, f.a, false, sid, mcptest.Legacy(2, "ping", nil))), "the same identity, a Bearer token this time")
	assert.Equal(t, http.StatusNotFound, status(f.call(t, f.b, true, sid, mcptest.Legacy(3, "ping", nil))), "another issuer's alice")
	assert.Equal(t, http.StatusNotFound, status(f.call(t, f.b, false, sid, mcptest.Legacy(4, "resources/subscribe", map[string]any{"uri": "test://beta"}))))
	r := decodeResp(t, f.call(t, f.a, true, sid, mcptest.Legacy(5, "resources/subscribe", map[string]any{"uri": "test://beta"})))
	assert.Nil(t, r.Error, "alice of A may read the gated resource: her grant")
	assert.JSONEq(t, `{}`, string(r.Result))
}
