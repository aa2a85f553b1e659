package mcphttp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
)

// initializeOn sends a legacy initialize to h and returns the status and
// the session id minted ("" for none).
func initializeOn(t testing.TB, h http.Handler, auth string) (int, string) {
	t.Helper()
	w := post(t.(*testing.T), h, legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), auth, nil)
	return w.Code, w.Header().Get("Mcp-Session-Id")
}

// Attack: anonymous callers fill the session table so that signed-in
// users' initialize gets 503 (every 2025-11-25 client locked out). Now an
// anonymous initialize never mints a session.
func TestAnonymousInitializeFloodHoldsNoSession(t *testing.T) {
	f := newNotifyFixtureLimits(t, 0, mcphttp.SessionLimits{MaxSessions: 100})
	const flood = 10000
	minted := 0
	for range flood {
		status, id := initializeOn(t, f.notify, "")
		require.Equal(t, http.StatusOK, status)
		if id != "" {
			minted++
		}
	}
	assert.Zero(t, minted, "anonymous initialize never mints a session")
	status, id := initializeOn(t, f.notify, "Bearer "+f.token(t, "alice"))
	assert.Equal(t, http.StatusOK, status)
	assert.NotEmpty(t, id, "a signed-in user still gets a session")
	t.Logf("%d anonymous initialize requests: %d sessions held; alice's initialize %d with a session", flood, minted, status)
}

// Attack: one principal fills the table. Each principal keeps at most
// MaxSessionsPerPrincipal sessions (its oldest are ended), and others are
// unaffected.
func TestOnePrincipalCannotFillTheSessionTable(t *testing.T) {
	f := newNotifyFixtureLimits(t, 0, mcphttp.SessionLimits{MaxSessions: 50})
	alice := "Bearer " + f.token(t, "alice")
	const flood = 10000
	var ids []string
	for range flood {
		status, id := initializeOn(t, f.notify, alice)
		require.Equal(t, http.StatusOK, status)
		require.NotEmpty(t, id)
		ids = append(ids, id)
	}
	live := 0
	for _, id := range ids[flood-2*mcphttp.DefaultMaxSessionsPerPrincipal:] {
		w := post(t, f.notify, legacy(2, "ping", nil), alice, map[string]string{"Mcp-Session-Id": id})
		if w.Code == http.StatusOK {
			live++
		}
	}
	assert.Equal(t, mcphttp.DefaultMaxSessionsPerPrincipal, live, "alice holds exactly her cap: the newest sessions")
	w := post(t, f.notify, legacy(2, "ping", nil), alice, map[string]string{"Mcp-Session-Id": ids[0]})
	assert.Equal(t, http.StatusNotFound, w.Code, "her oldest session was ended")

	status, id := initializeOn(t, f.notify, "Bearer "+f.token(t, "bob"))
	assert.Equal(t, http.StatusOK, status)
	assert.NotEmpty(t, id, "bob still gets a session")
	t.Logf("%d initialize requests by alice: %d of her sessions live; bob's initialize %d with a session", flood, live, status)
}

// A full table never refuses a signed-in caller: initialize is answered
// without a session (and without the notification capabilities).
func TestAFullSessionTableServesInitializeStatelessly(t *testing.T) {
	f := newNotifyFixtureLimits(t, 0, mcphttp.SessionLimits{MaxSessions: 3})
	for i := range 3 {
		_, id := initializeOn(t, f.notify, "Bearer "+f.token(t, fmt.Sprintf("user-%d", i)))
		require.NotEmpty(t, id)
	}
	w := post(t, f.notify, legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), "Bearer "+f.token(t, "late"), nil)
	assert.Equal(t, http.StatusOK, w.Code, "never 503")
	assert.Empty(t, w.Header().Get("Mcp-Session-Id"))
	assert.Contains(t, w.Body.String(), `"subscribe":false,"listChanged":false`)
	// The stateless client is served.
	w = post(t, f.notify, legacy(2, "resources/templates/list", nil), "Bearer "+f.token(t, "late"), nil)
	assert.Equal(t, http.StatusOK, w.Code)
}

func TestSubscriptionsPerSessionAreCapped(t *testing.T) {
	f := newNotifyFixtureLimits(t, 0, mcphttp.SessionLimits{MaxSubscriptions: 5})
	alice := "Bearer " + f.token(t, "alice")
	_, session := initializeOn(t, f.notify, alice)
	hdr := map[string]string{"Mcp-Session-Id": session}
	for i := range 5 {
		w := post(t, f.notify, legacy(i, "resources/subscribe", map[string]any{"uri": fmt.Sprintf("docs://documents/alice-%04d", i)}), alice, hdr)
		require.Equal(t, `{}`, string(decode(t, w).Result))
	}
	w := post(t, f.notify, legacy(9, "resources/subscribe", map[string]any{"uri": "docs://documents/alice-0009"}), alice, hdr)
	r := decode(t, w)
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(-32602), r.Error.Code)
	// Resubscribing to a URI already held is fine; unsubscribing frees a place.
	w = post(t, f.notify, legacy(10, "resources/subscribe", map[string]any{"uri": "docs://documents/alice-0001"}), alice, hdr)
	assert.Nil(t, decode(t, w).Error)
	w = post(t, f.notify, legacy(11, "resources/unsubscribe", map[string]any{"uri": "docs://documents/alice-0001"}), alice, hdr)
	assert.Nil(t, decode(t, w).Error)
	w = post(t, f.notify, legacy(12, "resources/subscribe", map[string]any{"uri": "docs://documents/alice-0009"}), alice, hdr)
	assert.Nil(t, decode(t, w).Error)
	// A URI over the length limit is never stored: it is no resource.
	w = post(t, f.notify, legacy(13, "resources/subscribe", map[string]any{"uri": "docs://documents/" + strings.Repeat("a", 3000)}), alice, hdr)
	assert.Equal(t, int64(-32002), decode(t, w).Error.Code)
}

// listenOn opens a modern subscriptions/listen stream over HTTP as auth.
func (f *notifyFixture) listen(t testing.TB, auth string) *http.Response {
	t.Helper()
	body, hdr := modern(1, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourcesListChanged": true}})
	return f.post(t, strings.TrimPrefix(auth, "Bearer "), "", body, hdr)
}

// Attack: anonymous subscriptions/listen streams that never end and can
// never deliver anything. Streams need a principal.
func TestStreamsNeedAPrincipal(t *testing.T) {
	f := newNotifyFixture(t, 0)
	before := runtime.NumGoroutine()
	for range 300 {
		resp := f.listen(t, "")
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "resource_metadata=")
		resp.Body.Close()
	}
	f.srv.CloseClientConnections()
	time.Sleep(50 * time.Millisecond)
	after := runtime.NumGoroutine()
	assert.Less(t, after-before, 20, "no goroutines are left behind by refused streams")
	t.Logf("300 anonymous listen requests: all 401; goroutines %d before, %d after", before, after)
}

// One principal's streams are capped (429 with Retry-After), the endpoint's
// in all too (503), and another principal is unaffected by the first cap.
func TestStreamCaps(t *testing.T) {
	f := newNotifyFixtureLimits(t, 0, mcphttp.SessionLimits{MaxStreamsPerPrincipal: 3, MaxStreams: 5})
	alice, bob, carol := "Bearer "+f.token(t, "alice"), "Bearer "+f.token(t, "bob"), "Bearer "+f.token(t, "carol")
	var open []*stream
	defer func() {
		for _, s := range open {
			s.close()
		}
	}()
	for range 3 {
		s := openStream(t, f.listen(t, alice))
		s.next(t)
		open = append(open, s)
	}
	resp := f.listen(t, alice)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "alice's fourth stream")
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	var r rpc
	require.NoError(t, jsonDecode(resp, &r))
	assert.Equal(t, int64(-32600), r.Error.Code)
	assert.Equal(t, "Too many open streams for this caller", r.Error.Message)

	for range 2 {
		s := openStream(t, f.listen(t, bob))
		s.next(t)
		open = append(open, s)
	}
	resp = f.listen(t, carol)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the endpoint's sixth stream")
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	resp.Body.Close()

	// A closed stream frees its place.
	open[0].close()
	open = open[1:]
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp = f.listen(t, carol)
		if resp.StatusCode == http.StatusOK || time.Now().After(deadline) {
			break
		}
		resp.Body.Close()
		time.Sleep(5 * time.Millisecond)
	}
	s := openStream(t, resp)
	s.next(t)
	open = append(open, s)
	t.Logf("caps: 3 streams per principal, 5 in all: alice's 4th got 429, carol's got 503 until one closed")
}

func jsonDecode(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
