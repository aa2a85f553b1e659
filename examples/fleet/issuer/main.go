// Command issuer is the token issuer of the local fleet that
// examples/fleet/run.sh starts: the examples' development authorization
// server (package devissuer) on an address of its own, so that the three
// documents instances run in production mode (-issuer, -jwks-url) and
// accept the same tokens, whichever of them a request reaches.
//
//	issuer -addr 127.0.0.1:8090 -data-dir DIR -resource http://127.0.0.1:8080/mcp
//	issuer -addr 127.0.0.1:8090 -data-dir DIR -resource http://127.0.0.1:8080/mcp token alice
//
// The first serves, as issuer http://ADDR: the JWK Set at /jwks.json, the
// RFC 8414 metadata, and a sign-in page for MCP clients (anyone who can
// reach it signs in as anyone: for a laptop only). The second prints an
// access token for a user (one hour; documents:read and documents:share),
// signed with the key the first keeps in DIR.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/examples/documents/app"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "issuer:", err)
		}
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("issuer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8090", "listen address (loopback: the issuer is http://ADDR)")
	dir := fs.String("data-dir", ".mcpkit-fleet-issuer", "directory of the signing key")
	resource := fs.String("resource", "http://127.0.0.1:8080/mcp", "the fleet's resource URI: the tokens' audience")
	if err := fs.Parse(args); err != nil {
		return err
	}
	issuer := "http://" + *addr
	is, err := devissuer.Open(*dir, issuer, *resource, devissuer.Options{})
	if err != nil {
		return err
	}
	scopes := []string{app.ScopeRead, app.ScopeShare}
	switch rest := fs.Args(); {
	case len(rest) == 2 && rest[0] == "token":
		tok, err := is.Sign(rest[1], scopes, time.Hour)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, tok)
		return nil
	case len(rest) != 0:
		return errors.New("usage: issuer [flags] [token USER]")
	}

	log := slog.New(slog.NewTextHandler(stderr, nil))
	as, err := is.NewServer(devissuer.ServerOptions{
		Scopes: []devissuer.Scope{
			{Name: app.ScopeRead, Description: "list and read your documents and the ones shared with you"},
			{Name: app.ScopeShare, Description: "share, unshare and edit your own documents"},
		},
		DefaultScopes: []string{app.ScopeRead}, ResourceName: "mcpkit documents (fleet)", Logger: log,
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	for _, p := range as.Paths() {
		mux.Handle(p, as)
	}
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Warn("DEVELOPMENT ISSUER: signs tokens for any user; never in production", "issuer", issuer, "jwks_url", is.JWKSURL(), "audience", *resource)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
