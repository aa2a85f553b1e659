package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// upstreamAS is a stand-in authorization server of an upstream: it
// approves whoever is signed in (user), issues codes with PKCE, and
// rotates refresh tokens.
type upstreamAS struct {
	*httptest.Server
	mu        sync.Mutex
	user      string // who is signed in at the AS
	codes     map[string][2]string
	refreshes map[string]string // refresh token -> user
	n         int
	refreshN  atomic.Int64
	revoked   atomic.Int64
	gate      chan struct{}
	down      atomic.Bool
	expiresIn int
}

func newUpstreamAS(t *testing.T) *upstreamAS {
	as := &upstreamAS{codes: map[string][2]string{}, refreshes: map[string]string{}, expiresIn: 600}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != "mcp" || q.Get("code_challenge_method") != "S256" || q.Get("response_type") != "code" {
			http.Error(w, "bad request", 400)
			return
		}
		as.mu.Lock()
		as.n++
		code := fmt.Sprintf("code-%d", as.n)
		as.codes[code] = [2]string{as.user, q.Get("code_challenge")}
		as.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		if as.down.Load() {
			w.WriteHeader(503)
			return
		}
		if as.gate != nil {
			<-as.gate
		}
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		as.mu.Lock()
		defer as.mu.Unlock()
		fail := func(code string) {
			w.WriteHeader(400)
			_, _ = fmt.Fprintf(w, `{"error":%q}`, code)
		}
		var user string
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			c, ok := as.codes[r.PostForm.Get("code")]
			delete(as.codes, r.PostForm.Get("code"))
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != c[1] {
				fail("invalid_grant")
				return
			}
			user = c[0]
		case "refresh_token":
			as.refreshN.Add(1)
			u, ok := as.refreshes[r.PostForm.Get("refresh_token")]
			delete(as.refreshes, r.PostForm.Get("refresh_token"))
			if !ok {
				fail("invalid_grant")
				return
			}
			user = u
		default:
			fail("unsupported_grant_type")
			return
		}
		as.n++
		refresh := fmt.Sprintf("REFRESH-%s-%d", user, as.n)
		as.refreshes[refresh] = user
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("acc-%s-%d", user, as.n), "token_type": "Bearer",
			"expires_in": as.expiresIn, "refresh_token": refresh})
	})
	mux.HandleFunc("POST /revoke", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		as.mu.Lock()
		delete(as.refreshes, r.PostForm.Get("token"))
		as.mu.Unlock()
		as.revoked.Add(1)
	})
	as.Server = httptest.NewServer(mux)
	t.Cleanup(as.Close)
	return as
}

func (as *upstreamAS) signIn(user string) {
	as.mu.Lock()
	as.user = user
	as.mu.Unlock()
}

func (as *upstreamAS) revokeAll() {
	as.mu.Lock()
	clear(as.refreshes)
	as.mu.Unlock()
}

// kit is an MCP server's side: Grants with its pages mounted.
type kit struct {
	*httptest.Server
	g         *Grants
	completed chan [2]string
}

type kitOptions struct {
	store    Store
	keys     *sealedcursor.KeyRing
	clock    *fakeClock
	identify func(r *http.Request) (string, bool)
}

func testKeys(t *testing.T) *sealedcursor.KeyRing {
	k, err := sealedcursor.NewKeyRing(sealedcursor.Key{ID: 1, Secret: []byte(strings.Repeat("k", 32))})
	require.NoError(t, err)
	return k
}

func newKit(t *testing.T, as *upstreamAS, ko kitOptions) *kit {
	k := &kit{completed: make(chan [2]string, 10)}
	mux := http.NewServeMux()
	k.Server = httptest.NewServer(mux)
	t.Cleanup(k.Close)
	if ko.store == nil {
		st, err := NewMemoryStore(0, nil)
		require.NoError(t, err)
		ko.store = st
	}
	if ko.keys == nil {
		ko.keys = testKeys(t)
	}
	now := time.Now
	if ko.clock != nil {
		now = ko.clock.Now
	}
	g, err := NewGrants(GrantOptions{
		Name: "photos", AuthorizeURL: as.URL + "/authorize", TokenURL: as.URL + "/token", RevokeURL: as.URL + "/revoke",
		ClientID: "mcp", ConnectURL: k.URL + "/connect/photos", CallbackURL: k.URL + "/callback/photos",
		Keys: ko.keys, Store: ko.store, Identify: ko.identify, Now: now, Logger: slog.New(slog.DiscardHandler),
		OnComplete: func(_ context.Context, user, id string) { k.completed <- [2]string{user, id} },
	})
	require.NoError(t, err)
	k.g = g
	mux.Handle("/connect/photos", g.ConnectHandler())
	mux.Handle("/callback/photos", g.CallbackHandler())
	return k
}

// browser is a user's browser: a cookie jar, following redirects.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar}
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	resp, err := c.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// connect walks caller's elicitation in a browser signed in as asUser at
// the upstream, and returns the elicitation.
func connect(t *testing.T, as *upstreamAS, k *kit, caller principal.Principal, asUser string) *ElicitationError {
	_, err := k.g.Token(context.Background(), caller)
	var el *ElicitationError
	require.ErrorAs(t, err, &el)
	as.signIn(asUser)
	status, body := get(t, browser(t), el.URL)
	require.Equal(t, 200, status, body)
	require.Contains(t, body, "Connected to photos")
	require.Equal(t, [2]string{caller.Key(), el.ID}, <-k.completed)
	return el
}

func TestGrantFlow(t *testing.T) {
	as := newUpstreamAS(t)
	k := newKit(t, as, kitOptions{})
	el := connect(t, as, k, alice(), "alice@photos")
	assert.True(t, strings.HasPrefix(el.URL, k.URL+"/connect/photos?link="))
	assert.NotEmpty(t, el.Message)
	tok, err := k.g.Token(context.Background(), alice())
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(tok, "acc-alice@photos-"), tok)
	_, err = k.g.Token(context.Background(), bob())
	var el2 *ElicitationError
	require.ErrorAs(t, err, &el2, "bob has not connected: alice's grant is hers")
	assert.NotEqual(t, el.ID, el2.ID)
	ok, err := k.g.Connected(context.Background(), alice())
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestGrantSealedAtRest(t *testing.T) {
	as := newUpstreamAS(t)
	st, _ := NewMemoryStore(0, nil)
	k := newKit(t, as, kitOptions{store: st})
	connect(t, as, k, alice(), "alice@photos")
	row, err := st.LoadGrant(context.Background(), "photos|alice")
	require.NoError(t, err)
	assert.NotContains(t, row, "REFRESH", "a dump holds no refresh token")
	assert.NotContains(t, row, "acc-")
}

func TestGrantStateReplay(t *testing.T) {
	as := newUpstreamAS(t)
	k := newKit(t, as, kitOptions{})
	_, err := k.g.Token(context.Background(), alice())
	var el *ElicitationError
	require.ErrorAs(t, err, &el)
	as.signIn("alice@photos")
	b := browser(t)
	var callback string
	b.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), k.URL+"/callback/") {
			callback = req.URL.String()
		}
		return nil
	}
	status, _ := get(t, b, el.URL)
	require.Equal(t, 200, status)
	<-k.completed
	require.NotEmpty(t, callback)
	require.NoError(t, k.g.Disconnect(context.Background(), alice()))
	status, body := get(t, b, callback)
	assert.Equal(t, 400, status, "a state is used once")
	assert.Contains(t, body, "already used")
	ok, _ := k.g.Connected(context.Background(), alice())
	assert.False(t, ok)
}

func TestGrantLinkOpenedByAnotherUser(t *testing.T) {
	as := newUpstreamAS(t)
	var who atomic.Value
	k := newKit(t, as, kitOptions{identify: func(*http.Request) (string, bool) {
		s, _ := who.Load().(string)
		return s, s != ""
	}})
	_, err := k.g.Token(context.Background(), alice())
	var el *ElicitationError
	require.ErrorAs(t, err, &el)
	who.Store("bob")
	status, body := get(t, browser(t), el.URL)
	assert.Equal(t, 403, status, "alice's link opened by bob")
	assert.Contains(t, body, "another user")
	who.Store("")
	status, _ = get(t, browser(t), el.URL)
	assert.Equal(t, 403, status, "nobody signed in")
	who.Store("alice")
	as.signIn("alice@photos")
	status, _ = get(t, browser(t), el.URL)
	assert.Equal(t, 200, status, "alice herself")
}

func TestGrantCallbackInAnotherBrowser(t *testing.T) {
	// Alice's client gets a link; an attacker opens it, and sends the
	// upstream's authorization URL (with the state) on to a victim, who
	// approves: the victim's browser comes back to the callback without
	// the cookie of the browser that started, and is refused.
	as := newUpstreamAS(t)
	k := newKit(t, as, kitOptions{})
	_, err := k.g.Token(context.Background(), alice())
	var el *ElicitationError
	require.ErrorAs(t, err, &el)
	attacker := browser(t)
	attacker.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := attacker.Get(el.URL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	authorize := resp.Header.Get("Location")
	as.signIn("victim@photos")
	status, body := get(t, browser(t), authorize)
	assert.Equal(t, 403, status, body)
	assert.Contains(t, body, "another browser")
	ok, _ := k.g.Connected(context.Background(), alice())
	assert.False(t, ok, "no grant of the victim's account for alice")
}

func TestGrantRowsSwappedBetweenUsers(t *testing.T) {
	as := newUpstreamAS(t)
	st, _ := NewMemoryStore(0, nil)
	k := newKit(t, as, kitOptions{store: st})
	connect(t, as, k, alice(), "alice@photos")
	connect(t, as, k, bob(), "bob@photos")
	ctx := context.Background()
	ra, _ := st.LoadGrant(ctx, "photos|alice")
	rb, _ := st.LoadGrant(ctx, "photos|bob")
	require.NoError(t, st.SaveGrant(ctx, "photos|alice", rb))
	require.NoError(t, st.SaveGrant(ctx, "photos|bob", ra))
	k2 := newKit(t, as, kitOptions{store: st}) // nothing cached
	for _, p := range []principal.Principal{alice(), bob()} {
		_, err := k2.g.Token(ctx, p)
		var el *ElicitationError
		assert.ErrorAs(t, err, &el, "%s: a row of another user does not open", p.Subject)
	}
	// Chunks spliced from two rows do not open either.
	connect(t, as, k2, alice(), "alice@photos")
	connect(t, as, k2, bob(), "bob@photos")
	ra, _ = st.LoadGrant(ctx, "photos|alice")
	rb, _ = st.LoadGrant(ctx, "photos|bob")
	pa, pb := strings.Split(ra, "."), strings.Split(rb, ".")
	spliced := strings.Join([]string{pa[0], pa[1], pb[2]}, ".")
	_, err := openRow(k2.g.rows, bindingOf("grant", "photos", "alice"), spliced)
	assert.Error(t, err)
}

func TestGrantRefreshSingleFlight(t *testing.T) {
	as := newUpstreamAS(t)
	clock := newClock()
	k := newKit(t, as, kitOptions{clock: clock})
	connect(t, as, k, alice(), "alice@photos")
	clock.Advance(time.Hour) // the access token expired
	as.gate = make(chan struct{})
	const n = 50
	var wg sync.WaitGroup
	toks := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			toks[i], _ = k.g.Token(context.Background(), alice())
		}()
	}
	for k.g.cache.joins() < n-1 {
		time.Sleep(time.Millisecond)
	}
	close(as.gate)
	wg.Wait()
	assert.EqualValues(t, 1, as.refreshN.Load(), "one refresh for 50 concurrent calls")
	for _, tok := range toks {
		assert.Equal(t, toks[0], tok)
		assert.True(t, strings.HasPrefix(tok, "acc-alice@photos-"))
	}
}

func TestGrantRefreshFailure(t *testing.T) {
	as := newUpstreamAS(t)
	clock := newClock()
	k := newKit(t, as, kitOptions{clock: clock})
	connect(t, as, k, alice(), "alice@photos")
	clock.Advance(time.Hour)
	as.down.Store(true)
	_, err := k.g.Token(context.Background(), alice())
	assert.ErrorIs(t, err, ErrUnavailable, "the AS down: a generic error")
	ok, _ := k.g.Connected(context.Background(), alice())
	assert.True(t, ok, "and the grant is kept")
	as.down.Store(false)
	as.revokeAll()
	_, err = k.g.Token(context.Background(), alice())
	var el *ElicitationError
	assert.ErrorAs(t, err, &el, "invalid_grant: the user connects again")
	ok, _ = k.g.Connected(context.Background(), alice())
	assert.False(t, ok)
}

func TestGrantDisconnect(t *testing.T) {
	as := newUpstreamAS(t)
	k := newKit(t, as, kitOptions{})
	connect(t, as, k, alice(), "alice@photos")
	_, err := k.g.Token(context.Background(), alice())
	require.NoError(t, err)
	require.NoError(t, k.g.Disconnect(context.Background(), alice()))
	assert.EqualValues(t, 1, as.revoked.Load(), "the upstream is told")
	_, err = k.g.Token(context.Background(), alice())
	var el *ElicitationError
	assert.ErrorAs(t, err, &el, "a cached token is gone too")
}

func TestGrantFleet(t *testing.T) {
	as := newUpstreamAS(t)
	st, _ := NewMemoryStore(0, nil)
	keys := testKeys(t)
	one := newKit(t, as, kitOptions{store: st, keys: keys})
	two := newKit(t, as, kitOptions{store: st, keys: keys})
	connect(t, as, one, alice(), "alice@photos")
	tok, err := two.g.Token(context.Background(), alice())
	require.NoError(t, err, "a grant made on one instance is used on the other")
	assert.True(t, strings.HasPrefix(tok, "acc-alice@photos-"))
}

func TestGrantUpstream401RefreshesOnceThenElicits(t *testing.T) {
	as := newUpstreamAS(t)
	k := newKit(t, as, kitOptions{})
	connect(t, as, k, alice(), "alice@photos")
	var refuse atomic.Int64
	var seen []string
	var mu sync.Mutex
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		if refuse.Add(-1) >= 0 {
			w.WriteHeader(401)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer api.Close()
	refuse.Store(1)
	resp, err := k.g.Client(context.Background(), alice()).Get(api.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	require.Len(t, seen, 2)
	assert.NotEqual(t, seen[0], seen[1], "refreshed after the 401")
	assert.EqualValues(t, 1, as.refreshN.Load())

	refuse.Store(2)
	_, err = k.g.Client(context.Background(), alice()).Get(api.URL)
	var el *ElicitationError
	assert.ErrorAs(t, err, &el, "refused after a refresh: the elicitation again")
	assert.EqualValues(t, 2, as.refreshN.Load(), "one refresh, no loop")
	ok, _ := k.g.Connected(context.Background(), alice())
	assert.False(t, ok)
}

func TestGrantLinks(t *testing.T) {
	as := newUpstreamAS(t)
	clock := newClock()
	k := newKit(t, as, kitOptions{clock: clock})
	el, err := k.g.Elicit(alice())
	require.NoError(t, err)
	b := browser(t)
	for name, u := range map[string]string{
		"tampered": el.URL[:len(el.URL)-2] + "xx",
		"no link":  k.URL + "/connect/photos",
		"garbage":  k.URL + "/connect/photos?link=%00%01",
	} {
		status, _ := get(t, b, u)
		assert.Equal(t, 400, status, name)
	}
	clock.Advance(DefaultLinkTTL + sealedcursor.DefaultSkew + time.Second)
	status, _ := get(t, b, el.URL)
	assert.Equal(t, 400, status, "expired")
	_, err = k.g.Elicit(principal.Principal{ClientID: "c"})
	assert.ErrorIs(t, err, ErrNoSubject)
	status, _ = get(t, b, k.URL+"/callback/photos?state=nope&code=x")
	assert.Equal(t, 400, status, "an unknown state")
}

func TestPendingExpires(t *testing.T) {
	clock := newClock()
	st, _ := NewMemoryStore(2, clock.Now)
	ctx := context.Background()
	require.NoError(t, st.SavePending(ctx, "a", "row", clock.Now().Add(time.Minute)))
	clock.Advance(time.Minute)
	_, err := st.TakePending(ctx, "a")
	assert.ErrorIs(t, err, ErrNoPending)
	for _, s := range []string{"x", "y", "z"} {
		require.NoError(t, st.SavePending(ctx, s, "row", clock.Now().Add(time.Minute)))
	}
	assert.LessOrEqual(t, len(st.pending), 2, "bounded")
}

func TestNewGrantsMisuse(t *testing.T) {
	keys := testKeys(t)
	st, _ := NewMemoryStore(0, nil)
	good := GrantOptions{Name: "p", AuthorizeURL: "https://as/a", TokenURL: "https://as/t", ClientID: "c",
		ConnectURL: "https://mcp/c", CallbackURL: "https://mcp/cb", Keys: keys, Store: st}
	_, err := NewGrants(good)
	require.NoError(t, err)
	for name, mod := range map[string]func(*GrantOptions){
		"name":     func(o *GrantOptions) { o.Name = "a b" },
		"no keys":  func(o *GrantOptions) { o.Keys = nil },
		"no store": func(o *GrantOptions) { o.Store = nil },
		"callback": func(o *GrantOptions) { o.CallbackURL = "/cb" },
		"client":   func(o *GrantOptions) { o.ClientID = "" },
		"ttl":      func(o *GrantOptions) { o.LinkTTL = -1 },
		"revoke":   func(o *GrantOptions) { o.RevokeURL = "ftp://x" },
	} {
		o := good
		mod(&o)
		_, err := NewGrants(o)
		assert.Error(t, err, name)
	}
	_, err = NewMemoryStore(-1, nil)
	assert.Error(t, err)
	_ = errors.New
}

// Opening a link twice: the first flow's state opens nothing any more,
// and the store holds one authorization in progress per elicitation.
func TestGrantLinkOpenedTwice(t *testing.T) {
	as := newUpstreamAS(t)
	st, _ := NewMemoryStore(0, nil)
	k := newKit(t, as, kitOptions{store: st})
	el, err := k.g.Elicit(alice())
	require.NoError(t, err)
	noFollow := func() *http.Client {
		b := browser(t)
		b.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		return b
	}
	first, second := noFollow(), noFollow()
	locate := func(b *http.Client) string {
		resp, err := b.Get(el.URL)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusFound, resp.StatusCode)
		return resp.Header.Get("Location")
	}
	authFirst := locate(first)
	authSecond := locate(second)
	assert.Len(t, st.pending, 1, "one authorization in progress per elicitation")
	as.signIn("alice@photos")
	first.CheckRedirect = nil
	status, body := get(t, first, authFirst)
	assert.Equal(t, 400, status, "the replaced flow: %s", body)
	second.CheckRedirect = nil
	status, body = get(t, second, authSecond)
	assert.Equal(t, 200, status, body)
	assert.Contains(t, body, "Connected to photos")
}
