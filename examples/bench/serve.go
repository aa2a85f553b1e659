package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
)

// The servers. Each runs in a process of its own, started by the load
// generator (the same binary with -serve): it listens on 127.0.0.1:0,
// prints "addr HOST:PORT" on its standard output and then answers
// commands read from its standard input, one line each, until that is
// closed (the load generator exited):
//
//	stats          one JSON line of serverStats
//	gc             runtime.GC twice (so that freed stacks and heap are
//	               returned to the runtime's accounting), then stats
//	profile FILE   start a CPU profile into FILE; answers "ok"
//	stop           stop the CPU profile; answers "ok"
//	heap FILE      write a heap profile (in-use objects after a GC) into
//	               FILE; answers "ok"

// Server kinds.
const (
	serveKitPrivate = "kit-private" // the private page: JWT, cached token, List callback, sealed cursor
	serveKitStatic  = "kit-static"  // the public static page, no authentication
	serveKitStreams = "kit-streams" // kit-private with notifications, for the idle-stream measurement
	serveBare       = "bare"        // a bare net/http handler writing a captured response
)

// serverStats is what a server reports about itself.
type serverStats struct {
	Mallocs    uint64        `json:"mallocs"`    // heap objects allocated, cumulative
	AllocBytes uint64        `json:"allocBytes"` // heap bytes allocated, cumulative
	HeapInuse  uint64        `json:"heapInuse"`  // bytes in in-use heap spans
	StackInuse uint64        `json:"stackInuse"` // bytes of goroutine stacks
	Goroutines int           `json:"goroutines"`
	NumGC      uint32        `json:"numGC"`
	CPU        time.Duration `json:"cpu"`    // user+system CPU time of the process, cumulative (0 where unknown)
	SysCPU     time.Duration `json:"sysCPU"` // the system part of CPU
}

func readStats() serverStats {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s := serverStats{Mallocs: m.Mallocs, AllocBytes: m.TotalAlloc, HeapInuse: m.HeapInuse, StackInuse: m.StackInuse,
		Goroutines: runtime.NumGoroutine(), NumGC: m.NumGC}
	s.CPU, s.SysCPU = processCPU()
	return s
}

// serverConfig is what the load generator tells a server.
type serverConfig struct {
	kind     string
	issuer   string // the token issuer; its JWK Set is at issuer + "/jwks.json"
	resource string // this server's resource URI (the tokens' audience)
	entries  int    // the caller's prepared list entries (kit-private, kit-streams)
	statics  int    // static resources (kit-static)
	// keepAlive is the streams' keep-alive interval (kit-streams); 0: the default.
	keepAlive time.Duration
	response  string // file holding the captured response (bare)
}

// serve runs one server until its standard input ends.
func serve(args []string, in io.Reader, out io.Writer) error {
	var c serverConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&c.kind, "serve", "", "server kind")
	fs.StringVar(&c.issuer, "issuer", "", "token issuer URL")
	fs.StringVar(&c.resource, "resource", "", "resource URI")
	fs.IntVar(&c.entries, "entries", 0, "prepared list entries")
	fs.IntVar(&c.statics, "statics", 0, "static resources")
	fs.StringVar(&c.response, "response", "", "captured response file")
	fs.DurationVar(&c.keepAlive, "keepalive", 0, "the streams' keep-alive interval (kit-streams); 0: the default")
	memRate := fs.Int("memprofilerate", 0, "runtime.MemProfileRate (0: the default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *memRate > 0 {
		runtime.MemProfileRate = *memRate
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx := context.Background()
	var h http.Handler
	var closeFn func()
	var err error
	switch c.kind {
	case serveKitPrivate, serveKitStreams:
		h, closeFn, err = kitPrivate(ctx, c, log)
	case serveKitStatic:
		h, err = kitStatic(c, log)
	case serveBare:
		h, err = bare(c.response)
		// The application's data, which a bare server serving it holds
		// too: the collectors of both processes mark the same heap.
		data := newPrepared(c.entries)
		defer runtime.KeepAlive(data)
	default:
		err = fmt.Errorf("unknown server kind %q", c.kind)
	}
	if err != nil {
		return err
	}
	if closeFn != nil {
		defer closeFn()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := mcphttp.NewServer("", h)
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	if _, err := fmt.Fprintf(out, "addr %s\n", ln.Addr()); err != nil {
		return err
	}
	return commands(in, out)
}

// commands answers the load generator's commands until in ends.
func commands(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	var prof *os.File
	defer func() {
		if prof != nil {
			pprof.StopCPUProfile()
			_ = prof.Close()
		}
	}()
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		var reply any = "ok"
		switch cmd {
		case "stats":
			reply = readStats()
		case "gc":
			runtime.GC()
			runtime.GC()
			reply = readStats()
		case "profile":
			if prof != nil {
				return errors.New("a profile is running already")
			}
			f, err := os.Create(arg)
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				_ = f.Close()
				return err
			}
			prof = f
		case "heap":
			f, err := os.Create(arg)
			if err != nil {
				return err
			}
			runtime.GC()
			err = pprof.Lookup("heap").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case "stop":
			if prof != nil {
				pprof.StopCPUProfile()
				if err := prof.Close(); err != nil {
					return err
				}
				prof = nil
			}
		default:
			return fmt.Errorf("unknown command %q", cmd)
		}
		b, err := json.Marshal(reply)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "%s\n", b); err != nil {
			return err
		}
	}
	return sc.Err()
}

// The caller of the private page and the scope its template requires.
const (
	benchSubject = "alice"
	benchScope   = "docs:read"
)

// entryKey is the list key of the caller's i-th entry.
func entryKey(i int) string { return fmt.Sprintf("k%08d", i) }

// prepared is the caller's collection, built before the server starts:
// the List callback finds the page's start by binary search and returns a
// slice of it, so that the kit's own cost is what the server measures.
type prepared struct{ all []inventory.Entry }

func newPrepared(n int) *prepared {
	p := &prepared{all: make([]inventory.Entry, n)}
	for i := range p.all {
		id := fmt.Sprintf("d%06d", i)
		p.all[i] = inventory.Entry{Key: entryKey(i), URI: "docs://documents/" + id, Name: "Quarterly report " + id}
	}
	return p
}

func (p *prepared) list(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
	if req.Principal.Subject != benchSubject {
		return inventory.Page{}, nil
	}
	i := sort.Search(len(p.all), func(i int) bool { return p.all[i].Key > req.After })
	end := min(i+req.Limit, len(p.all))
	return inventory.Page{Entries: p.all[i:end:end], HasMore: end < len(p.all)}, nil
}

func (p *prepared) read(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: "Contents of " + req.Params["id"]}}, nil
}

// kitPrivate is the kit's private page: a JWT verifier fetching the JWK
// Set over HTTP, with the token cache, and a documents template whose List
// callback slices the prepared entries; page size 50 (the default), cursors
// sealed with a process key. kit-streams adds notifications.
func kitPrivate(ctx context.Context, c serverConfig, log *slog.Logger) (http.Handler, func(), error) {
	v, err := authn.NewJWTVerifier(ctx, authn.JWTOptions{
		Issuer: c.issuer, Resource: c.resource, JWKSURL: strings.TrimSuffix(c.issuer, "/") + "/jwks.json", Logger: log,
	})
	if err != nil {
		return nil, nil, err
	}
	auth, err := authn.NewAuthenticator(authn.NewCache(v, authn.CacheOptions{}), authn.Options{
		Resource: c.resource, Scopes: []string{benchScope}, Logger: log,
	})
	if err != nil {
		_ = v.Close()
		return nil, nil, err
	}
	p := newPrepared(c.entries)
	inv, err := inventory.New(nil, []inventory.Template{{
		Name: "documents", Title: "Documents", URITemplate: "docs://documents/{id}", MIMEType: "text/plain",
		Access: inventory.Protected, RequiredScopes: []string{benchScope},
		List: p.list, Read: p.read,
	}}, inventory.Options{PageSize: 50, Logger: log})
	if err != nil {
		_ = v.Close()
		return nil, nil, err
	}
	opts := mcphttp.Options{Authenticator: auth, Logger: log}
	var hub *notify.Hub
	var parts []mcphttp.Part
	if c.kind == serveKitStreams {
		hub = notify.New(notify.Options{Logger: log})
		streams, err := sessions.New(hub, sessions.Options{KeepAlive: c.keepAlive, Limits: sessions.Limits{MaxStreams: 1 << 20, MaxStreamsPerPrincipal: 1 << 20,
			MaxSessions: 1 << 20, MaxSessionsPerPrincipal: 1 << 20}})
		if err != nil {
			_ = v.Close()
			return nil, nil, err
		}
		parts = append(parts, streams)
	}
	ep, err := mcphttp.New(inv, opts, parts...)
	if err != nil {
		_ = v.Close()
		return nil, nil, err
	}
	return ep, func() {
		if hub != nil {
			hub.Close()
		}
		_ = v.Close()
	}, nil
}

// kitStatic is the public static page: statics public resources, no
// authentication.
func kitStatic(c serverConfig, log *slog.Logger) (http.Handler, error) {
	res := make([]inventory.Resource, c.statics)
	for i := range res {
		id := fmt.Sprintf("s%06d", i)
		res[i] = inventory.Resource{URI: "docs://static/" + id, Name: "Public report " + id, MIMEType: "text/plain",
			Access: inventory.Public, Read: inventory.TextReader("text/plain", "Public report "+id)}
	}
	inv, err := inventory.New(res, nil, inventory.Options{PageSize: 50, Logger: log})
	if err != nil {
		return nil, err
	}
	return mcphttp.New(inv, mcphttp.Options{Logger: log})
}

// captured is a response recorded from a kit server, for the bare one.
type captured struct {
	Status int               `json:"status"`
	Header map[string]string `json:"header"`
	Body   []byte            `json:"body"`
}

// bare is the baseline: a plain net/http handler that reads the request
// body and writes the captured response, with the same headers
// (Content-Type, Cache-Control, Vary, Content-Length; net/http adds Date
// to both).
func bare(file string) (http.Handler, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var c captured
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	if c.Status == 0 || len(c.Body) == 0 {
		return nil, errors.New("empty captured response")
	}
	contentType, cacheControl, vary := c.Header["content-type"], c.Header["cache-control"], c.Header["vary"]
	length := strconv.Itoa(len(c.Body))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", contentType)
		if cacheControl != "" {
			h.Set("Cache-Control", cacheControl)
		}
		if vary != "" {
			h.Set("Vary", vary)
		}
		h.Set("Content-Length", length)
		w.WriteHeader(c.Status)
		_, _ = w.Write(c.Body)
	}), nil
}
