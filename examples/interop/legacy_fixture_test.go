package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
)

// This file builds, through the public API only, the private inventory that
// the Intercept tests put in front of real go-sdk and mcp-go servers (it
// was mcphttp's internal test fixture before the interop tests left the
// core module): two public statics, a protected documents template over
// an in-memory keyset source (alice 12 documents, bob 3), and a public
// data template with completion; a JWT authenticator whose JWK Set is
// fetched over real HTTP from a development issuer.

const interceptResource = "https://mcp.example.com/mcp"

// interceptFixture is the inventory and authenticator Intercept wraps a
// legacy server with, and the issuer of the tokens they accept.
type interceptFixture struct {
	issuer *devissuer.Issuer
	auth   *authn.Authenticator
	inv    *inventory.Inventory
}

func newInterceptFixture(tb testing.TB) *interceptFixture {
	tb.Helper()
	mux := http.NewServeMux()
	idp := httptest.NewServer(mux)
	tb.Cleanup(idp.Close)
	is, err := devissuer.New(idp.URL, interceptResource, devissuer.Options{ClientID: "client-1"})
	require.NoError(tb, err)
	mux.Handle(is.JWKSPath(), is.JWKSHandler())
	v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{
		Issuer: is.Issuer(), Resource: interceptResource, JWKSURL: is.JWKSURL(),
	})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = v.Close() })
	auth, err := authn.NewAuthenticator(authn.NewCache(v, authn.CacheOptions{}), authn.Options{
		Resource: interceptResource, Scopes: []string{"docs:read"},
	})
	require.NoError(tb, err)

	docs := newKeysetDocs()
	docs.add("alice", 12)
	docs.add("bob", 3)
	statics := []inventory.Resource{
		{URI: "test://static-text", Name: "static-text", Description: "A static text resource",
			MIMEType: "text/plain", Access: inventory.Public,
			Read: inventory.TextReader("text/plain", "This is the content of the static text resource.")},
		{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource",
			MIMEType: "image/png", Access: inventory.Public,
			Read: inventory.BlobReader("image/png", []byte("\x89PNG\r\n\x1a\n"))},
	}
	documents := inventory.Template{
		Name: "documents", Title: "Documents", Description: "The caller's own documents",
		URITemplate: "docs://documents/{id}", MIMEType: "text/plain",
		Access: inventory.Protected, RequiredScopes: []string{"docs:read"},
		List: docs.list, Read: docs.read,
	}
	data := inventory.Template{
		Name: "template-data", URITemplate: "test://template/{id}/data", MIMEType: "application/json",
		Access: inventory.Public,
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			b, _ := json.Marshal(map[string]any{"id": req.Params["id"], "templateTest": true, "data": "Data for ID: " + req.Params["id"]})
			return []inventory.Contents{{URI: req.URI, MIMEType: "application/json", Text: string(b)}}, nil
		},
		Complete: map[string]inventory.CompleteFunc{
			"id": func(_ context.Context, req inventory.CompleteRequest) (inventory.Completion, error) {
				var out []string
				for _, v := range []string{"123", "124", "200"} {
					if strings.HasPrefix(v, req.Value) {
						out = append(out, v)
					}
				}
				return inventory.Completion{Values: out}, nil
			},
		},
	}
	inv, err := inventory.New(statics, []inventory.Template{documents, data}, inventory.Options{PageSize: 5})
	require.NoError(tb, err)
	return &interceptFixture{issuer: is, auth: auth, inv: inv}
}

// token mints an access token for subject with the documents scope.
func (f *interceptFixture) token(tb testing.TB, subject string) string {
	tb.Helper()
	tok, err := f.issuer.Sign(subject, []string{"docs:read"}, time.Hour)
	require.NoError(tb, err)
	return tok
}

// keysetDocs is an in-memory keyset source: each subject's documents
// sorted by key. Documents of subject s are "s-0000", "s-0001", …
type keysetDocs struct {
	entries map[string][]inventory.Entry
}

func newKeysetDocs() *keysetDocs { return &keysetDocs{entries: map[string][]inventory.Entry{}} }

func (s *keysetDocs) add(subject string, n int) {
	k := len(s.entries[subject])
	for i := k; i < k+n; i++ {
		id := fmt.Sprintf("%s-%04d", subject, i)
		s.entries[subject] = append(s.entries[subject], inventory.Entry{
			Key: fmt.Sprintf("k%06d", i), URI: "docs://documents/" + id, Name: "Document " + id, MIMEType: "text/plain",
		})
	}
}

func (s *keysetDocs) list(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
	all := s.entries[req.Principal.Subject]
	i := sort.Search(len(all), func(i int) bool { return all[i].Key > req.After })
	end := min(i+req.Limit, len(all))
	return inventory.Page{Entries: all[i:end:end], HasMore: end < len(all)}, nil
}

func (s *keysetDocs) read(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	if req.Principal == nil {
		return nil, inventory.ErrNotFound
	}
	for _, e := range s.entries[req.Principal.Subject] {
		if e.URI == "docs://documents/"+req.Params["id"] {
			return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: "Contents of " + e.Name}}, nil
		}
	}
	return nil, inventory.ErrNotFound
}

type echoInput struct {
	Text string `json:"text"`
}

// goSDKServer is an existing go-sdk MCP server with one tool.
func goSDKServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "legacy-go-sdk", Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes its input"},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoInput) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	return s
}

// mcpGoServer is an existing mcp-go MCP server with one tool.
func mcpGoServer() http.Handler {
	s := mcpgoserver.NewMCPServer("legacy-mcp-go", "1.0.0", mcpgoserver.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echoes its input"), mcp.WithString("text")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	return mcpgoserver.NewStreamableHTTPServer(s)
}

// jsonRPC is a 2025-era JSON-RPC request body.
func jsonRPC(id int, method string, params map[string]any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// intercept puts the fixture's endpoint in front of legacy; with tools, the
// endpoint also serves the kit's inventory tools (list_resources,
// read_resource).
func (f *interceptFixture) intercept(legacy http.Handler, withTools bool) (http.Handler, error) {
	var parts []mcphttp.Part
	if withTools {
		builtin, err := tools.Builtin(f.inv, tools.BuiltinOptions{})
		if err != nil {
			return nil, err
		}
		tp, err := tools.New(builtin...)
		if err != nil {
			return nil, err
		}
		parts = append(parts, tp)
	}
	ep, err := mcphttp.New(f.inv, mcphttp.Options{Authenticator: f.auth}, parts...)
	if err != nil {
		return nil, err
	}
	return intercept.New(ep, legacy, intercept.Options{})
}
