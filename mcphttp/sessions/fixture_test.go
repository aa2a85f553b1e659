package sessions_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
)

// fixture is mcptest's endpoint with the sessions part, behind a real
// HTTP server.
type fixture struct {
	*mcptest.Server
	part *sessions.Part
}

type fixtureOptions struct {
	queue  int // the hub's queue size; 0: the default
	limits sessions.Limits
	// keepAlive is the part's KeepAlive; 0: an hour (none in a test).
	keepAlive time.Duration
	mcp       mcptest.Options
	// parts are given to the endpoint before the sessions part.
	parts []mcphttp.Part
	// wrap, when set, wraps the endpoint in the server (a user's middleware).
	wrap func(http.Handler) http.Handler
}

func newFixture(t testing.TB, o fixtureOptions) *fixture {
	t.Helper()
	hub := notify.New(notify.Options{QueueSize: o.queue})
	if o.keepAlive == 0 {
		o.keepAlive = time.Hour
	}
	part, err := sessions.New(hub, sessions.Options{Limits: o.limits, KeepAlive: o.keepAlive})
	require.NoError(t, err)
	f := mcptest.New(t, o.mcp, append(o.parts, part)...)
	var h http.Handler = f.EP
	if o.wrap != nil {
		h = o.wrap(h)
	}
	return &fixture{Server: f.Serve(t, h, hub), part: part}
}

// initialize sends a legacy initialize over HTTP as token's caller and
// returns the session minted.
func (f *fixture) initialize(t testing.TB, token string) string {
	t.Helper()
	resp := f.Post(t, token, "", mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), nil)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	var r mcptest.RPC
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	assert.Contains(t, string(r.Result), `"resources":{"subscribe":true,"listChanged":true}`)
	id := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	for _, c := range id {
		require.True(t, c > 0x20 && c < 0x7f, "session ids are visible ASCII")
	}
	return id
}

// initializeOn sends a legacy initialize to the endpoint in process with
// token ("" for none) and returns the status and the session minted ("" for
// none).
func (f *fixture) initializeOn(t testing.TB, token string) (int, string) {
	t.Helper()
	w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), Token: token})
	return w.Code, w.Header().Get("Mcp-Session-Id")
}

// openStream opens an SSE response as mcptest does, checking that proxies
// are told not to buffer it.
func openStream(t testing.TB, resp *http.Response) *mcptest.Stream {
	t.Helper()
	assert.Equal(t, "no", resp.Header.Get("X-Accel-Buffering"))
	return mcptest.OpenStream(t, resp)
}

// listenBody is a modern subscriptions/listen request for resource list
// changes.
func listenBody(id int) (string, map[string]string) {
	return mcptest.Modern(id, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourcesListChanged": true}})
}

// listen opens a modern subscriptions/listen stream over HTTP as token's
// caller ("" for none).
func (f *fixture) listen(t testing.TB, token string) *http.Response {
	t.Helper()
	body, hdr := listenBody(1)
	return f.Post(t, token, "", body, hdr)
}

// del sends DELETE for session as token's caller.
func (f *fixture) del(t testing.TB, token, session string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, f.Srv.URL, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := f.Srv.Client().Do(req)
	require.NoError(t, err)
	return resp
}

// decodeResp decodes and closes a JSON-RPC response.
func decodeResp(t testing.TB, resp *http.Response) mcptest.RPC {
	t.Helper()
	defer resp.Body.Close()
	var r mcptest.RPC
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	return r
}

// status returns a response's status and closes it.
func status(resp *http.Response) int {
	resp.Body.Close()
	return resp.StatusCode
}

// ended waits for the server to end s.
func ended(t testing.TB, s *mcptest.Stream, what string) {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
}
