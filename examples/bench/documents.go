package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/mcpkit/mcpkit/examples/documents/app"
	"github.com/mcpkit/mcpkit/examples/documents/store"
)

// docOptions are the settings of "bench documents".
type docOptions struct {
	duration    time.Duration
	requests    int
	concurrency int
	pageSize    int
	small, big  int
	deepPage    int
	rounds      int
	cpuProfile  string
}

func parseDocuments(args []string, out io.Writer) (docOptions, error) {
	var o docOptions
	fs := flag.NewFlagSet("bench documents", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "total measuring time, shared by the four scenarios (at most 10m)")
	fs.IntVar(&o.requests, "requests", 0, "stop each scenario after this many requests (0: only -duration bounds it)")
	fs.IntVar(&o.concurrency, "concurrency", 8, "concurrent keep-alive clients")
	fs.IntVar(&o.pageSize, "page-size", 0, "resources per page, 1..100 (default: -small + 1, so that every measured page holds as many entries as small's only page: docs://about and small's documents)")
	fs.IntVar(&o.small, "small", 10, "documents of the user \"small\"")
	fs.IntVar(&o.big, "big", 100_000, "documents of the user \"big\"")
	fs.IntVar(&o.deepPage, "deep-page", 1000, "page of big's listing where the deep scenario starts (lowered to half of big's pages if beyond)")
	fs.IntVar(&o.rounds, "rounds", 5, "rounds in which the scenarios alternate")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the measurement (server and clients) to this file")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.pageSize == 0 {
		o.pageSize = o.small + 1
	}
	switch {
	case o.duration <= 0 || o.duration > 10*time.Minute:
		return o, errors.New("-duration must be in (0, 10m]")
	case o.requests < 0:
		return o, errors.New("-requests must not be negative")
	case o.concurrency < 1:
		return o, errors.New("-concurrency must be at least 1")
	case o.pageSize < 1 || o.pageSize > 100:
		return o, errors.New("-page-size must be in 1..100")
	case o.small < 1 || o.small >= o.pageSize:
		return o, errors.New("-small must be at least 1 and fit on one page with docs://about (below -page-size)")
	case o.big < 2*o.pageSize:
		return o, errors.New("-big must fill at least two pages")
	case o.deepPage < 2:
		return o, errors.New("-deep-page must be at least 2")
	case o.rounds < 1:
		return o, errors.New("-rounds must be at least 1")
	}
	if pages := (o.big + 1) / o.pageSize; o.deepPage > pages/2 {
		o.deepPage = max(2, pages/2)
	}
	return o, nil
}

// runDocuments is "bench documents": it measures the documents server under
// load, over real
// loopback HTTP with keep-alive connections and cached tokens:
//
//	go run ./examples/bench documents                  # about 10 s of load
//	go run ./examples/bench documents -duration 30s -concurrency 16
//
// It starts the server in-process on 127.0.0.1:0 with a fresh SQLite
// database in a temporary directory, gives the user "small" 10 documents and
// the user "big" 100,000 (store.SeedMany), mints development tokens for
// both, warms the token cache, and then runs -concurrency clients issuing
// resources/list in four scenarios:
//
//	first-small   small's first (and only) page
//	first-big     big's first page
//	deep-big-same big's page -deep-page, again and again (replaying one
//	              cursor): the cost of depth alone, with warm caches
//	deep-big      big's pages from -deep-page on (page 1000 = documents
//	              ~11,000 on at the default page size), walking forward
//	              with each answer's nextCursor and starting over at the deep
//	              cursor at the end
//
// The page size defaults to 11, so that every page measured holds the same
// number of entries: small's only page is docs://about and its 10
// documents.
//
// Scenarios alternate in -rounds rounds so that a noisy machine affects
// them alike. Each scenario gets a quarter of -duration in total, or stops earlier
// after -requests requests. The report gives requests per second and the
// p50 and p99 latency of each, and the ratios to first-small: keyset
// pagination makes a deep page of a 100,000-document collection cost what
// the single page of a 10-document one does, so they should be close to 1
// (the forward walk also reads database pages that are not cached yet,
// which the repeated page does not). The server logs at warn level, so request log lines (info) are not
// written.
//
// The deep cursor is fetched once, by walking to it, and a traversal expires
// 15 minutes after its first page: -duration is limited to 10 minutes.
func runDocuments(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseDocuments(args, out)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "mcpkit-bench-documents-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dsn := "sqlite:" + filepath.Join(dir, "documents.db")

	began := time.Now()
	if err := seedDocuments(ctx, dsn, o); err != nil {
		return err
	}
	fmt.Fprintf(out, "seeded small (%d documents) and big (%d) in %v\n", o.small, o.big, time.Since(began).Round(time.Millisecond))

	a, err := app.New(ctx, app.Config{
		Addr: "127.0.0.1:0", DataDir: dir, DB: dsn, PageSize: o.pageSize, Seed: app.SeedNever,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	defer a.Close()
	runCtx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- a.Run(runCtx) }()
	defer func() {
		stop()
		<-served
	}()

	l, err := newDocLoad(a, dir, o)
	if err != nil {
		return err
	}
	defer l.client.CloseIdleConnections()
	if err := l.prepare(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "deep pages start at page %d of big's listing (%q); %d clients, page size %d\n",
		o.deepPage, l.deepFirst, o.concurrency, o.pageSize)

	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	results := l.measure(ctx)
	if o.cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	docReport(out, o, results)
	return nil
}

// seed fills a fresh database with the two users' documents.
func seedDocuments(ctx context.Context, dsn string, o docOptions) error {
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := store.SeedMany(ctx, db, "small", o.small); err != nil {
		return err
	}
	return store.SeedMany(ctx, db, "big", o.big)
}
