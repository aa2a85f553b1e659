// Command documents is the mcpkit example server: an MCP resource server
// where every signed-in user lists and reads their own documents (and those
// shared with them), page by page, and nobody else's; owners share and edit
// through a small REST API, and the users concerned, and nobody else, are
// notified on their open streams.
//
//	go run ./examples/documents                  # development mode on 127.0.0.1:8080
//	go run ./examples/documents token alice      # a development token for alice
//	go run ./examples/documents -h               # every flag and MCPKIT_* variable
//
// On a fresh machine it creates .mcpkit-documents/ in the working directory
// (an SQLite database seeded with the documents of alice, bob and carol, and
// the development issuer's signing key), prints curl commands with tokens
// for alice and bob (a sharing walk-through with a live SSE stream
// included), and serves until SIGINT or SIGTERM, then ends the open streams
// and drains the requests in flight. Configuration errors exit with status 2 and a message
// naming the flag; other failures exit with status 1. See package app.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mcpkit/mcpkit/examples/documents/app"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, positional, err := app.ParseFlags(args, getenv, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		return 2 // ParseFlags printed the problem
	}
	switch {
	case len(positional) == 0:
		return serve(ctx, cfg, stdout, stderr)
	case positional[0] == "token" && len(positional) == 2:
		return token(cfg, positional[1], stdout, stderr)
	case positional[0] == "token":
		fmt.Fprintln(stderr, "usage: documents [flags] token USER")
		return 2
	}
	fmt.Fprintf(stderr, "documents: unknown command %q (run with -h for help)\n", positional[0])
	return 2
}

// token prints a development token for user: what the server prints at
// start, for any user. stdout gets the token alone (ALICE=$(documents
// token alice)); stderr says which server it is for and which data
// directory's key signed it, since a server started with another
// -data-dir refuses it.
func token(cfg app.Config, user string, stdout, stderr io.Writer) int {
	tok, src, err := app.DevTokenFrom(cfg, user, app.DevTokenTTL)
	if err != nil {
		return fail(stderr, "token", err)
	}
	fmt.Fprintln(stdout, tok)
	fmt.Fprintf(stderr, "documents: a token for %s, signed with the development key in %s\n", src.Resource, src.DataDir)
	switch {
	case cfg.Addr == "":
	case src.RecordedAddr == "":
		fmt.Fprintf(stderr, "documents: no development server has recorded itself in that -data-dir; the server on %s accepts the token only if it was started with the same -data-dir\n", cfg.Addr)
	case src.RecordedAddr != cfg.Addr:
		fmt.Fprintf(stderr, "documents: the server that started last with that -data-dir listens on %s, not %s; the server on %s accepts the token only if it was started with the same -data-dir\n",
			src.RecordedAddr, cfg.Addr, cfg.Addr)
	}
	return 0
}

// serve runs the server until SIGINT or SIGTERM.
func serve(ctx context.Context, cfg app.Config, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg.Stdout = stdout
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	a, err := app.New(ctx, cfg)
	if err != nil {
		return fail(stderr, "start", err)
	}
	defer a.Close()
	go func() {
		<-ctx.Done()
		stop() // a second signal stops the process at once
	}()
	if err := a.Run(ctx); err != nil {
		return fail(stderr, "run", err)
	}
	return 0
}

// fail reports err and returns 2 for configuration errors, else 1.
func fail(stderr io.Writer, what string, err error) int {
	if ce := new(app.ConfigError); errors.As(err, &ce) {
		fmt.Fprintf(stderr, "documents: invalid configuration:\n  %s\n", strings.ReplaceAll(err.Error(), "\n", "\n  "))
		return 2
	}
	fmt.Fprintf(stderr, "documents: %s: %v\n", what, err)
	return 1
}
