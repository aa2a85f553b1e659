package intercept_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
)

var _ intercept.Sessions = (*sessions.Part)(nil)

// partFixture is the sessions part on the endpoint and as the Sessions of
// an intercept in front of a stateful legacy handler, over HTTP.
func partFixture(t *testing.T) (*mcptest.Server, *streamLegacy, *sessions.Part) {
	t.Helper()
	hub := notify.New(notify.Options{})
	part, err := sessions.New(hub, sessions.Options{KeepAlive: time.Hour})
	require.NoError(t, err)
	f := mcptest.New(t, mcptest.Options{}, part)
	legacy := newStreamLegacy()
	h, err := intercept.New(f.EP, legacy, intercept.Options{Sessions: part, ForwardAnonymous: true})
	require.NoError(t, err)
	return f.Serve(t, h, hub), legacy, part
}

// rpcOf reads a JSON-RPC answer over HTTP.
func rpcOf(t *testing.T, resp *http.Response) (int, mcptest.RPC) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if len(b) == 0 {
		return resp.StatusCode, mcptest.RPC{}
	}
	return resp.StatusCode, mcptest.DecodeBytes(t, b)
}

// The sessions part behind Intercept: it adopts legacy's session, its
// notifications (list changes, updates of what the session subscribed to
// through the endpoint) reach the caller on legacy's GET stream, and
// legacy's DELETE ends them. A session begun anonymously is nobody's; one
// begun signed in is its caller's alone: another caller's use of the id,
// an anonymous one, an id never seen are answered 404, as an unknown
// session (before, bob was served in alice's session as without one, and
// could open its GET stream).
func TestSessionsPartBehindIntercept(t *testing.T) {
	srv, legacy, _ := partFixture(t)
	alice, bob := srv.Token(t, "alice"), srv.Token(t, "bob")
	const session = "legacy-session"

	// Anonymous first: not adopted, and legacy's session is anyone's.
	resp := srv.Post(t, "", "", initBody, nil)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	code, rpc := rpcOf(t, srv.Post(t, "", session, mcptest.Legacy(2, "resources/read", map[string]any{"uri": "test://static-text"}), nil))
	require.Equal(t, http.StatusOK, code)
	assert.Nil(t, rpc.Error, "an anonymous caller reads a public resource in legacy's session")

	resp = srv.Post(t, alice, "", initBody, nil)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, session, resp.Header.Get("Mcp-Session-Id"))

	st := mcptest.OpenStream(t, srv.Get(t, alice, session, nil))
	t.Cleanup(st.Close)
	mcptest.WaitSubscribers(t, srv.Hub, "alice", 1)

	uri := "docs://documents/alice-0001"
	code, rpc = rpcOf(t, srv.Post(t, alice, session, mcptest.Legacy(3, "resources/subscribe", map[string]any{"uri": uri}), nil))
	require.Equal(t, http.StatusOK, code)
	require.Nil(t, rpc.Error, "alice subscribes in the adopted session")

	srv.Hub.ListChanged(context.Background(), "alice")
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`, st.Next(t))
	srv.Hub.ResourceUpdated(context.Background(), "alice", "docs://documents/alice-0002") // not subscribed
	srv.Hub.ResourceUpdated(context.Background(), "alice", uri)
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"`+uri+`"}}`, st.Next(t))
	legacy.write(t, "event: message\ndata: {\"legacy\":true}\n\n")
	assert.Equal(t, `{"legacy":true}`, st.Next(t), "legacy's own events pass")
	srv.Hub.ListChanged(context.Background(), "bob")
	st.None(t)

	// bob (or nobody) naming alice's session: 404, for what the endpoint
	// serves, what legacy serves, the GET stream and DELETE alike.
	for _, tok := range []string{bob, ""} {
		for _, body := range []string{
			mcptest.Legacy(4, "resources/list", nil),
			mcptest.Legacy(5, "resources/subscribe", map[string]any{"uri": "docs://documents/bob-0001"}),
			mcptest.Legacy(6, "tools/list", nil),
			mcptest.Legacy(7, "ping", nil),
		} {
			code, _ = rpcOf(t, srv.Post(t, tok, session, body, nil))
			assert.Equal(t, http.StatusNotFound, code, "%s (token %v)", body, tok != "")
		}
		resp = srv.Get(t, tok, session, nil)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	}
	srv.Hub.ListChanged(context.Background(), "alice")
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`, st.Next(t), "alice's stream goes on")

	// An id the handler never saw, signed in: unknown.
	code, _ = rpcOf(t, srv.Post(t, alice, "never-adopted", mcptest.Legacy(8, "resources/read", map[string]any{"uri": uri}), nil))
	assert.Equal(t, http.StatusNotFound, code)

	// legacy ends the session: the part's stream and subscriptions end,
	// and the session is unknown.
	del := func(tok string) int {
		req, err := http.NewRequest(http.MethodDelete, srv.Srv.URL, nil)
		require.NoError(t, err)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		req.Header.Set("Mcp-Session-Id", session)
		dresp, err := srv.Srv.Client().Do(req)
		require.NoError(t, err)
		dresp.Body.Close()
		return dresp.StatusCode
	}
	assert.Equal(t, http.StatusNotFound, del(bob), "bob cannot end alice's session")
	assert.Equal(t, http.StatusNotFound, del(""))
	require.Equal(t, http.StatusNoContent, del(alice))
	mcptest.WaitSubscribers(t, srv.Hub, "alice", 0)
	code, _ = rpcOf(t, srv.Post(t, alice, session, mcptest.Legacy(9, "resources/subscribe", map[string]any{"uri": uri}), nil))
	assert.Equal(t, http.StatusNotFound, code)
}

// The same part on an endpoint served directly still refuses unknown
// sessions with 404: the leniency is for requests that come through
// Intercept only.
func TestSessionsPartDirectStillRefusesUnknownSessions(t *testing.T) {
	srv, _, _ := partFixture(t)
	direct := srv.Fixture.Serve(t, srv.EP, nil)
	resp := direct.Post(t, srv.Token(t, "alice"), "legacy-session", mcptest.Legacy(1, "resources/list", nil), nil)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}
