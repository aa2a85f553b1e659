package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// "bench targets" measures resources/list against servers already
// running (a fleet behind its balancer against one instance direct, say),
// from this process: -conns keep-alive connections each send the next
// request as soon as the previous answer is in, for -duration per target
// per round, the targets alternating in -rounds rounds so that other load
// on the machine weighs on all alike. It prints, per target, the median
// over the rounds of requests per second, p50 and p99, and each median
// ratio to the first target's (the baseline).
//
//	MCPKIT_TOKEN=$(...) go run ./examples/bench targets \
//	    -target direct=http://127.0.0.1:8081/mcp -target balancer=http://127.0.0.1:8080/mcp
//
// Every answer must be 200 with a JSON-RPC result; anything else is
// counted, and fails the run. Turn the servers' rate limits off for it
// (-rate-list off).

// target is a -target of "bench targets".
type target struct{ name, url string }

type targets []target

func (t *targets) String() string { return fmt.Sprint(*t) }
func (t *targets) Set(v string) error {
	name, u, ok := strings.Cut(v, "=")
	if !ok || name == "" || !strings.HasPrefix(u, "http") {
		return errors.New("want NAME=URL")
	}
	*t = append(*t, target{name, u})
	return nil
}

// result is one round of a target.
type result struct{ rps, p50, p99 float64 } // p50, p99 in ms

// runTargets is "bench targets": resources/list against running servers
// (see targetsDoc).
func runTargets(args []string, out io.Writer) error {
	var ts targets
	fs := flag.NewFlagSet("bench targets", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Var(&ts, "target", "NAME=URL of an MCP endpoint (repeat; the first is the baseline)")
	rounds := fs.Int("rounds", 5, "rounds in which the targets alternate")
	duration := fs.Duration("duration", 3*time.Second, "measuring time per target per round")
	conns := fs.Int("conns", 8, "keep-alive connections")
	if err := fs.Parse(args); err != nil {
		return err
	}
	token := os.Getenv("MCPKIT_TOKEN")
	if len(ts) == 0 || token == "" {
		return errors.New("bench targets: give -target NAME=URL (one or more) and MCPKIT_TOKEN")
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns}}
	res := make([][]result, len(ts))
	for r := range *rounds {
		for i, t := range ts {
			if r == 0 {
				loadTarget(client, t.url, token, *conns, time.Second) // warm-up
			}
			got, bad := loadTarget(client, t.url, token, *conns, *duration)
			if bad > 0 {
				return fmt.Errorf("bench targets: %s: %d bad answers (rate limits on? start the servers with -rate-list off)", t.name, bad)
			}
			res[i] = append(res[i], got)
		}
	}
	median := func(rs []result, f func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	ratio := func(i int, f func(result) float64) float64 {
		v := make([]float64, len(res[i]))
		for r := range res[i] {
			v[r] = f(res[i][r]) / f(res[0][r])
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	rps, p50, p99 := func(r result) float64 { return r.rps }, func(r result) float64 { return r.p50 }, func(r result) float64 { return r.p99 }
	fmt.Fprintf(out, "%d rounds × %v per target, %d connections (medians over rounds; ratios: median of per-round ratios to %s)\n", *rounds, *duration, *conns, ts[0].name)
	fmt.Fprintf(out, "%-12s %10s %9s %9s   %8s %8s %8s\n", "target", "req/s", "p50 ms", "p99 ms", "req/s ×", "p50 ×", "p99 ×")
	for i, t := range ts {
		fmt.Fprintf(out, "%-12s %10.0f %9.2f %9.2f   %8.2f %8.2f %8.2f\n", t.name, median(res[i], rps), median(res[i], p50), median(res[i], p99),
			ratio(i, rps), ratio(i, p50), ratio(i, p99))
	}
	return nil
}

var targetsListBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)

// loadTarget loads url for d and returns the throughput and latency percentiles,
// and the number of answers that were not a 200 with a result.
func loadTarget(client *http.Client, url, token string, conns int, d time.Duration) (result, int) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	bad := 0
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			myBad := 0
			buf := make([]byte, 0, 64<<10)
			for ctx.Err() == nil {
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(targetsListBody))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", "Bearer "+token)
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					myBad++
					continue
				}
				b := bytes.NewBuffer(buf[:0])
				_, err = io.Copy(b, res.Body)
				res.Body.Close()
				mine = append(mine, time.Since(t0))
				if err != nil || res.StatusCode != http.StatusOK || !bytes.Contains(b.Bytes(), []byte(`"result":{"resources":[`)) {
					myBad++
				}
			}
			mu.Lock()
			lat, bad = append(lat, mine...), bad+myBad
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	if len(lat) == 0 {
		return result{}, bad + 1
	}
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	return result{rps: float64(len(lat)) / elapsed.Seconds(), p50: pct(0.50), p99: pct(0.99)}, bad
}
