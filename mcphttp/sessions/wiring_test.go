package sessions_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
)

// gatedInventory has one gated static resource and the notifier n.
func gatedInventory(t *testing.T, n grants.Notifier) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.New([]inventory.Resource{{
		URI: "docs://beta", Name: "beta", Access: inventory.Public, Gates: []string{"beta"},
		Read: inventory.TextReader("text/plain", "beta"),
	}}, nil, inventory.Options{Gates: []inventory.Gate{{Name: "beta"}}, Notifier: n})
	require.NoError(t, err)
	return inv
}

// serviceAuth puts the principal named by "Bearer user:<subject>" in the
// request's context: a service's own authentication.
func serviceAuth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sub, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer user:"); ok {
			ctx, err := principal.NewContext(r.Context(), principal.Principal{Subject: sub})
			if err != nil {
				http.Error(w, "bad principal", http.StatusUnauthorized)
				return
			}
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	})
}

func newPart(t *testing.T, hub *notify.Hub) *sessions.Part {
	t.Helper()
	p, err := sessions.New(hub, sessions.Options{KeepAlive: time.Hour})
	require.NoError(t, err)
	return p
}

// Giving the hub to the part is enough: a grant change reaches the
// subject's subscriptions, and nobody else's.
func TestTheHubHearsGrantChanges(t *testing.T) {
	inv := gatedInventory(t, nil)
	hub := notify.New(notify.Options{})
	defer hub.Close()
	_, err := mcphttp.New(inv, mcphttp.Options{}, newPart(t, hub))
	require.NoError(t, err)
	assert.Same(t, hub, inv.Notifier())
	alice, bob := hub.Subscribe("alice"), hub.Subscribe("bob")
	defer alice.Close()
	defer bob.Close()

	changed, err := inv.Authorize(context.Background(), "alice", "beta")
	require.NoError(t, err)
	require.True(t, changed)
	select {
	case ev := <-alice.Events():
		assert.Equal(t, notify.ListChanged, ev.Kind)
	case <-time.After(5 * time.Second):
		t.Fatal("alice heard nothing of her grant")
	}
	select {
	case ev := <-bob.Events():
		t.Fatalf("bob heard %v", ev)
	case <-time.After(50 * time.Millisecond):
	}
}

// The other way round: with no hub of its own, the part delivers the
// inventory's.
func TestTheInventorysHub(t *testing.T) {
	hub := notify.New(notify.Options{})
	defer hub.Close()
	inv := gatedInventory(t, hub)
	ep, err := mcphttp.New(inv, mcphttp.Options{}, newPart(t, nil))
	require.NoError(t, err)
	w := mcptest.Do(t, serviceAuth(ep), mcptest.Request{Body: mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-06-18"}),
		Headers: map[string]string{"Authorization": "Bearer user:alice"}})
	assert.Contains(t, w.Body.String(), `"listChanged":true`)
	assert.NotEmpty(t, w.Header().Get("Mcp-Session-Id"))

	// Without a hub anywhere there is nothing to deliver: an error.
	_, err = mcphttp.New(gatedInventory(t, nil), mcphttp.Options{}, newPart(t, nil))
	assert.Error(t, err)
}

// Two different notifiers are a construction error, never a silent
// split where grant changes go one way and streams listen the other.
func TestTwoNotifiersAreAnError(t *testing.T) {
	var mu sync.Mutex
	var heard []string
	inv := gatedInventory(t, grants.NotifierFunc(func(_ context.Context, s string) {
		mu.Lock()
		heard = append(heard, s)
		mu.Unlock()
	}))
	hub := notify.New(notify.Options{})
	defer hub.Close()
	_, err := mcphttp.New(inv, mcphttp.Options{}, newPart(t, hub))
	assert.Error(t, err)
	other := notify.New(notify.Options{})
	defer other.Close()
	_, err = mcphttp.New(gatedInventory(t, other), mcphttp.Options{}, newPart(t, hub))
	assert.Error(t, err, "another hub")

	same := notify.New(notify.Options{})
	defer same.Close()
	_, err = mcphttp.New(gatedInventory(t, same), mcphttp.Options{}, newPart(t, same))
	assert.NoError(t, err, "the same hub on both sides is fine")
}

// With the part, initialize with a session and server/discover say
// subscribe and listChanged; initialize without one does not.
func TestCapabilities(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	caps := func(result json.RawMessage) string {
		var r struct{ Capabilities json.RawMessage }
		require.NoError(t, json.Unmarshal(result, &r))
		return string(r.Capabilities)
	}
	w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-06-18"}), Token: f.Token(t, "alice")})
	require.Equal(t, 200, w.Code)
	assert.JSONEq(t, `{"resources":{"subscribe":true,"listChanged":true},"completions":{}}`, caps(mcptest.Decode(t, w).Result))
	assert.Contains(t, w.Body.String(), `"protocolVersion":"2025-06-18"`)
	assert.Contains(t, w.Body.String(), `"serverInfo":{"name":"fixture","version":"1.0.0"}`)
	assert.Contains(t, w.Body.String(), `"instructions":"Private documents."`)
	assert.Equal(t, "private, max-age=0", w.Header().Get("Cache-Control"))
	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "1999-01-01"})})
	assert.JSONEq(t, `{"resources":{"subscribe":false,"listChanged":false},"completions":{}}`, caps(mcptest.Decode(t, w).Result))
	assert.Contains(t, w.Body.String(), `"protocolVersion":"2025-11-25"`, "the newest legacy version")
	body, hdr := mcptest.Modern(1, "server/discover", nil)
	w = f.Do(t, mcptest.Request{Body: body, Headers: hdr})
	assert.JSONEq(t, `{"resources":{"subscribe":true,"listChanged":true},"completions":{}}`, caps(mcptest.Decode(t, w).Result))
	// The verbs: GET and DELETE are served, anything else gets 405.
	r, _ := http.NewRequest(http.MethodPut, f.Srv.URL, nil)
	resp, err := f.Srv.Client().Do(r)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET, POST, DELETE", resp.Header.Get("Allow"))
}

// JSON-RPC §6: notifications in a batch get no response, an unknown
// session there too; requests of a batch naming an unknown session each
// get their 404 error.
func TestBatchesAndSessions(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	alice := f.Token(t, "alice")
	w := f.Do(t, mcptest.Request{Body: `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, Token: alice,
		Headers: map[string]string{"Mcp-Session-Id": "none"}})
	assert.Equal(t, 202, w.Code)
	assert.Empty(t, w.Body.String())
	w = f.Do(t, mcptest.Request{Body: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, Token: alice,
		Headers: map[string]string{"Mcp-Session-Id": "none"}})
	var out []mcptest.RPC
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
	require.Len(t, out, 2)
	for _, r := range out {
		require.NotNil(t, r.Error)
		assert.Equal(t, "Session not found", r.Error.Message)
	}
	_, session := f.initializeOn(t, alice)
	w = f.Do(t, mcptest.Request{Body: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://static-text"}}]`,
		Token: alice, Headers: map[string]string{"Mcp-Session-Id": session}})
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
	require.Len(t, out, 2)
	assert.JSONEq(t, `{}`, string(out[0].Result))
	assert.JSONEq(t, `{}`, string(out[1].Result), "subscribed in its session")
}

// recorder is an Observer keeping what it was told.
type recorder struct {
	mu    sync.Mutex
	calls []mcphttp.Call
}

func (r *recorder) Start(ctx context.Context, _ mcphttp.Call) context.Context { return ctx }

func (r *recorder) End(_ context.Context, c mcphttp.Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

func (r *recorder) last(t *testing.T) mcphttp.Call {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.NotEmpty(t, r.calls)
	return r.calls[len(r.calls)-1]
}

// TestObserverSession: calls in a legacy session carry its id.
func TestObserverSession(t *testing.T) {
	obs := &recorder{}
	f := newFixture(t, fixtureOptions{parts: []mcphttp.Part{mcphttp.Observe(obs)}})
	alice := f.Token(t, "alice")
	w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), Token: alice})
	id := w.Header().Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	assert.Equal(t, id, obs.last(t).SessionID, "the session initialize minted")
	legacyHdr := func(session string) map[string]string {
		return map[string]string{"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": session}
	}
	f.Do(t, mcptest.Request{Body: mcptest.Legacy(2, "resources/list", nil), Token: alice, Headers: legacyHdr(id)})
	assert.Equal(t, id, obs.last(t).SessionID)
	f.Do(t, mcptest.Request{Body: mcptest.Legacy(3, "resources/subscribe", map[string]any{"uri": "test://static-text"}), Token: alice, Headers: legacyHdr(id)})
	got := obs.last(t)
	assert.Equal(t, id, got.SessionID)
	assert.Equal(t, "static-text", got.Target)
	f.Do(t, mcptest.Request{Body: mcptest.Legacy(4, "resources/list", nil), Token: alice, Headers: legacyHdr("forged")})
	got = obs.last(t)
	assert.Empty(t, got.SessionID, "an unknown session id is never reported")
	assert.Equal(t, http.StatusNotFound, got.Status)
	f.Do(t, mcptest.Request{Body: mcptest.Legacy(5, "resources/subscribe", map[string]any{"uri": "test://static-text"}), Token: f.Token(t, "bob"), Headers: legacyHdr(id)})
	got = obs.last(t)
	assert.Empty(t, got.SessionID, "nor another principal's")
	assert.Equal(t, http.StatusNotFound, got.Status)
}
