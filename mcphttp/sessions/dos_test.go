package sessions_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
)

// Attack: anonymous callers fill the session table so that signed-in
// users' initialize gets 503 (every 2025-11-25 client locked out). An
// anonymous initialize never mints a session.
func TestAnonymousInitializeFloodHoldsNoSession(t *testing.T) {
	f := newFixture(t, fixtureOptions{limits: sessions.Limits{MaxSessions: 100}})
	const flood = 10000
	minted := 0
	for range flood {
		status, id := f.initializeOn(t, "")
		require.Equal(t, http.StatusOK, status)
		if id != "" {
			minted++
		}
	}
	assert.Zero(t, minted, "anonymous initialize never mints a session")
	status, id := f.initializeOn(t, f.Token(t, "alice"))
	assert.Equal(t, http.StatusOK, status)
	assert.NotEmpty(t, id, "a signed-in user still gets a session")
	t.Logf("%d anonymous initialize requests: %d sessions held; alice's initialize %d with a session", flood, minted, status)
}

// Attack: one principal fills the table. Each principal keeps at most
// MaxSessionsPerPrincipal sessions (its oldest are ended), and others are
// unaffected.
func TestOnePrincipalCannotFillTheSessionTable(t *testing.T) {
	f := newFixture(t, fixtureOptions{limits: sessions.Limits{MaxSessions: 50}})
	alice := f.Token(t, "alice")
	const flood = 10000
	var ids []string
	for range flood {
		status, id := f.initializeOn(t, alice)
		require.Equal(t, http.StatusOK, status)
		require.NotEmpty(t, id)
		ids = append(ids, id)
	}
	live := 0
	for _, id := range ids[flood-2*sessions.DefaultMaxSessionsPerPrincipal:] {
		w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(2, "ping", nil), Token: alice, Headers: map[string]string{"Mcp-Session-Id": id}})
		if w.Code == http.StatusOK {
			live++
		}
	}
	assert.Equal(t, sessions.DefaultMaxSessionsPerPrincipal, live, "alice holds exactly her cap: the newest sessions")
	w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(2, "ping", nil), Token: alice, Headers: map[string]string{"Mcp-Session-Id": ids[0]}})
	assert.Equal(t, http.StatusNotFound, w.Code, "her oldest session was ended")

	status, id := f.initializeOn(t, f.Token(t, "bob"))
	assert.Equal(t, http.StatusOK, status)
	assert.NotEmpty(t, id, "bob still gets a session")
	t.Logf("%d initialize requests by alice: %d of her sessions live; bob's initialize %d with a session", flood, live, status)
}

// The stream of a session its principal's newest sessions pushed out ends
// with it.
func TestAnEvictedSessionsStreamEnds(t *testing.T) {
	f := newFixture(t, fixtureOptions{limits: sessions.Limits{MaxSessionsPerPrincipal: 2}})
	alice := f.Token(t, "alice")
	first := f.initialize(t, alice)
	s := openStream(t, f.Get(t, alice, first, nil))
	mcptest.WaitSubscribers(t, f.Hub, "alice", 1)
	f.initialize(t, alice)
	s.None(t)
	f.initialize(t, alice) // the third: the first is ended
	ended(t, s, "the evicted session's stream goes on")
	assert.Equal(t, 404, status(f.Post(t, alice, first, mcptest.Legacy(1, "ping", nil), nil)))
}

// A full table never refuses a signed-in caller: initialize is answered
// without a session (and without the notification capabilities).
func TestAFullSessionTableServesInitializeStatelessly(t *testing.T) {
	f := newFixture(t, fixtureOptions{limits: sessions.Limits{MaxSessions: 3}})
	for i := range 3 {
		_, id := f.initializeOn(t, f.Token(t, fmt.Sprintf("user-%d", i)))
		require.NotEmpty(t, id)
	}
	late := f.Token(t, "late")
	w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), Token: late})
	assert.Equal(t, http.StatusOK, w.Code, "never 503")
	assert.Empty(t, w.Header().Get("Mcp-Session-Id"))
	assert.Contains(t, w.Body.String(), `"subscribe":false,"listChanged":false`)
	// The stateless client is served.
	w = f.Do(t, mcptest.Request{Body: mcptest.Legacy(2, "resources/templates/list", nil), Token: late})
	assert.Equal(t, http.StatusOK, w.Code)
}

func TestSubscriptionsPerSessionAreCapped(t *testing.T) {
	f := newFixture(t, fixtureOptions{limits: sessions.Limits{MaxSubscriptions: 5}})
	alice := f.Token(t, "alice")
	_, session := f.initializeOn(t, alice)
	post := func(id int, method, uri string) mcptest.RPC {
		w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(id, method, map[string]any{"uri": uri}), Token: alice,
			Headers: map[string]string{"Mcp-Session-Id": session}})
		return mcptest.Decode(t, w)
	}
	for i := range 5 {
		require.Equal(t, `{}`, string(post(i, "resources/subscribe", fmt.Sprintf("docs://documents/alice-%04d", i)).Result))
	}
	r := post(9, "resources/subscribe", "docs://documents/alice-0009")
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(-32602), r.Error.Code)
	// Resubscribing to a URI already held is fine; unsubscribing frees a place.
	assert.Nil(t, post(10, "resources/subscribe", "docs://documents/alice-0001").Error)
	assert.Nil(t, post(11, "resources/unsubscribe", "docs://documents/alice-0001").Error)
	assert.Nil(t, post(12, "resources/subscribe", "docs://documents/alice-0009").Error)
	// A URI over the length limit is never stored: it is no resource.
	assert.Equal(t, int64(-32002), post(13, "resources/subscribe", "docs://documents/"+strings.Repeat("a", 3000)).Error.Code)
}

// Attack: anonymous subscriptions/listen streams that never end and can
// never deliver anything. Streams need a principal.
func TestStreamsNeedAPrincipal(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	before := runtime.NumGoroutine()
	for range 300 {
		resp := f.listen(t, "")
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "resource_metadata=")
		resp.Body.Close()
	}
	f.Srv.CloseClientConnections()
	time.Sleep(50 * time.Millisecond)
	after := runtime.NumGoroutine()
	assert.Less(t, after-before, 20, "no goroutines are left behind by refused streams")
	t.Logf("300 anonymous listen requests: all 401; goroutines %d before, %d after", before, after)
}

// One principal's streams are capped (429 with Retry-After), the endpoint's
// in all too (503), and another principal is unaffected by the first cap.
// GET streams count as listen streams do.
func TestStreamCaps(t *testing.T) {
	f := newFixture(t, fixtureOptions{limits: sessions.Limits{MaxStreamsPerPrincipal: 3, MaxStreams: 5}})
	alice, bob, carol := f.Token(t, "alice"), f.Token(t, "bob"), f.Token(t, "carol")
	var open []*mcptest.Stream
	defer func() {
		for _, s := range open {
			s.Close()
		}
	}()
	for range 2 {
		s := openStream(t, f.listen(t, alice))
		s.Next(t)
		open = append(open, s)
	}
	session := f.initialize(t, alice)
	open = append(open, openStream(t, f.Get(t, alice, session, nil)))
	mcptest.WaitSubscribers(t, f.Hub, "alice", 3)
	resp := f.listen(t, alice)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "alice's fourth stream")
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	r := decodeResp(t, resp)
	assert.Equal(t, int64(-32600), r.Error.Code)
	assert.Equal(t, "Too many open streams for this caller", r.Error.Message)
	other := f.initialize(t, alice)
	resp = f.Get(t, alice, other, nil)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "a GET stream counts too")
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	resp.Body.Close()

	for range 2 {
		s := openStream(t, f.listen(t, bob))
		s.Next(t)
		open = append(open, s)
	}
	resp = f.listen(t, carol)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the endpoint's sixth stream")
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	resp.Body.Close()

	// A closed stream frees its place.
	open[0].Close()
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
	s.Next(t)
	open = append(open, s)
	t.Logf("caps: 3 streams per principal, 5 in all: alice's 4th got 429, carol's got 503 until one closed")
}
