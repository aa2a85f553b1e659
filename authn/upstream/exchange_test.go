package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/fakeclock"
	"github.com/mcpkit/mcpkit/principal"
)

// fakeClock is a settable clock.
type fakeClock = fakeclock.Clock

func newClock() *fakeClock { return fakeclock.New(time.Unix(1_800_000_000, 0)) }

// exchangeAS is a token endpoint that supports the token-exchange grant
// for one audience: it answers "x-<subject token>-<n>".
type exchangeAS struct {
	*httptest.Server
	calls    atomic.Int64
	gate     chan struct{} // when set, each exchange waits for it
	audience string
	answer   func(w http.ResponseWriter) bool // when set and true, it answered
	lastForm atomic.Value
}

func newExchangeAS(t *testing.T) *exchangeAS {
	as := &exchangeAS{audience: "https://photos.example/api"}
	as.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := as.calls.Add(1)
		if as.gate != nil {
			<-as.gate
		}
		if err := r.ParseForm(); err != nil {
			w.WriteHeader(400)
			return
		}
		as.lastForm.Store(r.PostForm)
		if as.answer != nil && as.answer(w) {
			return
		}
		id, secret, ok := r.BasicAuth()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case !ok || id != "mcp" || secret != "s3cret":
			w.WriteHeader(401)
			_, _ = io.WriteString(w, `{"error":"invalid_client"}`)
		case r.PostForm.Get("grant_type") != grantTokenExchange || r.PostForm.Get("subject_token_type") != TokenTypeAccessToken ||
			r.PostForm.Get("requested_token_type") != TokenTypeAccessToken:
			w.WriteHeader(400)
			_, _ = io.WriteString(w, `{"error":"unsupported_grant_type"}`)
		case r.PostForm.Get("audience") != as.audience:
			w.WriteHeader(400)
			_, _ = io.WriteString(w, `{"error":"invalid_target","error_description":"unknown audience SECRET-DETAIL"}`)
		case r.PostForm.Get("scope") == "admin":
			w.WriteHeader(400)
			_, _ = io.WriteString(w, `{"error":"invalid_scope"}`)
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{
				"access_token": fmt.Sprintf("x-%s-%d", r.PostForm.Get("subject_token"), n), "token_type": "Bearer",
				"expires_in": 300, "issued_token_type": TokenTypeAccessToken,
			})
		}
	}))
	t.Cleanup(as.Close)
	return as
}

func newTestExchanger(t *testing.T, as *exchangeAS, clock *fakeClock, mod func(*ExchangeOptions)) *Exchanger {
	o := ExchangeOptions{TokenURL: as.URL, ClientID: "mcp", ClientSecret: "s3cret", Audience: "https://photos.example/api",
		Now: clock.Now, Logger: slog.New(slog.DiscardHandler)}
	if mod != nil {
		mod(&o)
	}
	x, err := NewExchanger(o)
	require.NoError(t, err)
	return x
}

func alice() principal.Principal {
	return principal.Principal{Subject: "alice", ClientID: "c1", Scopes: []string{"photos"}, Audience: "https://mcp.example/mcp"}
}
func bob() principal.Principal {
	return principal.Principal{Subject: "bob", ClientID: "c1", Scopes: []string{"photos"}, Audience: "https://mcp.example/mcp"}
}

func withSubject(tok string) context.Context {
	return context.WithValue(context.Background(), subjectKey{}, tok)
}

func TestExchangeCachedPerCaller(t *testing.T) {
	as := newExchangeAS(t)
	x := newTestExchanger(t, as, newClock(), nil)
	tok, err := x.Token(withSubject("A"), alice())
	require.NoError(t, err)
	assert.Equal(t, "x-A-1", tok)
	form := as.lastForm.Load().(url.Values)
	assert.Equal(t, []string{"A"}, form["subject_token"])
	tok, err = x.Token(withSubject("A"), alice())
	require.NoError(t, err)
	assert.Equal(t, "x-A-1", tok, "the cached token")
	tok, err = x.Token(withSubject("B"), bob())
	require.NoError(t, err)
	assert.Equal(t, "x-B-2", tok, "another caller never gets alice's token")
	other := alice()
	other.Scopes = []string{"photos", "extra"}
	tok, err = x.Token(withSubject("A2"), other)
	require.NoError(t, err)
	assert.Equal(t, "x-A2-3", tok, "other scopes: another exchange")
	assert.EqualValues(t, 3, as.calls.Load())
}

func TestExchangeSingleFlight(t *testing.T) {
	as := newExchangeAS(t)
	as.gate = make(chan struct{})
	x := newTestExchanger(t, as, newClock(), nil)
	const n = 100
	var wg sync.WaitGroup
	toks := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			toks[i], errs[i] = x.Token(withSubject("A"), alice())
		}()
	}
	for x.cache.joins() < n-1 { // every other caller waits on the first one's exchange
		time.Sleep(time.Millisecond)
	}
	close(as.gate)
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, "x-A-1", toks[i])
	}
	assert.EqualValues(t, 1, as.calls.Load(), "100 concurrent calls of one caller: one exchange")
}

func TestExchangeFirstCallerCancelledOthersServed(t *testing.T) {
	as := newExchangeAS(t)
	as.gate = make(chan struct{})
	x := newTestExchanger(t, as, newClock(), nil)
	ctx, cancel := context.WithCancel(withSubject("A"))
	first := make(chan error, 1)
	go func() { _, err := x.Token(ctx, alice()); first <- err }()
	for as.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan string, 1)
	go func() { tok, _ := x.Token(withSubject("A"), alice()); second <- tok }()
	for x.cache.joins() < 1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	assert.ErrorIs(t, <-first, context.Canceled)
	close(as.gate)
	assert.Equal(t, "x-A-1", <-second, "the exchange went on for the caller still waiting")
}

func TestExchangeExpiry(t *testing.T) {
	as := newExchangeAS(t)
	clock := newClock()
	x := newTestExchanger(t, as, clock, nil)
	_, err := x.Token(withSubject("A"), alice())
	require.NoError(t, err)
	clock.Advance(300*time.Second - DefaultLeeway - time.Second)
	tok, _ := x.Token(withSubject("A"), alice())
	assert.Equal(t, "x-A-1", tok, "still fresh")
	clock.Advance(time.Second)
	tok, _ = x.Token(withSubject("A"), alice())
	assert.Equal(t, "x-A-2", tok, "replaced the leeway before it expires")
}

func TestExchangeRefusals(t *testing.T) {
	var logs strings.Builder
	as := newExchangeAS(t)
	x := newTestExchanger(t, as, newClock(), func(o *ExchangeOptions) {
		o.Audience = "https://unknown.example"
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	_, err := x.Token(withSubject("A"), alice())
	assert.ErrorIs(t, err, ErrRefused, "an audience the AS does not know")
	assert.NotContains(t, err.Error(), "SECRET-DETAIL", "the AS's details go to the log only")
	assert.Contains(t, logs.String(), "invalid_target")
	assert.NotContains(t, logs.String(), "x-A", "no token in the log")

	x = newTestExchanger(t, as, newClock(), func(o *ExchangeOptions) { o.Scopes = []string{"admin"} })
	_, err = x.Token(withSubject("A"), alice())
	assert.ErrorIs(t, err, ErrRefused, "invalid_scope without StepUpScopes: a generic refusal")

	x = newTestExchanger(t, as, newClock(), func(o *ExchangeOptions) {
		o.Scopes = []string{"admin"}
		o.StepUpScopes = []string{"photos:admin"}
	})
	_, err = x.Token(withSubject("A"), alice())
	var se *principal.ScopeError
	require.ErrorAs(t, err, &se, "invalid_scope with StepUpScopes: a step-up")
	assert.Equal(t, []string{"photos:admin"}, se.Required)

	x = newTestExchanger(t, as, newClock(), func(o *ExchangeOptions) { o.ClientSecret = "wrong" })
	_, err = x.Token(withSubject("A"), alice())
	assert.ErrorIs(t, err, ErrRefused)

	_, err = x.Token(context.Background(), alice())
	assert.ErrorIs(t, err, ErrNoSubjectToken)
	assert.EqualValues(t, 4, as.calls.Load(), "a refusal is not cached as a token, and no call without a subject token")
}

func TestExchangeASDown(t *testing.T) {
	as := newExchangeAS(t)
	as.answer = func(w http.ResponseWriter) bool {
		w.WriteHeader(http.StatusBadGateway)
		return true
	}
	x := newTestExchanger(t, as, newClock(), nil)
	_, err := x.Token(withSubject("A"), alice())
	assert.ErrorIs(t, err, ErrUnavailable, "a 502")
	as.answer = func(w http.ResponseWriter) bool {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"t","token_type":"mac"}`)
		return true
	}
	_, err = x.Token(withSubject("A"), alice())
	assert.ErrorIs(t, err, ErrUnavailable, "not a bearer token")
	as.Close()
	_, err = x.Token(withSubject("A"), alice())
	assert.ErrorIs(t, err, ErrUnavailable, "unreachable")
	assert.Zero(t, x.cache.len())
}

func TestExchangeClientRetriesOnceOn401(t *testing.T) {
	as := newExchangeAS(t)
	x := newTestExchanger(t, as, newClock(), nil)
	var seen []string
	var mu sync.Mutex
	refuse := atomic.Int64{}
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
	ctx := withSubject("MCP-TOKEN")
	req, _ := http.NewRequestWithContext(ctx, "GET", api.URL, nil)
	req.Header.Set("Authorization", "Bearer MCP-TOKEN")
	refuse.Store(1)
	resp, err := x.Client(ctx, alice()).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, []string{"Bearer x-MCP-TOKEN-1", "Bearer x-MCP-TOKEN-2"}, seen, "a refused token is replaced once; the MCP token never reaches the upstream")

	refuse.Store(2)
	seen = nil
	_, err = x.Client(ctx, alice()).Do(req)
	assert.ErrorIs(t, err, ErrRefused, "refused twice: the caller is told, no loop")
	assert.Len(t, seen, 2)
}

func TestNewExchangerMisuse(t *testing.T) {
	for name, o := range map[string]ExchangeOptions{
		"no token URL":   {ClientID: "c", Audience: "a"},
		"relative URL":   {TokenURL: "/token", ClientID: "c", Audience: "a"},
		"no client":      {TokenURL: "https://as/token", Audience: "a"},
		"no audience":    {TokenURL: "https://as/token", ClientID: "c"},
		"bad scope":      {TokenURL: "https://as/token", ClientID: "c", Audience: "a", Scopes: []string{"a b"}},
		"negative bound": {TokenURL: "https://as/token", ClientID: "c", Audience: "a", MaxEntries: -1},
	} {
		_, err := NewExchanger(o)
		assert.Error(t, err, name)
	}
}

func TestCaptureSubjectToken(t *testing.T) {
	var got string
	var ok bool
	h := CaptureSubjectToken(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, ok = subjectToken(r.Context()) }))
	for hdr, want := range map[string]string{"Bearer abc": "abc", "bearer abc": "abc", "DPoP abc": "", "Basic abc": "", "Bearer a b": "", "": ""} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		if hdr != "" {
			r.Header.Set("Authorization", hdr)
		}
		got, ok = "", false
		h.ServeHTTP(httptest.NewRecorder(), r)
		assert.Equal(t, want, got, hdr)
		assert.Equal(t, want != "", ok, hdr)
	}
	_ = errors.New
}
