// Command bench measures the kit's serving path the way users see it:
// servers in processes of their own, a load generator in another, keep-
// alive connections over loopback.
//
//	go run ./examples/bench                 # 5 rounds, about a minute
//	go run ./examples/bench -rounds 9 -duration 3s
//	go run ./examples/bench -cpuprofile /tmp/prof   # then: go tool pprof /tmp/prof/kit-private.*.pprof
//	go run ./examples/bench -streams 1000   # memory per idle notification stream, server side
//	go run ./examples/bench -streams 10000 -idle 60s   # and the server's CPU with them idle
//	go run ./examples/bench -streams 10000 -idle 60s -legacy   # the same with legacy GET streams
//	go run ./examples/bench documents       # the documents server: first and deep pages (documents.go)
//	go run ./examples/bench targets -target a=URL -target b=URL  # running servers, e.g. a fleet (targets.go)
//
// It starts, each in its own process (this program again, with -serve):
//
//	kit-private  the kit's private resources/list page: mcphttp.New over an
//	             inventory whose documents template lists the caller's
//	             -entries prepared entries (the List callback finds the
//	             start by binary search and slices the array); bearer JWTs
//	             (ES256) verified against a JWK Set fetched over HTTP from
//	             the load generator's development issuer, with the token
//	             cache; page size 50, sealed cursors
//	kit-static   the public static page: -statics public resources, no
//	             authentication
//	bare         two bare net/http handlers, each writing a response
//	             captured from a kit server (same bytes, same headers):
//	             the baselines; the private one holds the same prepared
//	             entries in memory (the application's data, which a bare
//	             server serving it would hold too: both processes' garbage
//	             collectors mark the same heap; -bare-data=false leaves
//	             them out)
//
// The load generator (this process) runs -conns connections, each sending
// the next request as soon as it has the previous response, for -duration
// per scenario, in -rounds rounds in which the scenarios alternate, so
// that load from other processes on a shared machine weighs on all alike.
// Its client writes prepared request bytes and reads responses with
// Content-Length, spending as little CPU as possible (the servers share
// the machine with it), and checks every response (status, length, and
// the bytes or the page's start).
//
// Scenarios: bare-private and kit-private (the first page of the caller's
// collection, with a nextCursor; 4.3 KB), kit-deep (page -deep-page of
// the same collection, its cursor replayed: opened, then a new one
// sealed), bare-static and kit-static. For each it prints the median over
// the rounds of requests per second, p50 and p99 latency, and, read from
// the server process's runtime counters around each measurement, heap
// allocations (objects and bytes) and CPU time per request. Then the
// ratios, each the median of the per-round ratios: kit-private/bare
// (target ≥ 0.85), kit-static/bare (≥ 0.95), and kit-deep/kit-private
// (deep pages cost what first pages do).
//
// With -streams N it measures instead the memory of N idle notification
// streams (subscriptions/listen, protocol 2026-07-28) on a kit-private
// server with notifications: the server's heap and stack in use, after
// garbage collection, before and after the streams opened, per stream;
// with -idle D, then the server's CPU time over D with the streams idle
// (keep-alive comments only), as a share of one core, and the share of
// it spent in the kernel. With -legacy the streams are legacy GET streams
// (protocol 2025-11-25), each with a session of its own. Over loopback
// the kernel receives the client's data in the sender's write and charges
// it to the sender: so that the figure is the server's as nearly as can
// be, the client's sockets are taken out of its poller once the streams
// are open (they are never read again), and a keep-alive wakes no client
// thread; -wake-client leaves them in.
//
// With the first argument "documents" it measures instead the whole
// documents server (examples/documents) in this process, on SQLite: first
// pages of a small and a large collection against deep pages of the large
// one, with flags of their own (go run ./examples/bench documents -h; see
// runDocuments). With "targets" it loads servers already running with
// resources/list, alternating between them (targets.go).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpkit/mcpkit/examples/devissuer"
)

func main() {
	if os.Getenv(childEnv) != "" {
		if err := serve(os.Args[1:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench server:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(1)
	}
}

// options are the command-line settings.
type options struct {
	rounds      int
	duration    time.Duration
	conns       int
	entries     int
	deepPage    int
	statics     int
	cpuProfile  string
	streams     int
	heapProfile string
	idle        time.Duration
	keepAlive   time.Duration
	bareData    bool
	legacy      bool
	wakeClient  bool
}

func parse(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.IntVar(&o.rounds, "rounds", 5, "rounds in which the scenarios alternate (at least 3 for a median worth the name)")
	fs.DurationVar(&o.duration, "duration", 2*time.Second, "measuring time of each scenario in each round")
	fs.IntVar(&o.conns, "conns", 16, "keep-alive connections")
	fs.IntVar(&o.entries, "entries", 100_000, "the caller's entries in the private page's collection")
	fs.IntVar(&o.deepPage, "deep-page", 1000, "the page of the collection the deep scenario asks for")
	fs.IntVar(&o.statics, "statics", 50, "static resources of the public page")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write CPU profiles of the servers into this directory, one per scenario and round (SCENARIO.ROUND.pprof; go tool pprof merges several)")
	fs.IntVar(&o.streams, "streams", 0, "instead of the throughput rounds: open this many idle notification streams and report the server's memory per stream")
	fs.BoolVar(&o.bareData, "bare-data", true, "the bare private server holds the same prepared entries as the kit's (the application's data), so that both collectors mark the same heap")
	fs.DurationVar(&o.keepAlive, "keepalive", 0, "with -streams: the streams' keep-alive interval (sessions.Options.KeepAlive; 0: the default, 25s)")
	fs.DurationVar(&o.idle, "idle", 0, "with -streams: then measure the server's CPU time over this long with the streams open and idle (keep-alives only; the default interval is 25s)")
	fs.StringVar(&o.heapProfile, "heapprofile", "", "with -streams: write the server's heap profile with the streams open to this file")
	fs.BoolVar(&o.legacy, "legacy", false, "with -streams: legacy GET streams (protocol 2025-11-25: a session each, initialize then GET) instead of subscriptions/listen")
	fs.BoolVar(&o.wakeClient, "wake-client", false, "with -idle: keep the client's streams in this process's poller, so that every keep-alive wakes a client thread (over loopback the kernel does that in the server's write, and charges it to the server); by default they are taken out of it once open")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.rounds < 1:
		return o, errors.New("-rounds must be at least 1")
	case o.duration <= 0 || o.duration > time.Minute:
		return o, errors.New("-duration must be in (0, 1m]")
	case o.conns < 1 || o.conns > 1024:
		return o, errors.New("-conns must be in 1..1024")
	case o.statics < 1 || o.statics > 50:
		return o, errors.New("-statics must be in 1..50 (one page)")
	case o.deepPage < 2 || o.deepPage*50 >= o.entries:
		return o, errors.New("-deep-page must be at least 2, and the collection (-entries) must have more pages")
	case o.streams < 0:
		return o, errors.New("-streams must not be negative")
	}
	return o, nil
}

// resource is the kit servers' resource URI: the tokens' audience.
const resource = "https://bench.mcpkit.example/mcp"

// env is the load generator's side: the development issuer, whose JWK Set
// it serves over HTTP, and the servers.
type env struct {
	issuer   *devissuer.Issuer
	jwks     *http.Server
	children []*child
	dir      string // temporary files
}

func newEnv() (*env, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	is, err := devissuer.New("http://"+ln.Addr().String()+"/dev", resource, devissuer.Options{})
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(is.JWKSPath(), is.JWKSHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	dir, err := os.MkdirTemp("", "mcpkit-bench-")
	if err != nil {
		_ = srv.Close()
		return nil, err
	}
	return &env{issuer: is, jwks: srv, dir: dir}, nil
}

func (e *env) close() {
	for _, c := range e.children {
		c.stop()
	}
	_ = e.jwks.Close()
	_ = os.RemoveAll(e.dir)
}

// start starts a server and keeps it for close.
func (e *env) start(name string, args ...string) (*child, error) {
	c, err := startChild(name, args...)
	if err != nil {
		return nil, err
	}
	e.children = append(e.children, c)
	return c, nil
}

// kitArgs are the flags of a kit server of this kind.
func (e *env) kitArgs(kind string, o options) []string {
	return []string{"-serve", kind, "-issuer", e.issuer.Issuer(), "-resource", resource,
		"-entries", fmt.Sprint(o.entries), "-statics", fmt.Sprint(o.statics)}
}

// capture sends req to c once and writes the response where a bare server
// reads it.
func (e *env) capture(c *child, req []byte, file string) ([]byte, error) {
	cn, err := dial(c.addr)
	if err != nil {
		return nil, err
	}
	defer cn.close()
	cn.keep = true
	res, err := cn.do(req)
	if err != nil {
		return nil, err
	}
	if res.status != 200 {
		return nil, fmt.Errorf("%s answered HTTP %d: %s", c.name, res.status, res.body)
	}
	body := append([]byte(nil), res.body...)
	b, err := json.Marshal(captured{Status: res.status, Header: res.header, Body: body})
	if err != nil {
		return nil, err
	}
	path := filepath.Join(e.dir, file)
	return body, os.WriteFile(path, b, 0o600)
}

// listBody is a resources/list request, with a cursor when one is given.
func listBody(cursor string) []byte {
	if cursor == "" {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
	}
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":"` + cursor + `"}}`)
}

// listRequest is the complete HTTP request of a legacy (2025-11-25)
// resources/list, as clients send it.
func listRequest(addr, token, cursor string) []byte {
	h := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream",
		"MCP-Protocol-Version", "2025-11-25"}
	if token != "" {
		h = append(h, "Authorization", "Bearer "+token)
	}
	return request(addr, "/", listBody(cursor), h...)
}

// walk follows nextCursor from the first page to page n and returns the
// cursor that asks for it.
func walk(addr, token string, n int) (string, error) {
	c, err := dial(addr)
	if err != nil {
		return "", err
	}
	defer c.close()
	cursor := ""
	for page := 1; page < n; page++ {
		res, err := c.do(listRequest(addr, token, cursor))
		if err != nil {
			return "", err
		}
		var m struct {
			Result struct {
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		if res.status != 200 || json.Unmarshal(res.body, &m) != nil || m.Result.NextCursor == "" {
			return "", fmt.Errorf("page %d: HTTP %d %.200s", page, res.status, res.body)
		}
		cursor = m.Result.NextCursor
	}
	return cursor, nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) > 0 && args[0] == "documents" {
		return runDocuments(ctx, args[1:], out)
	}
	if len(args) > 0 && args[0] == "targets" {
		return runTargets(args[1:], out)
	}
	o, err := parse(args, out)
	if err != nil {
		return err
	}
	e, err := newEnv()
	if err != nil {
		return err
	}
	defer e.close()
	if o.streams > 0 {
		return measureStreams(ctx, e, o, out)
	}
	scs, sizes, err := e.scenarios(o)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "private page %d bytes, static page %d bytes; %d connections, %d rounds of %v per scenario\n",
		sizes[0], sizes[1], o.conns, o.rounds, o.duration)
	results, err := measureRounds(scs, o, out)
	if err != nil {
		return err
	}
	report(out, scs, results)
	return nil
}

// scenarios starts the kit's private and static servers and the bare servers
// that write the kit's captured pages, and returns the five scenarios (in the
// order measureRounds compares them) and the private and static page sizes.
func (e *env) scenarios(o options) ([]scenario, [2]int, error) {
	var sizes [2]int
	token, err := e.issuer.Sign(benchSubject, []string{benchScope}, time.Hour)
	if err != nil {
		return nil, sizes, err
	}
	kit, err := e.start(serveKitPrivate, e.kitArgs(serveKitPrivate, o)...)
	if err != nil {
		return nil, sizes, err
	}
	static, err := e.start(serveKitStatic, e.kitArgs(serveKitStatic, o)...)
	if err != nil {
		return nil, sizes, err
	}
	privateReq, staticReq := listRequest(kit.addr, token, ""), listRequest(static.addr, "", "")
	privatePage, err := e.capture(kit, privateReq, "private.json")
	if err != nil {
		return nil, sizes, err
	}
	staticPage, err := e.capture(static, staticReq, "static.json")
	if err != nil {
		return nil, sizes, err
	}
	sizes = [2]int{len(privatePage), len(staticPage)}
	bareEntries := 0
	if o.bareData {
		bareEntries = o.entries
	}
	barePrivate, err := e.start("bare-private", "-serve", serveBare, "-response", filepath.Join(e.dir, "private.json"),
		"-entries", fmt.Sprint(bareEntries))
	if err != nil {
		return nil, sizes, err
	}
	bareStatic, err := e.start("bare-static", "-serve", serveBare, "-response", filepath.Join(e.dir, "static.json"))
	if err != nil {
		return nil, sizes, err
	}
	deep, err := walk(kit.addr, token, o.deepPage)
	if err != nil {
		return nil, sizes, fmt.Errorf("walking to page %d: %w", o.deepPage, err)
	}
	deepReq := listRequest(kit.addr, token, deep)
	deepPage, err := e.capture(kit, deepReq, "deep.json")
	if err != nil {
		return nil, sizes, err
	}
	return []scenario{
		{name: "bare-private", file: "bare-private", server: barePrivate, req: privateReq, check: expectExact(privatePage)},
		{name: "kit-private", file: "kit-private", server: kit, req: privateReq, check: expectPage(privatePage)},
		{name: fmt.Sprintf("kit-deep (page %d)", o.deepPage), file: "kit-deep", server: kit, req: deepReq, check: expectPage(deepPage)},
		{name: "bare-static", file: "bare-static", server: bareStatic, req: staticReq, check: expectExact(staticPage)},
		{name: "kit-static", file: "kit-static", server: static, req: staticReq, check: expectExact(staticPage)},
	}, sizes, nil
}

// measureRounds warms every scenario up, then measures them in turn for
// o.rounds rounds, printing each round's private and static ratios.
func measureRounds(scs []scenario, o options, out io.Writer) ([][]round, error) {
	// Warm-up: pools, caches and the garbage collector's pacing settle.
	for _, sc := range scs {
		if _, err := runRound(sc, o.conns, min(o.duration/2, 500*time.Millisecond)); err != nil {
			return nil, err
		}
	}
	if o.cpuProfile != "" {
		if err := os.MkdirAll(o.cpuProfile, 0o755); err != nil {
			return nil, err
		}
	}
	results := make([][]round, len(scs))
	for r := range o.rounds {
		for i, sc := range scs {
			res, err := measureOne(sc, o, r)
			if err != nil {
				return nil, err
			}
			results[i] = append(results[i], res)
		}
		fmt.Fprintf(out, "round %d: private %.3f×, static %.3f×\n", r+1,
			results[1][r].rate()/results[0][r].rate(), results[4][r].rate()/results[3][r].rate())
	}
	return results, nil
}

// measureOne runs one scenario's round r, with the server's CPU profile
// around it when o.cpuProfile names a folder.
func measureOne(sc scenario, o options, r int) (round, error) {
	if o.cpuProfile != "" {
		if err := sc.server.ok("profile " + filepath.Join(o.cpuProfile, fmt.Sprintf("%s.%d.pprof", sc.file, r+1))); err != nil {
			return round{}, err
		}
	}
	res, err := runRound(sc, o.conns, o.duration)
	if err != nil {
		return round{}, err
	}
	if o.cpuProfile != "" {
		if err := sc.server.ok("stop"); err != nil {
			return round{}, err
		}
	}
	return res, nil
}

// report prints the medians and the ratios.
func report(out io.Writer, scs []scenario, results [][]round) {
	fmt.Fprintf(out, "\nGOMAXPROCS %d, %d CPUs%s; medians of %d rounds\n\n", runtime.GOMAXPROCS(0), runtime.NumCPU(), loadAverage(), len(results[0]))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\treq/s\tp50\tp99\tallocs/req\tB/req\tCPU/req\tgen CPU/req\terrors\t")
	for i, sc := range scs {
		rs := results[i]
		pick := func(f func(round) float64) float64 {
			xs := make([]float64, len(rs))
			for j, r := range rs {
				xs[j] = f(r)
			}
			return median(xs)
		}
		var errs int64
		for _, r := range rs {
			errs += r.errors
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%v\t%v\t%.1f\t%.0f\t%v\t%v\t%d\t\n", sc.name,
			pick(round.rate),
			time.Duration(pick(func(r round) float64 { return float64(r.p50) })).Round(time.Microsecond),
			time.Duration(pick(func(r round) float64 { return float64(r.p99) })).Round(time.Microsecond),
			pick(func(r round) float64 { return r.allocs }),
			pick(func(r round) float64 { return r.allocBytes }),
			time.Duration(pick(func(r round) float64 { return float64(r.cpu) })).Round(100*time.Nanosecond),
			time.Duration(pick(func(r round) float64 { return float64(r.genCPU) })).Round(100*time.Nanosecond),
			errs)
	}
	tw.Flush()
	for i, sc := range scs {
		for _, r := range results[i] {
			if r.firstErr != nil {
				fmt.Fprintf(out, "first error in %s: %v\n", sc.name, r.firstErr)
				break
			}
		}
	}
	ratio := func(num, den int, f func(round) float64) float64 {
		xs := make([]float64, len(results[num]))
		for j := range xs {
			xs[j] = f(results[num][j]) / f(results[den][j])
		}
		return median(xs)
	}
	cpu := func(r round) float64 { return float64(r.cpu) }
	fmt.Fprintln(out)
	fmt.Fprintf(out, "kit-private / bare-private: %.3f× the requests per second (target ≥ 0.85), %.2f× the server CPU per request\n",
		ratio(1, 0, round.rate), ratio(1, 0, cpu))
	fmt.Fprintf(out, "kit-static / bare-static:   %.3f× the requests per second (target ≥ 0.95), %.2f× the server CPU per request\n",
		ratio(4, 3, round.rate), ratio(4, 3, cpu))
	fmt.Fprintf(out, "%s / kit-private: %.3f× the time per request (1/throughput), %.2f× the server CPU per request (target ≤ 1.1)\n",
		scs[2].name, ratio(1, 2, round.rate), ratio(2, 1, cpu))
}

// loadAverage returns ", load average X Y Z" on Linux, else "".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return ", load average " + strings.Join(f[:3], " ")
}
