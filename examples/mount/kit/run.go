package kit

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

// Main runs an example program: it parses the command line, serves the
// router newRouter builds until SIGINT or SIGTERM, and exits.
func Main(name string, newRouter func(*Kit) http.Handler) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := Run(ctx, os.Args[1:], os.Stdout, os.Stderr, newRouter)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Run parses args (-addr, -resource, -issuer, -jwks-url), builds the kit
// and the router, and serves it behind mcphttp.NewServer until ctx is done,
// then shuts down gracefully. Its first line on stdout is
// "listening on http://ADDR"; in development mode ready-to-paste tokens and
// curl commands follow. Logs go to stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, newRouter func(*Kit) http.Handler) error {
	fs := flag.NewFlagSet("mount", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8081", "listen address (port 0 picks a free port)")
	resource := fs.String("resource", "", `canonical resource URI of the MCP endpoint (default "http://ADDR/mcp")`)
	issuer := fs.String("issuer", "", "issuer identifier of the authorization server (empty: a built-in development issuer)")
	jwksURL := fs.String("jwks-url", "", "JWK Set URL of the authorization server (required with -issuer)")
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
	k, err := New(ctx, Config{Resource: *resource, Issuer: *issuer, JWKSURL: *jwksURL, Logger: logger})
	if err != nil {
		return err
	}
	defer k.Close()

	srv := mcphttp.NewServer(ln.Addr().String(), k.WithDevIssuer(newRouter(k)))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on %s\n", base)
	if k.Dev() {
		logger.Warn("DEVELOPMENT MODE: tokens come from a built-in development issuer; configure -issuer and -jwks-url for real use")
		if err := printTryIt(stdout, k, base); err != nil {
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

// printTryIt prints development tokens and curl commands.
func printTryIt(w io.Writer, k *Kit, base string) error {
	alice, err := k.DevToken("alice")
	if err != nil {
		return err
	}
	bob, err := k.DevToken("bob")
	if err != nil {
		return err
	}
	post := fmt.Sprintf(`curl -s -w '\n' %s/mcp -H 'Content-Type: application/json' -H 'MCP-Protocol-Version: 2025-11-25'`, base)
	_, err = fmt.Fprintf(w, `
Development tokens (valid 8 hours):
  export ALICE=%s
  export BOB=%s
Try:
  curl -s -w '\n' %s%s
  %s -d '{"jsonrpc":"2.0","id":1,"method":"resources/list"}' -i   # 401 challenge
  %s -H "Authorization: Bearer $ALICE" -d '{"jsonrpc":"2.0","id":1,"method":"resources/list"}'
  %s -H "Authorization: Bearer $ALICE" -d '{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{"cursor":"PASTE nextCursor"}}'
  %s -H "Authorization: Bearer $ALICE" -d '{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"notes://notes/n001"}}'
  %s -H "Authorization: Bearer $BOB" -d '{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"notes://notes/n001"}}'   # not bob's: -32002
`, alice, bob, base, k.MetadataPath, post, post, post, post, post)
	return err
}
