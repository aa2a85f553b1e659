package sessions_test

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// The memory an idle stream costs the server. The clients run in a
// process of their own (this test binary, started again with
// MCPKIT_STREAM_CLIENT set), so that the heap and stack measured are the
// server's alone: the figure examples/bench -streams reports.

const streamClientEnv = "MCPKIT_STREAM_CLIENT"

// TestIdleStreamMemory opens MCPKIT_IDLE_STREAMS (default 1000) listen
// streams of 125 principals from another process and logs the server's
// heap and stack per idle stream.
func TestIdleStreamMemory(t *testing.T) {
	if url := os.Getenv(streamClientEnv); url != "" {
		streamClient(t, url)
		return
	}
	if testing.Short() {
		t.Skip("opens 1,000 connections")
	}
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("MCPKIT_IDLE_STREAMS")); err == nil && v > 0 {
		n = v
	}
	f := newFixture(t, fixtureOptions{})
	const principals = 125
	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleStreamMemory$")
	cmd.Env = append(os.Environ(), streamClientEnv+"="+f.Srv.URL)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Wait() }()
	defer stdin.Close()

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		_, err := fmt.Fprintln(stdin, f.Token(t, fmt.Sprintf("user-%03d", i%principals)))
		require.NoError(t, err)
	}
	_, err = fmt.Fprintln(stdin, "go")
	require.NoError(t, err)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	for i := range principals {
		mcptest.WaitSubscribers(t, f.Hub, fmt.Sprintf("user-%03d", i), n/principals)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	used := float64((after.HeapInuse + after.StackInuse) - (before.HeapInuse + before.StackInuse))
	t.Logf("%d idle streams: %.1f KiB per stream (server side; heap %.1f, stacks %.1f), %d goroutines",
		n, used/float64(n)/1024, float64(after.HeapInuse-before.HeapInuse)/float64(n)/1024,
		float64(after.StackInuse-before.StackInuse)/float64(n)/1024, runtime.NumGoroutine())
}

// streamClient is the client process: it opens a listen stream for each
// token read from stdin, says "ready" once every one is acknowledged, and
// holds them until stdin closes.
func streamClient(t *testing.T, url string) {
	var tokens []string
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() && in.Text() != "go" {
		tokens = append(tokens, in.Text())
	}
	tr := &http.Transport{MaxIdleConnsPerHost: len(tokens)}
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bodies []*bufio.Reader
	for _, tok := range tokens {
		wg.Go(func() {
			body, hdr := listenBody(1)
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+tok)
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			r := bufio.NewReader(resp.Body)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Error(err)
					return
				}
				if strings.Contains(line, "acknowledged") {
					break
				}
			}
			mu.Lock()
			bodies = append(bodies, r)
			mu.Unlock()
		})
	}
	wg.Wait()
	fmt.Println("ready")
	for in.Scan() { // until the server's side closes stdin
	}
}
