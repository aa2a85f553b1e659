package inventory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/fakeclock"
	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// clock is an injectable clock for cursor expiry.
type clock = fakeclock.Clock

func newClock() *clock { return fakeclock.New(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)) }

// logBuffer collects operator log records (JSON lines).
type logBuffer struct{ logbuf.Buffer }

// records returns the decoded log records.
func (l *logBuffer) records(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split([]byte(l.String()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m))
		out = append(out, m)
	}
	return out
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(l, nil)) }

// Principals of the tests. Scopes are sorted, as authn makes them.
func alice() *principal.Principal {
	return &principal.Principal{Subject: "alice", ClientID: "client-1", Scopes: []string{"docs:read", "notes:read"}, Audience: "https://mcp.example.com/mcp"}
}

func bob() *principal.Principal {
	return &principal.Principal{Subject: "bob", ClientID: "client-1", Scopes: []string{"docs:read"}, Audience: "https://mcp.example.com/mcp"}
}

// fixture is an Inventory over two MemorySources.
type fixture struct {
	inv         *inventory.Inventory
	docs, notes *inventorytest.MemorySource
	clock       *clock
	log         *logBuffer
	sealer      *sealedcursor.Sealer
}

func docID(i int) string { return fmt.Sprintf("d%04d", i) }

func docEntry(i int) inventory.Entry {
	return inventory.Entry{Key: fmt.Sprintf("k%06d", i), URI: "docs://documents/" + docID(i), Name: fmt.Sprintf("Document %d", i)}
}

func noteEntry(i int) inventory.Entry {
	return inventory.Entry{Key: fmt.Sprintf("n%06d", i), URI: fmt.Sprintf("docs://notes/n%d", i), Name: fmt.Sprintf("Note %d", i), MIMEType: "text/markdown"}
}

func docsTemplate(src inventory.ListFunc) inventory.Template {
	return inventory.Template{
		Name: "documents", URITemplate: "docs://documents/{id}", MIMEType: "text/plain",
		RequiredScopes: []string{"docs:read"}, Read: readEcho, List: src,
	}
}

func notesTemplate(src inventory.ListFunc) inventory.Template {
	return inventory.Template{
		Name: "notes", URITemplate: "docs://notes/{id}",
		RequiredScopes: []string{"notes:read"}, Read: readEcho, List: src,
	}
}

// readEcho returns the URI and the id as text.
func readEcho(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: "id=" + req.Params["id"]}}, nil
}

func statics() []inventory.Resource {
	return []inventory.Resource{
		{URI: "docs://readme", Name: "README", Access: inventory.Public, Read: inventory.TextReader("text/plain", "hello")},
		{URI: "docs://policy", Name: "Policy", RequiredScopes: []string{"docs:read"}, Read: inventory.TextReader("text/plain", "policy")},
	}
}

func newFixture(t testing.TB, opts inventory.Options) *fixture {
	t.Helper()
	f := &fixture{docs: inventorytest.NewMemorySource(), notes: inventorytest.NewMemorySource(), clock: newClock(), log: &logBuffer{}}
	if opts.Sealer == nil {
		f.sealer = sealedcursor.MustNew(sealedcursor.Options{Now: f.clock.Now})
		opts.Sealer = f.sealer
	}
	if opts.Logger == nil {
		opts.Logger = f.log.logger()
	}
	inv, err := inventory.New(statics(), []inventory.Template{docsTemplate(f.docs.List), notesTemplate(f.notes.List)}, opts)
	require.NoError(t, err)
	f.inv = inv
	return f
}

// listed is a decoded resources/list result.
type listed struct {
	Resources []struct {
		URI      string `json:"uri"`
		Name     string `json:"name"`
		MIMEType string `json:"mimeType"`
	} `json:"resources"`
	NextCursor *string `json:"nextCursor"`
}

func (l listed) uris() []string {
	var out []string
	for _, r := range l.Resources {
		out = append(out, r.URI)
	}
	return out
}

// testEnv is a JSON-RPC envelope.
var testEnv = envelope{Head: []byte(`{"jsonrpc":"2.0","id":1,"result":`), Tail: []byte(`}`)}

// page lists one page and decodes its result.
func page(t testing.TB, inv *inventory.Inventory, caller *principal.Principal, cursor string) (listed, []byte) {
	t.Helper()
	out, err := listWire(context.Background(), inv, caller, cursor, testEnv)
	require.NoError(t, err)
	var resp struct {
		Result listed `json:"result"`
	}
	require.NoError(t, json.Unmarshal(out, &resp), "%s", out)
	if resp.Result.NextCursor != nil {
		require.NotEmpty(t, *resp.Result.NextCursor, "nextCursor is never empty")
	}
	return resp.Result, out
}

// walkAll lists every page and returns all URIs and the number of pages.
func walkAll(t testing.TB, inv *inventory.Inventory, caller *principal.Principal) ([]string, int) {
	t.Helper()
	var all []string
	cursor := ""
	for n := 1; ; n++ {
		require.Less(t, n, 100000, "the traversal must end")
		l, _ := page(t, inv, caller, cursor)
		all = append(all, l.uris()...)
		if l.NextCursor == nil {
			return all, n
		}
		cursor = *l.NextCursor
	}
}

// extractCursor returns the nextCursor of a response, which must have one.
func extractCursor(t testing.TB, out []byte) string {
	t.Helper()
	var resp struct {
		Result struct {
			NextCursor *string `json:"nextCursor"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(out, &resp), "%s", out)
	require.NotNil(t, resp.Result.NextCursor, "%s", out)
	return *resp.Result.NextCursor
}
