// Command conformance serves the fixtures that the official MCP conformance
// suite's server scenarios ask for, with mcpkit:
//
//	go run ./examples/conformance -addr 127.0.0.1:3001
//	../shared/tools/conformance/run server --url http://127.0.0.1:3001/mcp --scenario resources-list
//
// In the default mode (-mode intercept) mcpkit's inventory serves the
// resources in front of a stateful go-sdk server that holds a prompt, so every
// scenario the kit covers passes, completion of prompt arguments included
// (the completion-complete scenario completes a prompt, which mcpkit itself
// does not serve). With -mode endpoint, mcphttp.Endpoint serves alone,
// with change notifications (a notify.Hub) and the tools bridge: the
// 2026-07-28 header validation scenarios find a tool to call. In both
// modes the suite's test tools that return results (test_simple_text,
// test_image_content, test_audio_content, test_embedded_resource,
// test_multiple_content_types, test_error_handling,
// json_schema_2020_12_tool, test_x_mcp_header) are tools of the kit's own tool API
// (suiteTools). Both modes have change notifications: in intercept mode the go-sdk server owns the
// sessions and the kit's sessions part delivers into them. The suite sends
// no tokens, and the kit delivers notifications only to a signed-in
// caller, so a middleware serves every request as the fixture's principal
// "conformance" (principal.NewContext, as a service's authentication
// middleware would).
//
// With -auth the fixture verifies tokens instead (JWT by JWK Set, opaque
// tokens by introspection, DPoP, scopes per operation), for the suite's
// authorization scenarios: see auth.go.
//
// Both modes serve the Skills extension's scenarios (sep-2640-*) with
// mcphttp/skills: one skill with subdirectories (skills.go).
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

	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/principal"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/notify"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3001", "listen address (port 0 picks a free port)")
	mode := flag.String("mode", "intercept", `"intercept" (the kit in front of a go-sdk server with the suite's prompts and tools), "endpoint" (mcphttp.Endpoint alone, with notifications and the tools bridge) or "sdk" (that go-sdk server alone: the baseline intercept mode must not fall below)`)
	var ac authConfig
	withAuth := flag.Bool("auth", false, "verify tokens (JWT by JWK Set, opaque by introspection, DPoP) instead of serving every request as one principal: see auth.go")
	flag.StringVar(&ac.resource, "resource", "", "with -auth: the canonical URI of /mcp, the tokens' audience (default http://ADDR/mcp)")
	flag.StringVar(&ac.issuer, "auth-issuer", "", "with -auth: an outside JWT issuer (default: the built-in one)")
	flag.StringVar(&ac.jwks, "auth-jwks-url", "", "with -auth: the outside issuer's JWK Set URL")
	flag.StringVar(&ac.introspection, "auth-introspection", "", "with -auth: an outside RFC 7662 endpoint for opaque tokens (default: the built-in /introspect)")
	flag.StringVar(&ac.clientID, "auth-client-id", "", "with -auth-introspection: this server's client id there")
	flag.StringVar(&ac.clientSecret, "auth-client-secret", "", "with -auth-introspection: this server's client secret there")
	flag.StringVar(&ac.dpop, "dpop", "allowed", "with -auth: DPoP off, allowed or required")
	flag.BoolVar(&ac.nonce, "dpop-nonce", false, "with -auth: DPoP proofs carry server nonces")
	flag.Parse()
	var auth *authConfig
	if *withAuth {
		auth = &ac
	}
	if err := run(*addr, *mode, auth); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func run(addr, mode string, ac *authConfig) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	var af *authFixture
	if ac != nil {
		if ac.resource == "" {
			ac.resource = "http://" + ln.Addr().String() + "/mcp"
		}
		if af, err = newAuthFixture(context.Background(), *ac); err != nil {
			ln.Close()
			return err
		}
		defer af.close()
	}
	h, hub, err := newHandler(mode, af)
	if err != nil {
		ln.Close()
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	if af != nil {
		af.routes(mux)
		if af.issuer != nil {
			// Tokens of the built-in issuer, for trying the mode by hand.
			fmt.Printf("token alice (every scope): %s\n", af.issuer.Token("alice", allScopes...))
			fmt.Printf("token bob (mcp only): %s\n", af.issuer.Token("bob", scopeBase))
		}
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

// newHandler builds the fixture server and the hub of its notifications;
// with af, in the auth mode.
func newHandler(mode string, af *authFixture) (http.Handler, *notify.Hub, error) {
	inv, err := newInventory(af != nil)
	if err != nil {
		return nil, nil, err
	}
	opts := mcphttp.Options{
		ServerInfo: mcphttp.Implementation{Name: "mcpkit-conformance", Version: "1.0.0"},
		Logger:     slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	if af != nil {
		opts.Authenticator = af.auth
	}
	hub := notify.New(notify.Options{Logger: opts.Logger})
	var h http.Handler
	switch mode {
	case "endpoint":
		ep, err := endpoint(inv, opts, hub, af != nil)
		if err != nil {
			hub.Close()
			return nil, nil, err
		}
		h = ep
	case "intercept":
		h, err = interceptHandler(inv, opts, hub, af != nil)
		if err != nil {
			hub.Close()
			return nil, nil, err
		}
	case "sdk":
		hub.Close() // the go-sdk server alone: no kit, no hub
		return sdkHandler(), nil, nil
	default:
		hub.Close()
		return nil, nil, fmt.Errorf("unknown -mode %q", mode)
	}
	if af != nil {
		return h, hub, nil // the Authenticator decides who asks
	}
	signedIn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, err := principal.NewContext(r.Context(), fixturePrincipal)
		if err != nil {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r.WithContext(ctx))
	})
	return signedIn, hub, nil
}

// interceptHandler is the intercept mode's server: the core with the
// sessions part in front of a stateful go-sdk server with a prompt; the
// part is also Intercept's Sessions, so the kit's notifications reach the
// go-sdk server's sessions.
func interceptHandler(inv *inventory.Inventory, opts mcphttp.Options, hub *notify.Hub, withAuth bool) (http.Handler, error) {
	streams, err := sessions.New(hub, sessions.Options{})
	if err != nil {
		return nil, err
	}
	suite, err := tools.New(suiteTools(withAuth)...)
	if err != nil {
		return nil, err
	}
	skillsPart, err := newSkills(inv)
	if err != nil {
		return nil, err
	}
	ep, err := mcphttp.New(inv, opts, streams, suite, skillsPart)
	if err != nil {
		return nil, err
	}
	// The go-sdk server (v1.8.0) speaks the legacy protocols; its stateless
	// handler answers the 2026-07-28 era's requests as a server of that
	// era is checked for (no sessions, removed methods refused), its
	// stateful one holds the legacy sessions the kit delivers into.
	iopts := intercept.Options{Logger: opts.Logger, Sessions: streams}
	if withAuth {
		// The go-sdk server's prompts and one of its tools need scopes,
		// challenged as the kit's own.
		iopts.MethodScopes = map[string][]string{"prompts/get": {scopePrompts}}
		iopts.ToolScopes = map[string][]string{"test_tool_with_progress": {scopeProgress}}
	}
	return intercept.New(ep, sdkHandler(), iopts)
}

// sdkHandler is the go-sdk server of intercept mode, which -mode sdk
// serves alone.
func sdkHandler() http.Handler {
	s := promptServer()
	stateful := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	stateless := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("MCP-Protocol-Version") == "2026-07-28" { // the modern era
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// endpoint is the endpoint mode's server: the core with sessions and
// streams (notifications: subscriptions too) and the built-in tools (the
// scenarios that validate the Mcp-Name header, http-header-validation,
// call a listed tool).
func endpoint(inv *inventory.Inventory, opts mcphttp.Options, hub *notify.Hub, withAuth bool) (*mcphttp.Endpoint, error) {
	streams, err := sessions.New(hub, sessions.Options{})
	if err != nil {
		return nil, err
	}
	builtin, err := tools.Builtin(inv, tools.BuiltinOptions{})
	if err != nil {
		return nil, err
	}
	toolPart, err := tools.New(append(builtin, suiteTools(withAuth)...)...)
	if err != nil {
		return nil, err
	}
	skillsPart, err := newSkills(inv)
	if err != nil {
		return nil, err
	}
	return mcphttp.New(inv, opts, streams, toolPart, skillsPart)
}

// suiteTools are the conformance suite's test tools that a tool of the
// kit's own answers (tools-call-simple-text, -image, -audio,
// -embedded-resource, -mixed-content, -error, json-schema-2020-12, and
// http-custom-header-server-validation's x-mcp-header tool): each
// a tools.Tool value whose handler returns a typed result. The ones that
// need requests from the server to the client (logging, progress,
// sampling, elicitation) are not the kit's.
func suiteTools(withAuth bool) []tools.Tool {
	answer := func(res tools.Result) tools.Handler {
		return func(context.Context, *tools.Request) (tools.Result, error) { return res, nil }
	}
	var scoped []tools.Tool
	if withAuth {
		scoped = append(scoped, scopedTool())
	}
	return append(scoped, []tools.Tool{
		{Name: "test_simple_text", Description: "Returns simple text", Access: inventory.Public, ReadOnly: true,
			Handler: answer(tools.TextResult("This is a simple text response for testing."))},
		{Name: "test_image_content", Description: "Returns an image", Access: inventory.Public, ReadOnly: true,
			Handler: answer(tools.Result{Content: []tools.Content{tools.Image(pngPixel, "image/png")}})},
		{Name: "test_audio_content", Description: "Returns audio", Access: inventory.Public, ReadOnly: true,
			Handler: answer(tools.Result{Content: []tools.Content{tools.Audio(wavSilence, "audio/wav")}})},
		{Name: "test_embedded_resource", Description: "Returns an embedded resource", Access: inventory.Public, ReadOnly: true,
			Handler: answer(tools.Result{Content: []tools.Content{tools.Embedded(inventory.Contents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."})}})},
		{Name: "test_multiple_content_types", Description: "Returns text, an image and a resource", Access: inventory.Public, ReadOnly: true,
			Handler: answer(tools.Result{Content: []tools.Content{
				tools.Text("Multiple content types test:"),
				tools.Image(pngPixel, "image/png"),
				tools.Embedded(inventory.Contents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}),
			}})},
		{Name: "test_error_handling", Description: "Always fails", Access: inventory.Public, ReadOnly: true,
			Handler: answer(tools.ErrorResult("This tool intentionally returns an error for testing"))},
		{Name: "test_x_mcp_header", Description: "An argument repeated in the Mcp-Param-Region header", Access: inventory.Public, ReadOnly: true,
			InputSchema: `{"type":"object","properties":{"region":{"type":"string","description":"A region","x-mcp-header":"Region"}},"required":["region"]}`,
			Handler: func(_ context.Context, req *tools.Request) (tools.Result, error) {
				var args struct {
					Region string `json:"region"`
				}
				if err := req.Bind(&args); err != nil {
					return tools.ErrorResult("The arguments do not fit the input schema."), nil
				}
				return tools.TextResult("region=" + args.Region), nil
			}},
		{Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features", Access: inventory.Public, ReadOnly: true,
			InputSchema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
				`"$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
				`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},"additionalProperties":false}`,
			Handler: func(_ context.Context, req *tools.Request) (tools.Result, error) {
				var args struct {
					Name    string `json:"name"`
					Address *struct {
						Street string `json:"street"`
						City   string `json:"city"`
					} `json:"address"`
				}
				if err := req.Bind(&args); err != nil {
					return tools.ErrorResult("The arguments do not fit the input schema."), nil
				}
				return tools.TextResult("Hello, " + args.Name + "."), nil
			}},
	}...)
}

// wavSilence is a WAV file of one sample of silence (8 kHz, 8-bit mono).
var wavSilence = []byte{
	'R', 'I', 'F', 'F', 37, 0, 0, 0, 'W', 'A', 'V', 'E',
	'f', 'm', 't', ' ', 16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x40, 0x1f, 0, 0, 1, 0, 8, 0,
	'd', 'a', 't', 'a', 1, 0, 0, 0, 0x80,
}

// pngPixel is a 1×1 transparent PNG.
var pngPixel = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
	0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
	0x42, 0x60, 0x82,
}

// newInventory holds the resources the scenarios name; withAuth adds the
// auth mode's private template.
func newInventory(withAuth bool) (*inventory.Inventory, error) {
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
	statics = append(statics, skillStatics()...)
	templates := []inventory.Template{skillTemplate(), {
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
	if withAuth {
		templates = append(templates, privateTemplate())
	}
	return inventory.New(statics, templates, inventory.Options{})
}

// promptServer is the go-sdk server behind the inventory in intercept mode:
// it holds the prompt of the prompts-get-with-args scenario, whose
// argument the completion-complete scenario completes, and the suite's
// other prompts and client-facing tools (sdkfixtures.go).
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
		Arguments: []*sdk.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
	}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		// The text the prompts-get-with-args scenario's specification gives.
		args := req.Params.Arguments
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{
			Role: "user", Content: &sdk.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])},
		}}}, nil
	})
	addSuitePrompts(s)
	addSuiteTools(s)
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
