package main

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// scenario is one kind of request to one server.
type scenario struct {
	name   string
	file   string // name of its CPU profiles
	server *child
	req    []byte
	check  func(response) error
}

// round is one scenario's measurement in one round.
type round struct {
	requests   int
	errors     int64
	firstErr   error
	elapsed    time.Duration
	p50, p99   time.Duration
	allocs     float64       // server heap objects allocated per request
	allocBytes float64       // server heap bytes allocated per request
	cpu        time.Duration // server CPU time per request
	genCPU     time.Duration // the load generator's CPU time per request
}

func (r round) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.requests) / r.elapsed.Seconds()
}

// runRound measures sc with conns keep-alive connections for d: every
// connection is dialled and sends one checked request before the clock
// starts, and the server's allocation counters and CPU time are read just
// before and after.
func runRound(sc scenario, conns int, d time.Duration) (round, error) {
	cs := make([]*conn, conns)
	defer func() {
		for _, c := range cs {
			if c != nil {
				c.close()
			}
		}
	}()
	for i := range cs {
		c, err := dial(sc.server.addr)
		if err != nil {
			return round{}, err
		}
		cs[i] = c
		res, err := c.do(sc.req)
		if err == nil {
			err = sc.check(res)
		}
		if err != nil {
			return round{}, fmt.Errorf("%s: warm-up request: %w", sc.name, err)
		}
	}
	before, err := sc.server.stats(false)
	if err != nil {
		return round{}, err
	}
	var errs atomic.Int64
	var once sync.Once
	var firstErr error
	lat := make([][]time.Duration, conns)
	genBefore, _ := processCPU()
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for i, c := range cs {
		lat[i] = make([]time.Duration, 0, 1<<14)
		wg.Go(func() {
			for {
				t0 := time.Now()
				if !t0.Before(deadline) {
					return
				}
				res, err := c.do(sc.req)
				took := time.Since(t0)
				if err == nil {
					err = sc.check(res)
				}
				if err != nil {
					errs.Add(1)
					once.Do(func() { firstErr = err })
					// A broken connection is not reused.
					if nc, derr := dial(sc.server.addr); derr == nil {
						c.close()
						c = nc
						cs[i] = nc
					} else {
						return
					}
					continue
				}
				lat[i] = append(lat[i], took)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	genAfter, _ := processCPU()
	after, err := sc.server.stats(false)
	if err != nil {
		return round{}, err
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	r := round{requests: len(all), errors: errs.Load(), firstErr: firstErr, elapsed: elapsed}
	if n := len(all); n > 0 {
		r.p50, r.p99 = quantile(all, 0.50), quantile(all, 0.99)
		// Requests that failed were served too: count them.
		served := float64(n) + float64(r.errors)
		r.allocs = float64(after.Mallocs-before.Mallocs) / served
		r.allocBytes = float64(after.AllocBytes-before.AllocBytes) / served
		r.cpu = time.Duration(float64(after.CPU-before.CPU) / served)
		r.genCPU = time.Duration(float64(genAfter-genBefore) / served)
	}
	return r, nil
}

// quantile returns the q-quantile (nearest rank) of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(q*float64(len(sorted)-1)+0.5)]
}

// expectExact checks that every response is the captured one: status 200
// and the very bytes.
func expectExact(body []byte) func(response) error {
	return func(r response) error {
		if r.status != 200 {
			return fmt.Errorf("HTTP %d", r.status)
		}
		if !bytes.Equal(r.body, body) {
			return fmt.Errorf("a body of %d bytes, not the %d expected", len(r.body), len(body))
		}
		return nil
	}
}

// expectPage checks a kit page whose cursor changes from one response to
// the next (a fresh nonce): status 200, the length of the first one, the
// same start and a nextCursor.
func expectPage(first []byte) func(response) error {
	head := first[:min(len(first), 96)]
	return func(r response) error {
		if r.status != 200 {
			return fmt.Errorf("HTTP %d", r.status)
		}
		if len(r.body) != len(first) || !bytes.HasPrefix(r.body, head) || !bytes.Contains(r.body[len(r.body)-200:], []byte(`"nextCursor":"`)) {
			return fmt.Errorf("unexpected body %.120q", r.body)
		}
		return nil
	}
}

// median returns the median of xs (the mean of the middle two for an
// even count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}
