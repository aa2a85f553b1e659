package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/mcphttp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "legacy:", err)
		os.Exit(1)
	}
}

// run serves until ctx is done. Its first line on stdout is
// "listening on http://ADDR".
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("legacy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8082", "listen address (port 0 picks a free port)")
	resource := fs.String("resource", "", `canonical resource URI (default "http://ADDR/mcp")`)
	issuer := fs.String("issuer", "", "issuer identifier (empty: a built-in development issuer)")
	jwksURL := fs.String("jwks-url", "", "JWK Set URL of the issuer (required with -issuer)")
	stateful := fs.Bool("stateful", false, "serve the go-sdk handler with sessions (then it speaks the 2025 protocol versions only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	base := "http://" + ln.Addr().String()
	if *resource == "" {
		*resource = base + "/mcp"
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	a, err := newApp(ctx, config{resource: *resource, issuer: *issuer, jwksURL: *jwksURL, stateful: *stateful, logger: logger})
	if err != nil {
		return err
	}
	defer a.close()

	srv := mcphttp.NewServer(ln.Addr().String(), a.routes())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on %s\n", base)
	if a.dev != nil {
		logger.Warn("DEVELOPMENT MODE: tokens come from a built-in development issuer; configure -issuer and -jwks-url for real use")
		if err := printTryIt(stdout, a, base); err != nil {
			return err
		}
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func printTryIt(w io.Writer, a *app, base string) error {
	alice, err := a.devToken("alice")
	if err != nil {
		return err
	}
	bob, err := a.devToken("bob")
	if err != nil {
		return err
	}
	post := fmt.Sprintf(`curl -s -w '\n' %s/mcp -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-11-25'`, base)
	_, err = fmt.Fprintf(w, `
Development tokens (valid 8 hours):
  export ALICE=%s
  export BOB=%s
Try (mcpkit answers the resource methods, the go-sdk server the rest):
  %s -H "Authorization: Bearer $ALICE" -d '{"jsonrpc":"2.0","id":1,"method":"resources/list"}'
  %s -H "Authorization: Bearer $ALICE" -d '{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"texts://texts/t001"}}'
  %s -H "Authorization: Bearer $BOB" -d '{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"texts://texts/t001"}}'   # not bob's
  %s -H "Authorization: Bearer $ALICE" -d '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"word_count","arguments":{"text":"one two three"}}}'
`, alice, bob, post, post, post, post)
	return err
}
