package interop_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/app"
)

// documentPrefix starts the URI of every document (app.DocumentTemplate).
const documentPrefix = "docs://documents/"

// documents is the documents server running in the test process.
type documents struct {
	app        *app.App
	mcpURL     string
	alice, bob string // development tokens
}

// startDocuments starts the documents server on a free loopback port with a
// fresh data directory (SQLite, seeded) and its development issuer, 5
// resources a page, so that the seeded users' lists span several pages.
func startDocuments(t *testing.T) *documents {
	t.Helper()
	return startDocumentsWith(t, nil)
}

// startDocumentsWith is startDocuments with a configuration that mutate
// changes first (it starts with the log discarded and 5 resources a page).
func startDocumentsWith(t *testing.T, mutate func(*app.Config)) *documents {
	t.Helper()
	dir := t.TempDir()
	cfg := app.Config{Addr: "127.0.0.1:0", DataDir: dir, PageSize: 5, Logger: slog.New(slog.DiscardHandler)}
	if mutate != nil {
		mutate(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg)
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, a.Close())
	})
	token := func(subject string) string {
		// For the server that recorded itself in its data directory.
		tok, err := app.DevToken(app.Config{DataDir: cfg.DataDir}, subject, time.Hour)
		require.NoError(t, err)
		return tok
	}
	return &documents{app: a, mcpURL: a.URL() + "/mcp", alice: token("alice"), bob: token("bob")}
}

// bearer adds a bearer token to every request, as an MCP client configured
// with an access token does.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens a go-sdk client session; token "" connects anonymously,
// version "" asks for the newest protocol (2026-07-28, via server/discover).
func (d *documents) connect(t *testing.T, token, version string) *mcp.ClientSession {
	t.Helper()
	hc := http.DefaultClient
	if token != "" {
		hc = &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpkit-interop", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: d.mcpURL, HTTPClient: hc},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// walk lists every page of resources/list and returns the URIs in order and
// the number of pages.
func walk(t *testing.T, cs *mcp.ClientSession) (uris []string, pages int) {
	t.Helper()
	cursor := ""
	for {
		page, err := cs.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: cursor})
		require.NoError(t, err)
		pages++
		for _, r := range page.Resources {
			uris = append(uris, r.URI)
		}
		if cursor = page.NextCursor; cursor == "" {
			return uris, pages
		}
		require.Less(t, pages, 1000, "the traversal must end")
	}
}

// documentsOf keeps the document URIs of a listing (the public
// docs://about resource is listed to everyone).
func documentsOf(uris []string) []string {
	var out []string
	for _, u := range uris {
		if strings.HasPrefix(u, documentPrefix) {
			out = append(out, u)
		}
	}
	return out
}

// bobsDocuments lists bob's documents with his own token.
func (d *documents) bobsDocuments(t *testing.T) []string {
	t.Helper()
	uris, _ := walk(t, d.connect(t, d.bob, "2025-11-25"))
	docs := documentsOf(uris)
	require.NotEmpty(t, docs, "bob owns documents")
	return docs
}
