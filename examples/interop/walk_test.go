package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/app"
	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/examples/internal/flood"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// Issue 21: with the documents server's default rate limits, a client that
// lists a user's whole inventory and reads every resource, as fast as it
// goes, one after another, is never refused — whichever real client it is
// — while a flood of reads still is.

// walkUser owns walkDocuments documents: 401 resources with docs://about,
// in 9 pages of the default 50.
const (
	walkUser      = "dave"
	walkDocuments = 400
)

// defaultServer is the documents server configured as its binary is with
// no flags and no environment (ParseFlags' defaults: the default rate
// limits and page size), on a free loopback port with a fresh data
// directory, walkUser holding walkDocuments documents. It returns the
// server, walkUser's development token, and every URI walkUser may list.
func defaultServer(t *testing.T) (d *documents, token string, want []string) {
	t.Helper()
	cfg, rest, err := app.ParseFlags(nil, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	require.Empty(t, rest)
	require.Equal(t, app.DefaultRateRead, cfg.RateRead, "the defaults, not overridden")
	require.Equal(t, app.DefaultRateList, cfg.RateList)
	cfg.Addr, cfg.DataDir, cfg.Logger = "127.0.0.1:0", t.TempDir(), slog.New(slog.DiscardHandler)
	cfg.DB = "" // the default: SQLite in the data directory

	// walkUser's documents, put in the database before the server opens it.
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(cfg.DataDir, "documents.db"))
	require.NoError(t, err)
	require.NoError(t, store.SeedMany(ctx, db, walkUser, walkDocuments))
	rows, err := db.List(ctx, walkUser, "", store.MaxListLimit)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	want = []string{app.AboutURI}
	for _, r := range rows {
		want = append(want, documentPrefix+r.ID)
	}
	require.Len(t, want, walkDocuments+1)

	runCtx, cancel := context.WithCancel(ctx)
	a, err := app.New(runCtx, cfg)
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, a.Close())
	})
	token, err = app.DevToken(app.Config{DataDir: cfg.DataDir}, walkUser, time.Hour)
	require.NoError(t, err)
	return &documents{app: a, mcpURL: a.URL() + "/mcp"}, token, want
}

// statusCounter counts the HTTP statuses of the responses it carries, and
// adds the bearer token.
type statusCounter struct {
	token string
	mu    sync.Mutex
	seen  map[int]int
}

func (s *statusCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+s.token)
	res, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		s.mu.Lock()
		s.seen[res.StatusCode]++
		s.mu.Unlock()
	}
	return res, err
}

// The filtered listing every client reads besides the walk: the
// RFC 6570 template docs://documents{?q} (a query expression).
const filteredURI = "docs://documents?q=document%20000123"

// checkFiltered checks the text of filteredURI: walkUser's one matching
// document.
func checkFiltered(t *testing.T, text string) {
	t.Helper()
	var fl struct {
		Documents []struct{ URI, Title string } `json:"documents"`
		Truncated bool                          `json:"truncated"`
	}
	require.NoError(t, json.Unmarshal([]byte(text), &fl), text)
	require.Len(t, fl.Documents, 1, text)
	assert.Equal(t, walkUser+"'s document 000123", fl.Documents[0].Title)
	assert.False(t, fl.Truncated)
}

func TestWalkAndReadWithDefaultRateLimitsGoSDK(t *testing.T) {
	d, token, want := defaultServer(t)
	sc := &statusCounter{token: token, seen: map[int]int{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpkit-interop-walk", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.mcpURL, HTTPClient: &http.Client{Transport: sc}}, nil)
	require.NoError(t, err)
	defer cs.Close()

	uris, pages := walk(t, cs)
	assert.Equal(t, want, uris, "every resource, in order")
	assert.Equal(t, 9, pages)
	failed := 0
	for _, u := range uris {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
		if err != nil || len(res.Contents) == 0 || res.Contents[0].URI != u {
			failed++
		}
	}
	assert.Zero(t, failed, "reads that failed")
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: filteredURI})
	require.NoError(t, err)
	checkFiltered(t, res.Contents[0].Text)
	assert.Zero(t, sc.seen[http.StatusTooManyRequests], "no 429: %v", sc.seen)
	t.Logf("go-sdk, protocol %s: %d resources in %d pages, %d reads; statuses %v", cs.InitializeResult().ProtocolVersion, len(uris), pages, len(uris)+1, sc.seen)
}

// A client that only calls tools walks the same way: list_resources counts
// as a list, read_resource as a read (not as a search, as every tools/call
// once did), so it gets the same room.
func TestWalkAndReadWithDefaultRateLimitsGoSDKTools(t *testing.T) {
	d, token, want := defaultServer(t)
	sc := &statusCounter{token: token, seen: map[int]int{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpkit-interop-walk", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.mcpURL, HTTPClient: &http.Client{Transport: sc}}, nil)
	require.NoError(t, err)
	defer cs.Close()

	var listed []string
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 1000)
		args := map[string]any{}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_resources", Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, "page %d", pages+1)
		var page struct {
			Resources  []struct{ URI string } `json:"resources"`
			NextCursor string                 `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal([]byte(toolText(t, res)), &page))
		for _, r := range page.Resources {
			listed = append(listed, r.URI)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	assert.Equal(t, want, listed, "every resource, in order")
	failed := 0
	for _, u := range append(listed, filteredURI) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_resource", Arguments: map[string]any{"uri": u}})
		if err != nil || res.IsError {
			failed++
		}
	}
	assert.Zero(t, failed, "read_resource calls that failed")
	assert.Zero(t, sc.seen[http.StatusTooManyRequests], "no 429: %v", sc.seen)
}

// tsWalk is what tsclient/walk.mjs prints.
type tsWalk struct {
	SDK, SDKVersion, ProtocolVersion string
	Pages                            int      `json:"pages"`
	Listed                           []string `json:"listed"`
	ReadOK                           int      `json:"readOK"`
	ReadFailures                     []struct{ URI, Error string }
	Extra                            []struct{ URI, MIMEType, Text, Error string }
	Statuses                         map[string]int `json:"statuses"`
	Problems                         []string       `json:"problems"`
	OK                               bool           `json:"ok"`
}

func TestWalkAndReadWithDefaultRateLimitsTypeScript(t *testing.T) {
	node, sdkDir := tsSDK(t)
	for _, sdk := range []string{"v1", "v2", "v2-modern"} {
		t.Run(sdk, func(t *testing.T) {
			// A server each: buckets of their own.
			d, token, want := defaultServer(t)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard, not a timing assertion
			defer cancel()
			cmd := exec.CommandContext(ctx, node, filepath.Join("tsclient", "walk.mjs"), sdk, d.mcpURL, filteredURI)
			cmd.Env = append(os.Environ(), "MCPKIT_TS_SDK_DIR="+sdkDir, "MCPKIT_TOKEN="+token)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			runErr := cmd.Run()
			var exit *exec.ExitError
			if errors.As(runErr, &exit) && exit.ExitCode() == 2 || runErr != nil && !errors.As(runErr, &exit) {
				t.Fatalf("walk.mjs could not run: %v\n%s", runErr, stderr.String())
			}
			var s tsWalk
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &s), "summary:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			t.Logf("TypeScript SDK %s %s, protocol %s: %d resources in %d pages, %d reads; statuses %v", sdk, s.SDKVersion, s.ProtocolVersion, len(s.Listed), s.Pages, s.ReadOK, s.Statuses)
			assert.Empty(t, s.Problems)
			assert.True(t, s.OK)
			assert.Equal(t, want, s.Listed, "every resource, in order")
			assert.Equal(t, 9, s.Pages)
			assert.Equal(t, len(want), s.ReadOK)
			assert.Zero(t, s.Statuses["429"], "no 429")
			if assert.Len(t, s.Extra, 1) {
				assert.Equal(t, "application/json", s.Extra[0].MIMEType)
				checkFiltered(t, s.Extra[0].Text)
			}
		})
	}
}

const inspectorHint = `install the pinned MCP Inspector and export its directory:
	eval "$(bash examples/interop/inspector/install.sh)"`

// inspectorCLI returns the node binary (Node.js 22, installed with the
// Inspector) and the Inspector's launcher script. Outside CI, a missing
// piece skips the test; under CI=true it fails it.
func inspectorCLI(t *testing.T) (node, launcher string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if mustRun() {
			t.Fatalf(mustRunReason()+format, args...)
		}
		t.Skipf(format, args...)
	}
	dir := os.Getenv("MCPKIT_INSPECTOR_DIR")
	if dir == "" {
		missing("MCPKIT_INSPECTOR_DIR is not set; " + inspectorHint)
	}
	var pinned, installed struct {
		Version      string            `json:"version"`
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSON(t, filepath.Join("inspector", "package.json"), &pinned)
	pkg := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector")
	b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if errors.Is(err, os.ErrNotExist) {
		missing("no @modelcontextprotocol/inspector in MCPKIT_INSPECTOR_DIR=%s; %s", dir, inspectorHint)
	}
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &installed))
	require.Equal(t, pinned.Dependencies["@modelcontextprotocol/inspector"], installed.Version,
		"MCPKIT_INSPECTOR_DIR holds another Inspector version than inspector/package.json pins; %s", inspectorHint)
	node = filepath.Join(dir, "node_modules", ".bin", "node")
	_, err = os.Stat(node)
	if err != nil {
		missing("no node in %s/node_modules/.bin; %s", dir, inspectorHint)
	}
	return node, filepath.Join(pkg, "clients", "launcher", "build", "index.js")
}

// inspect runs one Inspector CLI command against url with the bearer
// token and decodes its standard output into v; it returns the exit
// status and standard error. HOME is a directory of the test's own: the
// CLI keeps state there.
func inspect(t *testing.T, node, launcher, url, token string, v any, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard, not a timing assertion
	defer cancel()
	argv := append([]string{launcher, "--cli", url, "--transport", "http", "--header", "Authorization: Bearer " + token}, args...)
	cmd := exec.CommandContext(ctx, node, argv...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("the Inspector could not run: %v\n%s", err, stderr.String())
	}
	if cmd.ProcessState.ExitCode() == 0 && v != nil {
		require.NoError(t, json.Unmarshal(stdout.Bytes(), v), "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stdout.String() + stderr.String()
}

// The MCP Inspector's CLI lists every page in one command (it gathers
// nextCursor itself, with the TypeScript SDK v2's ceiling of 64 pages; its
// --cursor flag is for resources/directory/read only) and reads one
// resource per command, a new Node.js process each (about a second of
// CPU): reading all 401 would take minutes and could never reach the read
// limit. So it lists all, and reads a sample: every 50th resource and the
// last, and the filtered listing.
func TestWalkAndReadWithDefaultRateLimitsInspector(t *testing.T) {
	node, launcher := inspectorCLI(t)
	d, token, want := defaultServer(t)

	var listed struct {
		Resources []struct{ URI string } `json:"resources"`
	}
	code, out := inspect(t, node, launcher, d.mcpURL, token, &listed, "--method", "resources/list")
	require.Zero(t, code, out)
	var uris []string
	for _, r := range listed.Resources {
		uris = append(uris, r.URI)
	}
	assert.Equal(t, want, uris, "every resource, in order")

	type readResult struct {
		Contents []struct{ URI, MIMEType, Text string } `json:"contents"`
	}
	var sample []string
	for i := 0; i < len(want); i += 50 {
		sample = append(sample, want[i])
	}
	sample = append(sample, want[len(want)-1])
	for _, u := range sample {
		var res readResult
		code, out := inspect(t, node, launcher, d.mcpURL, token, &res, "--method", "resources/read", "--uri", u)
		if assert.Zero(t, code, "%s: %s", u, out) && assert.NotEmpty(t, res.Contents, u) {
			assert.Equal(t, u, res.Contents[0].URI)
		}
	}
	var res readResult
	code, out = inspect(t, node, launcher, d.mcpURL, token, &res, "--method", "resources/read", "--uri", filteredURI)
	require.Zero(t, code, out)
	require.Len(t, res.Contents, 1)
	assert.Equal(t, "application/json", res.Contents[0].MIMEType)
	checkFiltered(t, res.Contents[0].Text)
	t.Logf("MCP Inspector CLI: %d resources listed in one command, %d read", len(uris), len(sample)+1)
}

// TestReadFloodIsRateLimited: 3,000 reads at once (32 in flight) from one
// caller, with the same defaults: up to app.DefaultMaxInFlight are served
// at a time, the others get 429 with Retry-After and the JSON-RPC error
// ratelimit.CodeRateLimited (issue 27: the bound on calls in flight, not
// the read bucket, refuses a flood; the bucket holds two walks of 1,000).
func TestReadFloodIsRateLimited(t *testing.T) {
	d, token, want := defaultServer(t)
	const reads, inFlight = 3000, 32
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":%q}}`, want[1])
	c := flood.Start(http.DefaultClient, d.mcpURL, token, body, reads, inFlight)()
	t.Logf("%d reads: %d served, %d refused with 429 (default read rate %s)", reads, c.Served, c.Limited, app.DefaultRateRead)
	assert.Zero(t, c.Other, "only 200 and 429s with Retry-After in whole seconds and the JSON-RPC error %d", ratelimit.CodeRateLimited)
	assert.GreaterOrEqual(t, c.Served, int64(app.DefaultMaxInFlight), "calls are served up to the bound")
	assert.Positive(t, c.Limited, "a flood is limited")
}
