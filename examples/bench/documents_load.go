package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcpkit/mcpkit/examples/documents/app"
)

// docLoad drives the documents server.
type docLoad struct {
	o          docOptions
	url        string
	client     *http.Client
	small, big string // tokens
	deep       string // cursor of big's page o.deepPage
	deepFirst  string // name of that page's first document
}

func newDocLoad(a *app.App, dir string, o docOptions) (*docLoad, error) {
	l := &docLoad{o: o, url: a.URL() + "/mcp", client: &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns: o.concurrency, MaxIdleConnsPerHost: o.concurrency,
			IdleConnTimeout: time.Minute, DisableCompression: true,
		},
	}}
	var err error
	cfg := app.Config{Addr: a.Addr(), DataDir: dir}
	if l.small, err = app.DevToken(cfg, "small", time.Hour); err != nil {
		return nil, err
	}
	if l.big, err = app.DevToken(cfg, "big", time.Hour); err != nil {
		return nil, err
	}
	return l, nil
}

// docPage is what the load generator reads from a resources/list answer.
type docPage struct {
	entries   int
	next      string
	firstName string
}

// list sends one resources/list and checks the answer.
func (l *docLoad) list(ctx context.Context, token, cursor string) (docPage, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`
	if cursor != "" {
		body = `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":"` + cursor + `"}}`
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, strings.NewReader(body))
	if err != nil {
		return docPage{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := l.client.Do(req)
	if err != nil {
		return docPage{}, err
	}
	var buf bytes.Buffer
	_, err = io.Copy(&buf, res.Body)
	res.Body.Close()
	if err != nil {
		return docPage{}, err
	}
	if res.StatusCode != http.StatusOK {
		return docPage{}, fmt.Errorf("HTTP %d", res.StatusCode)
	}
	r := gjson.ParseBytes(buf.Bytes())
	if e := r.Get("error"); e.Exists() {
		return docPage{}, fmt.Errorf("JSON-RPC error %s", e.Raw)
	}
	return docPage{
		entries:   int(r.Get("result.resources.#").Int()),
		next:      r.Get("result.nextCursor").String(),
		firstName: r.Get("result.resources.0.name").String(),
	}, nil
}

// prepare warms the token cache and the connections, and walks to the
// deep cursor.
func (l *docLoad) prepare(ctx context.Context) error {
	for range 10 {
		for _, tok := range []string{l.small, l.big} {
			if _, err := l.list(ctx, tok, ""); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}
	}
	cursor := ""
	for i := 1; i < l.o.deepPage; i++ {
		p, err := l.list(ctx, l.big, cursor)
		if err != nil {
			return fmt.Errorf("walking to page %d: %w", l.o.deepPage, err)
		}
		if p.next == "" {
			return fmt.Errorf("big's listing ended at page %d", i)
		}
		cursor = p.next
	}
	p, err := l.list(ctx, l.big, cursor)
	if err != nil {
		return err
	}
	l.deep, l.deepFirst = cursor, p.firstName
	return nil
}

// docScenario is one kind of request.
type docScenario struct {
	name   string
	token  string
	deep   bool // start at the deep cursor and walk forward
	replay bool // with deep: ask for the deep page again and again
	check  func(docPage) error
}

// docResult accumulates the measurements of one scenario.
type docResult struct {
	name      string
	errors    int64
	elapsed   time.Duration
	latencies []time.Duration
	firstErr  error
}

func (l *docLoad) scenarios() []docScenario {
	return []docScenario{
		{name: fmt.Sprintf("first-small (%d docs, one page)", l.o.small), token: l.small, check: func(p docPage) error {
			if p.entries != l.o.small+1 || p.next != "" { // + docs://about
				return fmt.Errorf("small's page: %d entries, more: %v", p.entries, p.next != "")
			}
			return nil
		}},
		{name: fmt.Sprintf("first-big (%d docs)", l.o.big), token: l.big, check: func(p docPage) error {
			if p.entries != l.o.pageSize || p.next == "" {
				return fmt.Errorf("big's first page: %d entries", p.entries)
			}
			return nil
		}},
		{name: fmt.Sprintf("deep-big-same (page %d again)", l.o.deepPage), token: l.big, deep: true, replay: true, check: func(p docPage) error {
			if p.entries != l.o.pageSize {
				return fmt.Errorf("big's deep page: %d entries", p.entries)
			}
			return nil
		}},
		{name: fmt.Sprintf("deep-big (pages %d+)", l.o.deepPage), token: l.big, deep: true, check: func(p docPage) error {
			if p.entries == 0 {
				return errors.New("empty deep page")
			}
			return nil
		}},
	}
}

// measure runs the scenarios in alternating rounds.
func (l *docLoad) measure(ctx context.Context) []*docResult {
	scs := l.scenarios()
	results := make([]*docResult, len(scs))
	for i, sc := range scs {
		results[i] = &docResult{name: sc.name}
	}
	slot := l.o.duration / time.Duration(len(scs)*l.o.rounds)
	perRound := 0
	if l.o.requests > 0 {
		perRound = (l.o.requests + l.o.rounds - 1) / l.o.rounds
	}
	for range l.o.rounds {
		for i, sc := range scs {
			l.runScenario(ctx, sc, slot, perRound, results[i])
		}
	}
	return results
}

// runScenario runs sc with o.concurrency clients for d or limit requests
// (0: no limit), whichever ends first.
func (l *docLoad) runScenario(ctx context.Context, sc docScenario, d time.Duration, limit int, res *docResult) {
	var budget atomic.Int64
	budget.Store(int64(limit))
	var errs atomic.Int64
	var firstErr error
	var once sync.Once
	lat := make([][]time.Duration, l.o.concurrency)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range l.o.concurrency {
		wg.Go(func() {
			cursor := l.deep
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if limit > 0 && budget.Add(-1) < 0 {
					return
				}
				c := ""
				if sc.deep {
					c = cursor
				}
				t0 := time.Now()
				p, err := l.list(ctx, sc.token, c)
				took := time.Since(t0)
				if err == nil {
					err = sc.check(p)
				}
				if err != nil {
					errs.Add(1)
					once.Do(func() { firstErr = err })
					cursor = l.deep
					continue
				}
				lat[w] = append(lat[w], took)
				if sc.deep && !sc.replay {
					if cursor = p.next; cursor == "" {
						cursor = l.deep // the end: start over deep
					}
				}
			}
		})
	}
	wg.Wait()
	res.elapsed += time.Since(start)
	res.errors += errs.Load()
	if res.firstErr == nil {
		res.firstErr = firstErr
	}
	for _, ls := range lat {
		res.latencies = append(res.latencies, ls...)
	}
}

func (r *docResult) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(len(r.latencies)) / r.elapsed.Seconds()
}

// docReport prints the table and the ratio that matters.
func docReport(out io.Writer, o docOptions, results []*docResult) {
	fmt.Fprintf(out, "\nGOMAXPROCS %d, %d CPUs%s; %d clients, %d rounds\n\n",
		runtime.GOMAXPROCS(0), runtime.NumCPU(), loadAverage(), o.concurrency, o.rounds)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\trequests\terrors\treq/s\tp50\tp99\t")
	p50 := make([]time.Duration, len(results))
	p99 := make([]time.Duration, len(results))
	for i, r := range results {
		slices.Sort(r.latencies)
		p50[i], p99[i] = quantile(r.latencies, 0.50), quantile(r.latencies, 0.99)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%v\t%v\t\n", r.name, len(r.latencies), r.errors, r.rate(),
			p50[i].Round(time.Microsecond), p99[i].Round(time.Microsecond))
	}
	tw.Flush()
	for _, r := range results {
		if r.firstErr != nil {
			fmt.Fprintf(out, "first error in %s: %v\n", r.name, r.firstErr)
		}
	}
	small := results[0]
	if len(small.latencies) == 0 || small.rate() == 0 {
		return
	}
	fmt.Fprintln(out)
	for i, r := range results[1:] {
		if len(r.latencies) == 0 || r.rate() == 0 {
			continue
		}
		fmt.Fprintf(out, "%s / first-small: p50 %.2fx, p99 %.2fx, time per request (1/throughput) %.2fx\n", r.name,
			float64(p50[i+1])/float64(p50[0]), float64(p99[i+1])/float64(p99[0]), small.rate()/r.rate())
	}
	fmt.Fprintln(out, "(≈1: a deep page of a large collection costs what the only page of a small one does;")
	fmt.Fprintln(out, " the walk also reads database pages that are not in SQLite's cache yet)")
}
