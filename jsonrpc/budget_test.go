package jsonrpc_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/principal"
)

// signedIn returns r with subject's principal in its context, as an
// authentication middleware in front leaves it.
func signedIn(t *testing.T, r *http.Request, subject string) *http.Request {
	t.Helper()
	ctx, err := principal.NewContext(r.Context(), principal.Principal{Issuer: "https://issuer.example", Subject: subject})
	require.NoError(t, err)
	return r.WithContext(ctx)
}

// ping returns a ping request whose params hold pad bytes.
func ping(pad int) string {
	return `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("y", pad) + `"}}`
}

// An anonymous caller's body is held to the small anonymous limit: a
// declared length over it is refused before anything is read; a
// signed-in caller's body of the same size is read.
func TestReadBodyAnonymousLimit(t *testing.T) {
	big := ping(100 << 10)
	w := httptest.NewRecorder()
	body := &countingReader{r: strings.NewReader(big)}
	r := httptest.NewRequest(http.MethodPost, "/mcp", body)
	r.Header.Set("Content-Type", "application/json")
	r.ContentLength = int64(len(big))
	_, ok := jsonrpc.Limits{}.ReadBody(w, r)
	require.False(t, ok)
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
	assert.Zero(t, body.n, "nothing read of a body declared too large")

	// Undeclared (chunked): cut at the limit.
	r = post(big, "application/json")
	r.ContentLength = -1
	w = httptest.NewRecorder()
	_, ok = jsonrpc.Limits{}.ReadBody(w, r)
	require.False(t, ok)
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code)

	// At the anonymous limit: read.
	at := ping(jsonrpc.DefaultAnonymousMaxBytes - len(ping(0)))
	require.Len(t, at, jsonrpc.DefaultAnonymousMaxBytes)
	w = httptest.NewRecorder()
	b, ok := jsonrpc.Limits{}.ReadBody(w, post(at, "application/json"))
	require.True(t, ok, "got %d", w.Code)
	b.Release()

	// Signed in: the full limit.
	w = httptest.NewRecorder()
	b, ok = jsonrpc.Limits{}.ReadBody(w, signedIn(t, post(big, "application/json"), "alice"))
	require.True(t, ok, "got %d", w.Code)
	b.Release()

	// A configured anonymous limit; it never exceeds MaxBytes.
	w = httptest.NewRecorder()
	_, ok = jsonrpc.Limits{AnonymousMaxBytes: 100}.ReadBody(w, post(ping(100), "application/json"))
	assert.False(t, ok)
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
	w = httptest.NewRecorder()
	_, ok = jsonrpc.Limits{MaxBytes: 100, AnonymousMaxBytes: 1 << 20}.ReadBody(w, post(ping(100), "application/json"))
	assert.False(t, ok)
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// hold reads a body for caller ("": anonymous; "@ADDR": anonymous from
// ADDR) and keeps it; it returns the status of the answer when the body
// was refused, 0 when held.
func hold(t *testing.T, l jsonrpc.Limits, caller string, size int, held *[]*jsonrpc.Body) int {
	t.Helper()
	r := post(ping(size), "application/json")
	if addr, ok := strings.CutPrefix(caller, "@"); ok {
		r.RemoteAddr = addr + ":4000"
	} else if caller != "" {
		r = signedIn(t, r, caller)
	}
	w := httptest.NewRecorder()
	b, ok := l.ReadBody(w, r)
	if !ok {
		if w.Code == http.StatusServiceUnavailable {
			assert.NotEmpty(t, w.Header().Get("Retry-After"), "503 says when to retry")
		}
		return w.Code
	}
	*held = append(*held, b)
	return 0
}

// No caller denies another (issue 27): one address's anonymous crowd
// fills only its share of the anonymous pool, all of them only the pool,
// one principal only its share, and the principals together only the
// budget less the anonymous pool; everyone else is served meanwhile.
func TestBodyBudgetShares(t *testing.T) {
	budget := jsonrpc.NewBodyBudget(1<<20, jsonrpc.BudgetOptions{Anonymous: 64 << 10, AnonymousPerAddress: 16 << 10, PerPrincipal: 256 << 10})
	l := jsonrpc.Limits{Budget: budget}
	var held []*jsonrpc.Body
	defer func() {
		for _, b := range held {
			b.Release()
		}
		assert.Zero(t, budget.InUse(), "everything returned")
	}()

	// Anonymous bodies of 4 KiB: 4 fit an address's share.
	for i := range 4 {
		require.Zero(t, hold(t, l, "@203.0.113.7", 100, &held), "anonymous body %d", i)
	}
	assert.Equal(t, http.StatusServiceUnavailable, hold(t, l, "@203.0.113.7", 100, &held), "the address's share is full")
	require.Zero(t, hold(t, l, "@[2001:db8::1]", 100, &held))
	for i := range 3 {
		require.Zero(t, hold(t, l, "@[2001:db8::2]", 100, &held), "%d", i)
	}
	assert.Equal(t, http.StatusServiceUnavailable, hold(t, l, "@[2001:db8::99]", 100, &held), "an IPv6 /64 is one address")
	require.Zero(t, hold(t, l, "@203.0.113.8", 100, &held), "another address is served")
	// 16 fit the pool: 7 more from other addresses, then it is full.
	for i := range 7 {
		require.Zero(t, hold(t, l, "@198.51.100."+strconv.Itoa(i), 100, &held), "anonymous body from address %d", i)
	}
	assert.Equal(t, http.StatusServiceUnavailable, hold(t, l, "@198.51.100.200", 100, &held), "the anonymous pool is full")
	require.Zero(t, hold(t, l, "alice", 100, &held), "alice is served beside the anonymous crowd")

	// Mallory takes her share (256 KiB: 64 small bodies), no more.
	for i := range 64 {
		require.Zero(t, hold(t, l, "mallory", 100, &held), "mallory's body %d", i)
	}
	assert.Equal(t, http.StatusServiceUnavailable, hold(t, l, "mallory", 100, &held), "mallory's share is full")
	require.Zero(t, hold(t, l, "alice", 100, &held), "alice is served beside mallory")
	require.Zero(t, hold(t, l, "bob", 200<<10, &held), "bob's large body too")

	// Many principals together fill at most the budget less the anonymous
	// pool: anonymous callers keep theirs.
	full := false
	for i := 0; i < 64 && !full; i++ {
		full = hold(t, l, "user"+strings.Repeat("x", i), 200<<10, &held) == http.StatusServiceUnavailable
	}
	require.True(t, full, "the signed-in part of the budget fills")
	assert.LessOrEqual(t, budget.InUse(), int64(1<<20))
	held[0].Release() // an anonymous body of 203.0.113.7
	held = held[1:]
	require.Zero(t, hold(t, l, "@203.0.113.9", 100, &held), "an anonymous caller is served with the principals' part full")
}

// The Decoder takes the principal an authentication middleware in front
// put in the context: a signed-in caller's large body is read, an
// anonymous one's is refused.
func TestDecoderReadsAsThePrincipal(t *testing.T) {
	var served int
	h := jsonrpc.Decoder(jsonrpc.Limits{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served++
		w.WriteHeader(http.StatusNoContent)
	}))
	big := ping(200 << 10)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, post(big, "application/json"))
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code, "anonymous")
	w = httptest.NewRecorder()
	r := post(big, "application/json")
	r.Header.Set("Authorization", "Bearer not-verified-by-anyone")
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code, "credentials nothing verified count for nothing")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, signedIn(t, post(big, "application/json"), "alice"))
	assert.Equal(t, http.StatusNoContent, w.Code, "signed in")
	assert.Equal(t, 1, served)
}

// Shares larger than the budget are cut to it.
func TestNewBodyBudgetCutsShares(t *testing.T) {
	b := jsonrpc.NewBodyBudget(64<<10, jsonrpc.BudgetOptions{Anonymous: 1 << 30, PerPrincipal: 1 << 30})
	l := jsonrpc.Limits{Budget: b}
	var held []*jsonrpc.Body
	defer func() {
		for _, b := range held {
			b.Release()
		}
	}()
	n := 0
	for hold(t, l, "@192.0.2."+strconv.Itoa(n), 10, &held) == 0 {
		n++
	}
	assert.Equal(t, 8, n, "the anonymous pool is at most half the budget: 32 KiB")
	n = 0
	for hold(t, l, "alice", 10, &held) == 0 {
		n++
	}
	assert.Equal(t, 7, n, "a share is at most the rest less its reserve (1/8)")
}

// Limits.ClientAddr names the address an anonymous body is charged to
// (behind a proxy, the one it vouches for).
func TestReadBodyClientAddr(t *testing.T) {
	budget := jsonrpc.NewBodyBudget(1<<20, jsonrpc.BudgetOptions{Anonymous: 64 << 10, AnonymousPerAddress: 4 << 10})
	var from string
	l := jsonrpc.Limits{Budget: budget, ClientAddr: func(*http.Request) netip.Addr { return netip.MustParseAddr(from) }}
	var held []*jsonrpc.Body
	defer func() {
		for _, b := range held {
			b.Release()
		}
	}()
	from = "203.0.113.7"
	require.Zero(t, hold(t, l, "@127.0.0.1", 10, &held))
	assert.Equal(t, http.StatusServiceUnavailable, hold(t, l, "@127.0.0.1", 10, &held), "the client's share is full")
	from = "203.0.113.8"
	assert.Zero(t, hold(t, l, "@127.0.0.1", 10, &held), "another client behind the same proxy is served")
}

// A crowd of principals, each filling all the share it can get, takes
// the unreserved part of the signed-in pool, never the reserve: a
// principal holding nothing is still served, and so is one holding a
// little. The shares shrink as more principals hold them. The refusals
// are logged once (rate-limited), at WARN, naming the pool and no
// caller. Fails before issue 35: the eighth principal took the last of
// the pool.
func TestBodyBudgetCrowdLeavesTheReserve(t *testing.T) {
	for _, n := range []int{8, 16, 32} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var log strings.Builder
			budget := jsonrpc.NewBodyBudget(8<<20, jsonrpc.BudgetOptions{Log: slog.New(slog.NewTextHandler(&log, nil))})
			l := jsonrpc.Limits{Budget: budget}
			var held []*jsonrpc.Body
			defer func() {
				for _, b := range held {
					b.Release()
				}
				assert.Zero(t, budget.InUse(), "everything returned")
			}()
			got := make([]int64, n)
			for i := range n {
				before := budget.InUse()
				for hold(t, l, "mallory"+strconv.Itoa(i), 100, &held) == 0 {
				}
				got[i] = budget.InUse() - before
			}
			// The reserve: 1/8 of the signed-in pool, 15 KiB light for each.
			signedPool := int64(8<<20 - 8<<20/16)
			assert.LessOrEqual(t, budget.InUse(), signedPool-signedPool/8+int64(n)*(signedPool/8/64), "the crowd holds at most the unreserved part and a light amount each")
			assert.LessOrEqual(t, got[n-1], got[0], "shares shrink as more principals hold them")
			for _, who := range []string{"alice", "bob", "carol"} {
				require.Zero(t, hold(t, l, who, 100, &held), "%s holds nothing and is served", who)
			}
			require.Zero(t, hold(t, l, "alice", 100, &held), "alice holds little and is served again")
			assert.Equal(t, 1, strings.Count(log.String(), "\n"), "one line however many refusals: %s", log.String())
			assert.Contains(t, log.String(), "level=WARN")
			assert.Contains(t, log.String(), "pool=signed-in")
			assert.NotContains(t, log.String(), "mallory")
		})
	}
}

// A crowd of addresses (IPv6 /64s) likewise leaves the anonymous
// pool's reserve: a new client at another address is served.
func TestBodyBudgetAddressCrowdLeavesTheReserve(t *testing.T) {
	for _, n := range []int{8, 16, 32} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			budget := jsonrpc.NewBodyBudget(0, jsonrpc.BudgetOptions{Log: slog.New(slog.DiscardHandler)})
			l := jsonrpc.Limits{Budget: budget}
			var held []*jsonrpc.Body
			defer func() {
				for _, b := range held {
					b.Release()
				}
			}()
			for i := range n {
				for j := 0; hold(t, l, "@[2001:db8:0:"+strconv.FormatInt(int64(i), 16)+"::"+strconv.Itoa(j+1)+"]", 100, &held) == 0; j++ {
				}
			}
			pool := int64(jsonrpc.DefaultBodyBudget / 16)
			assert.LessOrEqual(t, budget.InUse(), pool-pool/4+int64(n)*8<<10, "the crowd holds at most the unreserved part and 8 KiB each")
			require.Zero(t, hold(t, l, "@198.51.100.7", 100, &held), "a new client is served")
			require.Zero(t, hold(t, l, "@[2001:db8:1::1]", 100, &held), "and another")
		})
	}
}

// ReadRawFor reads a body under the caller's share, undecoded: the
// bytes as sent, charged until released; over the limit a
// *TooLargeError, with no room ErrBusy.
func TestReadRawFor(t *testing.T) {
	budget := jsonrpc.NewBodyBudget(1<<20, jsonrpc.BudgetOptions{PerPrincipal: 64 << 10, Log: slog.New(slog.DiscardHandler)})
	l := jsonrpc.Limits{Budget: budget}
	alice := &principal.Principal{Issuer: "https://issuer.example", Subject: "alice"}
	body := `{"body":"` + strings.Repeat("z", 10<<10) + `"}`
	raw, release, err := l.ReadRawFor(httptest.NewRecorder(), post(body, "text/plain"), alice, 32<<10)
	require.NoError(t, err)
	assert.Equal(t, body, string(raw))
	assert.Positive(t, budget.InUse())
	release()
	release()
	assert.Zero(t, budget.InUse(), "released once, however often called")

	_, _, err = l.ReadRawFor(httptest.NewRecorder(), post(body, "text/plain"), alice, 1<<10)
	var tl *jsonrpc.TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, int64(1<<10), tl.Limit)

	var held []func()
	for {
		_, release, err := l.ReadRawFor(httptest.NewRecorder(), post(body, "text/plain"), alice, 32<<10)
		if err != nil {
			assert.ErrorIs(t, err, jsonrpc.ErrBusy)
			break
		}
		held = append(held, release)
	}
	assert.NotEmpty(t, held)
	for _, r := range held {
		r()
	}
	assert.Zero(t, budget.InUse())
}
