package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httputil"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The idle-stream measurement: N subscriptions/listen streams (protocol
// 2026-07-28) held open on a kit server with notifications, the client
// side in this process, the server's memory read from its own runtime.

// streamsPerPrincipal is how many streams each principal opens: the
// kit's default limit of streams per principal.
const streamsPerPrincipal = 8

func listenBody() []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`)
}

// openStream opens one listen stream and waits for its acknowledgement.
func openStream(addr, token string) (*conn, error) {
	c, err := dial(addr)
	if err != nil {
		return nil, err
	}
	req := request(addr, "/", listenBody(), "Content-Type", "application/json", "Accept", "application/json, text/event-stream",
		"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen", "Authorization", "Bearer "+token)
	_ = c.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.c.Write(req); err != nil {
		c.close()
		return nil, err
	}
	res, err := c.read(false)
	if err == nil && res.status != 200 {
		err = fmt.Errorf("HTTP %d", res.status)
	}
	if err != nil {
		c.close()
		return nil, err
	}
	events := bufio.NewReader(httputil.NewChunkedReader(c.r))
	acked := false
	for {
		line, err := events.ReadString('\n')
		if err != nil {
			c.close()
			return nil, fmt.Errorf("reading the stream: %w", err)
		}
		if strings.Contains(line, "notifications/subscriptions/acknowledged") {
			acked = true
		}
		if acked && line == "\n" {
			break
		}
	}
	_ = c.c.SetDeadline(time.Time{})
	return c, nil
}

func initializeBody() []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},` +
		`"clientInfo":{"name":"bench","version":"1"}}}`)
}

// openLegacyStream opens a session (initialize, notifications/initialized)
// and its GET stream, and waits for the stream's priming event.
func openLegacyStream(addr, token string) (*conn, error) {
	c, err := dial(addr)
	if err != nil {
		return nil, err
	}
	defer c.close()
	c.keep = true
	res, err := c.do(request(addr, "/", initializeBody(), "Content-Type", "application/json", "Accept", "application/json, text/event-stream",
		"Authorization", "Bearer "+token))
	if err == nil && res.status != 200 {
		err = fmt.Errorf("initialize: HTTP %d", res.status)
	}
	if err != nil {
		return nil, err
	}
	session := res.header["mcp-session-id"]
	if session == "" {
		return nil, errors.New("initialize: no Mcp-Session-Id")
	}
	res, err = c.do(request(addr, "/", []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "Content-Type", "application/json",
		"Accept", "application/json, text/event-stream", "MCP-Protocol-Version", "2025-11-25", "Mcp-Session-Id", session, "Authorization", "Bearer "+token))
	if err == nil && res.status != 202 {
		err = fmt.Errorf("notifications/initialized: HTTP %d", res.status)
	}
	if err != nil {
		return nil, err
	}
	s, err := dial(addr)
	if err != nil {
		return nil, err
	}
	_ = s.c.SetDeadline(time.Now().Add(30 * time.Second))
	get := "GET / HTTP/1.1\r\nHost: " + addr + "\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n" +
		"Mcp-Session-Id: " + session + "\r\nAuthorization: Bearer " + token + "\r\n\r\n"
	if _, err := s.c.Write([]byte(get)); err != nil {
		s.close()
		return nil, err
	}
	res, err = s.read(false)
	if err == nil && res.status != 200 {
		err = fmt.Errorf("GET: HTTP %d", res.status)
	}
	if err == nil {
		err = skipEvent(s)
	}
	if err != nil {
		s.close()
		return nil, err
	}
	_ = s.c.SetDeadline(time.Time{})
	return s, nil
}

// skipEvent reads a stream's first event (up to its blank line).
func skipEvent(c *conn) error {
	events := bufio.NewReader(httputil.NewChunkedReader(c.r))
	for {
		line, err := events.ReadString('\n')
		if err != nil {
			return fmt.Errorf("reading the stream: %w", err)
		}
		if line == "\n" {
			return nil
		}
	}
}

// openStreams opens n streams, streamsPerPrincipal per token, 16 at a
// time: listen streams, or legacy GET streams.
func openStreams(addr string, tokens []string, n int, legacy bool) ([]*conn, error) {
	out := make([]*conn, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			open := openStream
			if legacy {
				open = openLegacyStream
			}
			c, err := open(addr, tokens[i/streamsPerPrincipal])
			if err != nil {
				errs <- err
				return
			}
			out[i] = c
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		closeAll(out)
		return nil, err
	}
	return out, nil
}

func closeAll(cs []*conn) {
	for _, c := range cs {
		if c != nil {
			c.close()
		}
	}
}

func measureStreams(_ context.Context, e *env, o options, out io.Writer) error {
	o.entries = 1000 // the collection plays no part; a small heap keeps the figures clean
	args := append(e.kitArgs(serveKitStreams, o), "-keepalive", o.keepAlive.String())
	if o.heapProfile != "" {
		args = append(args, "-memprofilerate", "1")
	}
	srv, err := e.start(serveKitStreams, args...)
	if err != nil {
		return err
	}
	tokens := make([]string, (o.streams+streamsPerPrincipal-1)/streamsPerPrincipal)
	for i := range tokens {
		if tokens[i], err = e.issuer.Sign(fmt.Sprintf("user-%05d", i), []string{benchScope}, time.Hour); err != nil {
			return err
		}
	}
	// Warm-up: every token verified and cached, pools filled; then closed.
	warm, err := openStreams(srv.addr, tokens, min(o.streams, len(tokens)*streamsPerPrincipal), o.legacy)
	if err != nil {
		return fmt.Errorf("warm-up streams: %w", err)
	}
	closeAll(warm)
	time.Sleep(500 * time.Millisecond) // the server notices the closed streams
	before, err := srv.stats(true)
	if err != nil {
		return err
	}
	streams, err := openStreams(srv.addr, tokens, o.streams, o.legacy)
	if err != nil {
		return err
	}
	defer closeAll(streams)
	time.Sleep(200 * time.Millisecond)
	after, err := srv.stats(true)
	if err != nil {
		return err
	}
	settled, err := srv.stats(true) // stacks shrink by half per collection at most
	if err != nil {
		return err
	}
	if o.heapProfile != "" {
		if err := srv.ok("heap " + o.heapProfile); err != nil {
			return err
		}
	}
	n := float64(o.streams)
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / n / 1024 }
	kind := "subscriptions/listen"
	if o.legacy {
		kind = "legacy GET"
	}
	fmt.Fprintf(out, "%d idle %s streams (%d principals), server process only:\n", o.streams, kind, len(tokens))
	fmt.Fprintf(out, "  after GC:        %.1f KiB per stream (heap %.1f KiB, stacks %.1f KiB), %.2f goroutines per stream\n",
		per(after.HeapInuse+after.StackInuse, before.HeapInuse+before.StackInuse),
		per(after.HeapInuse, before.HeapInuse), per(after.StackInuse, before.StackInuse),
		float64(after.Goroutines-before.Goroutines)/n)
	fmt.Fprintf(out, "  after 2 more GC: %.1f KiB per stream (heap %.1f KiB, stacks %.1f KiB)\n",
		per(settled.HeapInuse+settled.StackInuse, before.HeapInuse+before.StackInuse),
		per(settled.HeapInuse, before.HeapInuse), per(settled.StackInuse, before.StackInuse))
	if o.idle > 0 {
		if !o.wakeClient {
			for _, c := range streams {
				if err := c.quiet(); err != nil {
					return err
				}
			}
			time.Sleep(time.Second)
		}
		start, err := srv.stats(false)
		if err != nil {
			return err
		}
		if o.cpuProfile != "" {
			if err := os.MkdirAll(o.cpuProfile, 0o755); err != nil {
				return err
			}
			if err := srv.ok("profile " + filepath.Join(o.cpuProfile, "kit-streams.idle.pprof")); err != nil {
				return err
			}
		}
		t0 := time.Now()
		time.Sleep(o.idle)
		if o.cpuProfile != "" {
			if err := srv.ok("stop"); err != nil {
				return err
			}
		}
		end, err := srv.stats(false)
		if err != nil {
			return err
		}
		wall := time.Since(t0)
		cpu := end.CPU - start.CPU
		fmt.Fprintf(out, "  idle CPU:        %.3f %% of a core over %s (%.2f µs per stream per second; %.0f %% in the kernel)\n",
			100*float64(cpu)/float64(wall), wall.Round(time.Second),
			float64(cpu.Nanoseconds())/1000/n/wall.Seconds(), 100*float64(end.SysCPU-start.SysCPU)/float64(max(cpu, 1)))
	}
	return nil
}
