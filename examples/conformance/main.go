// Command conformance serves the fixtures that the official MCP conformance
// suite's server scenarios ask for, with mcpkit:
//
//	go run ./examples/conformance -addr 127.0.0.1:3001
//	../shared/tools/conformance/run server --url http://127.0.0.1:3001/mcp --scenario resources-list
//
// In the default mode (-mode intercept) mcpkit's inventory serves the
// resources in front of a go-sdk server that holds a prompt, so every
// scenario the kit covers passes, completion of prompt arguments included
// (the completion-complete scenario completes a prompt, which mcpkit itself
// does not serve). With -mode endpoint, mcphttp.Endpoint serves alone,
// with change notifications (a notify.Hub): the resources-subscribe and
// resources-unsubscribe scenarios pass there. The suite sends no tokens,
// and the kit mints the session that resources/subscribe needs only for a
// signed-in caller, so in endpoint mode a middleware serves every request
// as the fixture's principal "conformance" (principal.NewContext, as a
// service's authentication middleware would). Intercept mode has no
// notifications: the legacy handler owns the sessions there, and mcpkit
// advertises subscribe false.
//
// It prints "listening on URL" once it accepts connections, and stops on
// SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/notify"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3001", "listen address (port 0 picks a free port)")
	mode := flag.String("mode", "intercept", `"intercept" (inventory in front of a go-sdk server with a prompt) or "endpoint" (mcphttp.Endpoint alone)`)
	flag.Parse()
	if err := run(*addr, *mode); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func run(addr, mode string) error {
	h, hub, err := newHandler(mode)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := mcphttp.NewServer(addr, mux)
	if hub != nil {
		srv.RegisterOnShutdown(hub.Close) // open streams end, so Shutdown does not wait for them
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// fixturePrincipal is who every request is in endpoint mode.
var fixturePrincipal = principal.Principal{Subject: "conformance", ClientID: "conformance-suite"}

// newHandler builds the fixture server, and in endpoint mode the hub of its
// notifications (nil in intercept mode).
func newHandler(mode string) (http.Handler, *notify.Hub, error) {
	inv, err := newInventory()
	if err != nil {
		return nil, nil, err
	}
	opts := mcphttp.Options{
		ServerInfo: mcphttp.Implementation{Name: "mcpkit-conformance", Version: "1.0.0"},
		Logger:     slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	switch mode {
	case "endpoint":
		hub := notify.New(notify.Options{Logger: opts.Logger})
		opts.Notifications = hub
		ep, err := mcphttp.New(inv, opts)
		if err != nil {
			hub.Close()
			return nil, nil, err
		}
		signedIn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, err := principal.NewContext(r.Context(), fixturePrincipal)
			if err != nil {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			ep.ServeHTTP(w, r.WithContext(ctx))
		})
		return signedIn, hub, nil
	case "intercept":
		s := promptServer()
		legacy := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: true})
		h, err := mcphttp.Intercept(inv, legacy, opts)
		return h, nil, err
	}
	return nil, nil, fmt.Errorf("unknown -mode %q", mode)
}

// pngPixel is a 1×1 transparent PNG.
var pngPixel = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
	0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
	0x42, 0x60, 0x82,
}

// newInventory holds the resources the scenarios name.
func newInventory() (*inventory.Inventory, error) {
	statics := []inventory.Resource{
		{
			URI: "test://static-text", Name: "static-text", Title: "Static text",
			Description: "A static text resource", MIMEType: "text/plain", Access: inventory.Public,
			Read: inventory.TextReader("text/plain", "This is the content of the static text resource."),
		},
		{
			URI: "test://static-binary", Name: "static-binary", Title: "Static binary",
			Description: "A static binary resource (a 1×1 PNG)", MIMEType: "image/png", Access: inventory.Public,
			Size: int64(len(pngPixel)), Read: inventory.BlobReader("image/png", pngPixel),
		},
		{
			// The resource the resources-subscribe and -unsubscribe
			// scenarios subscribe to.
			URI: "test://watched-resource", Name: "watched-resource", Title: "Watched resource",
			Description: "A resource to subscribe to", MIMEType: "text/plain", Access: inventory.Public,
			Read: inventory.TextReader("text/plain", "This resource can be subscribed to."),
		},
	}
	templates := []inventory.Template{{
		Name: "template-data", Title: "Template data", Description: "Data for an id",
		URITemplate: "test://template/{id}/data", MIMEType: "application/json", Access: inventory.Public,
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			id := req.Params["id"]
			b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return []inventory.Contents{{URI: req.URI, MIMEType: "application/json", Text: string(b)}}, nil
		},
		Complete: map[string]inventory.CompleteFunc{"id": func(_ context.Context, req inventory.CompleteRequest) (inventory.Completion, error) {
			return inventory.Completion{Values: withPrefix([]string{"123", "456", "789"}, req.Value)}, nil
		}},
	}}
	return inventory.New(statics, templates, inventory.Options{})
}

// promptServer is the go-sdk server behind the inventory in intercept mode:
// it holds the prompt whose argument the completion-complete scenario
// completes.
func promptServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "mcpkit-conformance-prompts", Version: "1.0.0"}, &sdk.ServerOptions{
		CompletionHandler: func(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
			values := withPrefix([]string{"paris", "park", "party", "test", "testing"}, req.Params.Argument.Value)
			return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: values, Total: len(values)}}, nil
		},
	})
	s.AddPrompt(&sdk.Prompt{
		Name:        "test_prompt_with_arguments",
		Description: "A prompt with arguments",
		Arguments:   []*sdk.PromptArgument{{Name: "arg1", Required: true}, {Name: "arg2"}},
	}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{
			Role: "user", Content: &sdk.TextContent{Text: "arg1=" + req.Params.Arguments["arg1"]},
		}}}, nil
	})
	return s
}

func withPrefix(all []string, prefix string) []string {
	out := []string{}
	for _, v := range all {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}
