package app

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// Attack (issue 35), over loopback: a crowd of 8, 16 or 32 users, each
// with two connections that PUT a document declaring 8 MiB, send
// 2 MiB + 4 KiB and hold. The REST API read its bodies outside the
// kit's memory accounting (one user with 96 connections took the server
// from 380 MB to 1.02 GB); it now reads them under the same body budget
// as the MCP endpoint, so the crowd holds at most the budget (64 MiB by
// default), and honest callers are served meanwhile: alice's own update,
// carol's list, a new client's initialize. Fails before: the heap grows
// by 4 MiB a connection, 256 MiB with 32 users.
func TestRESTCrowdHeldToTheBodyBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("sends up to 128 MiB over loopback")
	}
	for _, n := range []int{8, 16, 32} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := start(t, nil)
			alice, carol := s.token(t, "alice"), s.token(t, "carol")
			id := s.firstDocs(t, "alice", 1)[0]
			addr := strings.TrimPrefix(s.app.URL(), "http://")
			idle := liveHeap()

			var wg sync.WaitGroup
			var mu sync.Mutex
			var conns []net.Conn
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			for i := range n {
				tok := s.token(t, fmt.Sprintf("mallory%02d", i))
				for range 2 {
					wg.Go(func() {
						c, err := net.Dial("tcp", addr)
						if !assert.NoError(t, err) {
							return
						}
						mu.Lock()
						conns = append(conns, c)
						mu.Unlock()
						head := fmt.Sprintf("PUT /api/documents/%s-doc HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n",
							id, addr, tok, maxUpdateRequestBytes)
						_ = c.SetWriteDeadline(time.Now().Add(20 * time.Second))
						_, _ = io.WriteString(c, head+`{"body":"`+strings.Repeat("y", 2<<20+4<<10))
					})
				}
			}
			wg.Wait()
			// Read as far as it will be: the budget's use stops changing.
			last, still := int64(-1), 0
			for deadline := time.Now().Add(20 * time.Second); still < 5 && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				if u := s.app.bodies.InUse(); u == last {
					still++
				} else {
					last, still = u, 0
				}
			}
			time.Sleep(100 * time.Millisecond)
			held := liveHeap() - idle

			var ok, total int
			for range 10 {
				res, _ := s.api(t, alice, http.MethodPut, "/api/documents/"+id, `{"body":"alice's new text"}`)
				total++
				if res.StatusCode == http.StatusNoContent {
					ok++
				}
				res, out := s.post(t, carol, "resources/list", nil)
				total++
				if res.StatusCode == http.StatusOK && out.Error == nil {
					ok++
				}
				res, out = s.post(t, "", "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "new", "version": "1"}})
				total++
				if res.StatusCode == http.StatusOK && out.Error == nil {
					ok++
				}
			}
			t.Logf("%d users × 2 PUTs held: heap %d MiB above idle (budget in use %d MiB); honest served %d of %d", n, held>>20, s.app.bodies.InUse()>>20, ok, total)
			assert.Less(t, held, int64(jsonrpc.DefaultBodyBudget+16<<20), "the crowd's bodies held to the budget")
			assert.GreaterOrEqual(t, float64(ok), 0.95*float64(total), "honest callers served")
		})
	}
}
