// Command upstream is the mcpkit example of resources whose home is
// another service: each signed-in MCP caller lists and reads their own
// photos, which live in a stand-in third-party "photos" service, reached
// as the caller — never by passing the caller's MCP token through.
//
//	go run ./examples/upstream                  # -mode elicit, on 127.0.0.1:8095
//	go run ./examples/upstream -mode exchange   # RFC 8693 token exchange
//	go run ./examples/upstream token alice      # a development MCP token for alice
//
// It prints "listening on http://ADDR" first, then serves:
//
//	/mcp              the MCP endpoint (resources photos://{id}); tokens from
//	/dev/…            the development authorization server (package devissuer)
//	/photos/api/…     the photos API: tokens of audience http://ADDR/photos/api only
//	/photos/oauth/…   the photos service's own authorization server and consent page
//	/upstream/…       the connect page and OAuth callback of the grants (-mode elicit)
//
// With -mode elicit, a caller who has not connected the photos service is
// asked to (a URL-mode elicitation: -32042 in 2025-11-25, input_required
// in 2026-07-28); the page sends the user to the photos service's consent
// page, and the grant is kept sealed at rest. With -mode exchange, the
// MCP server trades the caller's token for a photos token at the
// development authorization server (RFC 8693). The tool photos_disconnect
// forgets the caller's grant.
//
// Development only: both authorization servers sign anyone in as anyone.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/examples/devissuer"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// recordFile, in the data directory, records the address of the server
// that started last, for "upstream token USER".
const recordFile = "upstream-server.json"

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("upstream", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8095", "listen address (loopback: development mode)")
	fs.StringVar(&cfg.mode, "mode", "elicit", "how the MCP server gets photos tokens: elicit (a per-user grant, URL-mode elicitation) or exchange (RFC 8693)")
	fs.StringVar(&cfg.dataDir, "data-dir", ".mcpkit-upstream", "directory of the development issuer's key")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch pos := fs.Args(); {
	case len(pos) == 2 && pos[0] == "token":
		return token(cfg, pos[1], stdout, stderr)
	case len(pos) != 0:
		fmt.Fprintln(stderr, "usage: upstream [-addr ADDR] [-mode elicit|exchange] [-data-dir DIR] [token USER]")
		return 2
	}
	if cfg.mode != "elicit" && cfg.mode != "exchange" {
		fmt.Fprintln(stderr, "upstream: -mode must be elicit or exchange")
		return 2
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := start(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "upstream: %v\n", err)
		return 1
	}
	// The record first: whoever reads "listening on" may run "token USER".
	if b, err := json.Marshal(map[string]string{"addr": a.addr}); err == nil {
		_ = os.WriteFile(filepath.Join(cfg.dataDir, recordFile), b, 0o600)
	}
	fmt.Fprintf(stdout, "listening on %s\n", a.base)
	if tok, err := a.dev.Sign("alice", []string{scopeMCP}, time.Hour); err == nil {
		fmt.Fprintf(stdout, "mode %s; a development token for alice (go run ./examples/upstream token USER for others):\n%s\n", cfg.mode, tok)
	}
	if err := a.serve(ctx); err != nil {
		fmt.Fprintf(stderr, "upstream: %v\n", err)
		return 1
	}
	return 0
}

// token prints a development MCP access token for user, for the server
// that started last with the data directory.
func token(cfg config, user string, stdout, stderr io.Writer) int {
	b, err := os.ReadFile(filepath.Join(cfg.dataDir, recordFile))
	var rec struct{ Addr string }
	if err != nil || json.Unmarshal(b, &rec) != nil || rec.Addr == "" {
		fmt.Fprintf(stderr, "upstream: no server has started with -data-dir %s: start one first (go run ./examples/upstream)\n", cfg.dataDir)
		return 1
	}
	base := "http://" + rec.Addr
	dev, err := devissuer.Load(cfg.dataDir, base+"/dev", base+"/mcp", devissuer.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "upstream: %v\n", err)
		return 1
	}
	tok, err := dev.Sign(user, []string{scopeMCP}, time.Hour)
	if err != nil {
		fmt.Fprintf(stderr, "upstream: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, tok)
	fmt.Fprintf(stderr, "upstream: a token for %s/mcp\n", base)
	return 0
}
