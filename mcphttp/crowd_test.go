package mcphttp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// lockedBuffer is a log sink safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// crowdServer is the fixture's endpoint over loopback behind a trusted
// proxy at 127.0.0.1 (X-Forwarded-For names the client), with the
// default body budget of its own, logging to a buffer.
type crowdServer struct {
	f      *mcptest.Fixture
	srv    *httptest.Server
	budget *jsonrpc.BodyBudget
	log    *lockedBuffer
}

func newCrowdServer(t *testing.T) *crowdServer {
	t.Helper()
	cs := &crowdServer{log: &lockedBuffer{}}
	cs.budget = jsonrpc.NewBodyBudget(0, jsonrpc.BudgetOptions{Log: slog.New(slog.NewTextHandler(cs.log, nil))})
	tp, err := ratelimit.NewTrustedProxies("127.0.0.1/32", "")
	require.NoError(t, err)
	cs.f = mcptest.New(t, mcptest.Options{Endpoint: func(o *mcphttp.Options) {
		o.Limits.Budget = cs.budget
		o.Limits.ClientAddr = tp.ClientAddr
	}})
	cs.srv = httptest.NewServer(cs.f.EP)
	t.Cleanup(cs.srv.Close)
	return cs
}

// holdBody opens a connection and sends the head of a POST declaring
// declared bytes and then send bytes of its body, and leaves it open
// (closed at the test's end). from is the X-Forwarded-For client, token
// the bearer token ("" for none). It returns the bytes written.
func (cs *crowdServer) holdBody(t *testing.T, token, from string, declared, send int) int {
	t.Helper()
	c, err := net.Dial("tcp", cs.srv.Listener.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	head := fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n",
		cs.srv.Listener.Addr(), declared)
	if token != "" {
		head += "Authorization: Bearer " + token + "\r\n"
	}
	if from != "" {
		head += "X-Forwarded-For: " + from + "\r\n"
	}
	prefix := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`
	body := head + "\r\n" + prefix + strings.Repeat("y", send-len(prefix))
	// A refused body's connection is answered and closed while its bytes
	// are still being written: the error is the refusal, not the test's.
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	n, _ := io.WriteString(c, body)
	return n
}

// settle waits until the budget's use stops changing: the crowd's
// bodies are read as far as they will be.
func (cs *crowdServer) settle(t *testing.T) {
	t.Helper()
	last, still := int64(-1), 0
	for deadline := time.Now().Add(20 * time.Second); still < 5; {
		require.True(t, time.Now().Before(deadline), "the crowd's memory never settled")
		time.Sleep(20 * time.Millisecond)
		if u := cs.budget.InUse(); u == last {
			still++
		} else {
			last, still = u, 0
		}
	}
}

// post sends one call and reports whether it was served (200).
func (cs *crowdServer) post(t *testing.T, token, from, body string) bool {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, cs.srv.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if from != "" {
		req.Header.Set("X-Forwarded-For", from)
	}
	resp, err := cs.srv.Client().Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// honest has alice, bob and carol list their resources rounds times
// each, and a new anonymous client at another address initialize rounds
// times, and returns the fractions served.
func (cs *crowdServer) honest(t *testing.T, rounds int) (signed, anon float64) {
	t.Helper()
	tokens := []string{cs.f.Token(t, "alice"), cs.f.Token(t, "bob"), cs.f.Token(t, "carol")}
	list := mcptest.Legacy(1, "resources/list", nil)
	initialize := mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "new", "version": "1"}})
	var ok, aok int
	for i := range rounds {
		for _, tok := range tokens {
			if cs.post(t, tok, "192.0.2.10", list) {
				ok++
			}
		}
		if cs.post(t, "", fmt.Sprintf("198.51.100.%d", 100+i%100), initialize) {
			aok++
		}
	}
	return float64(ok) / float64(rounds*len(tokens)), float64(aok) / float64(rounds)
}

// Attack (issue 35): a crowd of 8, 16 or 32 signed-in identities, each
// with two connections that declare 4 MiB, send 2 MiB + 4 KiB and hold,
// used to take the whole signed-in pool once there were eight of them
// (every share was 1/8 of the budget): alice, bob and carol got 503 on
// 98 % of their calls. Shares now shrink as more identities hold them,
// and a reserve is kept for callers holding little: honest callers and a
// new anonymous client are served, and the refusals are logged at WARN
// without identities. Fails before: signed-in served 0 %.
func TestIdentityCrowdCannotTakeBodyMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends up to 128 MiB over loopback")
	}
	for _, n := range []int{8, 16, 32} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			cs := newCrowdServer(t)
			var wg sync.WaitGroup
			for i := range n {
				tok := cs.f.Token(t, fmt.Sprintf("mallory%02d", i))
				for range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						cs.holdBody(t, tok, "203.0.113.9", 4<<20, 2<<20+4<<10)
					}()
				}
			}
			wg.Wait()
			cs.settle(t)
			held := cs.budget.InUse()
			signed, anon := cs.honest(t, 20)
			t.Logf("%d identities hold %d MiB: honest signed-in served %.0f %%, new anonymous client %.0f %%", n, held>>20, 100*signed, 100*anon)
			assert.GreaterOrEqual(t, signed, 0.95, "honest signed-in callers served")
			assert.GreaterOrEqual(t, anon, 0.95, "a new anonymous client's initialize served")
			if held > jsonrpc.DefaultBodyBudget/2 {
				logged := cs.log.String()
				assert.Contains(t, logged, "level=WARN")
				assert.Contains(t, logged, "pool=signed-in")
				assert.NotContains(t, logged, "mallory")
			}
		})
	}
}

// Attack (issue 35): a crowd of 8, 16 or 32 client addresses (IPv4, or
// IPv6 /64s, named by a trusted proxy), each holding eight anonymous
// bodies of 64 KiB half sent, used to hold the whole anonymous pool
// (each address's share was 1/8 of it), so that a new MCP client at
// another address could not initialize. Fails before: the new client
// served 0 %.
func TestAddressCrowdCannotTakeTheAnonymousPool(t *testing.T) {
	if testing.Short() {
		t.Skip("opens up to 256 connections")
	}
	for _, family := range []string{"IPv4", "IPv6"} {
		for _, n := range []int{8, 16, 32} {
			t.Run(fmt.Sprintf("%s/%d", family, n), func(t *testing.T) {
				cs := newCrowdServer(t)
				var wg sync.WaitGroup
				for i := range n {
					for j := range 8 {
						from := fmt.Sprintf("203.0.113.%d", i)
						if family == "IPv6" {
							from = fmt.Sprintf("2001:db8:0:%x::%x", i, j+1) // one /64, many hosts
						}
						wg.Add(1)
						go func() {
							defer wg.Done()
							cs.holdBody(t, "", from, jsonrpc.DefaultAnonymousMaxBytes, jsonrpc.DefaultAnonymousMaxBytes/2+4<<10)
						}()
					}
				}
				wg.Wait()
				cs.settle(t)
				held := cs.budget.InUse()
				signed, anon := cs.honest(t, 20)
				t.Logf("%d %s addresses hold %d KiB: honest signed-in served %.0f %%, new anonymous client %.0f %%", n, family, held>>10, 100*signed, 100*anon)
				assert.GreaterOrEqual(t, signed, 0.95, "honest signed-in callers served")
				assert.GreaterOrEqual(t, anon, 0.95, "a new anonymous client's initialize served")
				logged := cs.log.String()
				assert.Contains(t, logged, "pool=anonymous")
				assert.NotContains(t, logged, "203.0.113")
				assert.NotContains(t, logged, "2001:db8")
			})
		}
	}
}
