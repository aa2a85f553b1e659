package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/app"
)

// chromiumEnv names the Chromium binary when it is not on PATH as
// chromium or chromium-browser.
const chromiumEnv = "MCPKIT_CHROMIUM"

const chromiumHint = `install Debian's chromium package (apt-get install chromium), or set ` + chromiumEnv + ` to a Chromium or Chrome binary`

// chromium returns the browser binary. Outside CI a missing browser skips
// the test; under CI=true it fails it (.ci/run installs chromium).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(chromiumEnv); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if mustRun() {
		t.Fatalf(mustRunReason()+"no chromium on PATH; %s", chromiumHint)
	}
	t.Skipf("no chromium on PATH: %s", chromiumHint)
	return ""
}

// pageResult is what the page's script found out; it shows it in the DOM
// (<pre id="result">) and posts it to its own origin.
type pageResult struct {
	Origin string `json:"origin"`
	Pages  int    `json:"pages"`
	Listed []struct {
		URI  string `json:"uri"`
		Name string `json:"name"`
	} `json:"listed"`
	Read struct {
		URI  string `json:"uri"`
		Text string `json:"text"`
	} `json:"read"`
	ModernRead struct {
		Status int    `json:"status"`
		Text   string `json:"text"`
	} `json:"modernRead"`
	SessionIDVisible bool `json:"sessionIdVisible"`
	Anonymous        struct {
		Status          int    `json:"status"`
		WWWAuthenticate string `json:"wwwAuthenticate"`
	} `json:"anonymous"`
	NoCORS struct {
		Type  string `json:"type"`
		Error string `json:"error"`
	} `json:"noCors"`
	Error string `json:"error"`
}

// pageScript lists every page of resources/list (following nextCursor),
// reads a document (in both protocol eras: the 2026-07-28 request sends
// Mcp-Method and Mcp-Name), initializes (the Mcp-Session-Id header must be
// readable) and lists without a token (the 401's WWW-Authenticate must be
// readable), all with fetch and a bearer token from the page's origin to
// the API's. Then it posts a "simple" cross-origin request (text/plain, no
// preflight, mode no-cors), shows what it found in the DOM and posts it to
// its own origin.
const pageScript = `
const out = {origin: location.origin, pages: 0, listed: []};
let nextID = 1;
async function rpc(method, params, extra = {}, token = TOKEN) {
  const headers = {'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2025-11-25', ...extra};
  if (token) headers['Authorization'] = 'Bearer ' + token;
  const msg = {jsonrpc: '2.0', id: nextID++, method};
  if (params) msg.params = params;
  const res = await fetch(API, {method: 'POST', headers, body: JSON.stringify(msg)});
  const text = await res.text();
  return {status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null};
}
async function main() {
  try {
    let cursor;
    do {
      const r = await rpc('resources/list', cursor ? {cursor} : undefined);
      if (r.status !== 200 || r.json.error) throw new Error('resources/list: HTTP ' + r.status);
      out.pages++;
      for (const res of r.json.result.resources) out.listed.push({uri: res.uri, name: res.name});
      cursor = r.json.result.nextCursor;
    } while (cursor && out.pages < 100);
    const doc = out.listed.find((x) => x.uri.startsWith('docs://documents/'));
    const rr = await rpc('resources/read', {uri: doc.uri});
    out.read = {uri: doc.uri, text: rr.json.result.contents[0].text};
    const mr = await rpc('resources/read', {uri: doc.uri, _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}}},
      {'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'resources/read', 'Mcp-Name': doc.uri});
    out.modernRead = {status: mr.status, text: mr.json?.result?.contents?.[0]?.text ?? ''};
    const ir = await rpc('initialize', {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'browser', version: '1'}});
    out.sessionIdVisible = Boolean(ir.headers.get('Mcp-Session-Id'));
    const ar = await rpc('resources/list', undefined, {}, '');
    out.anonymous = {status: ar.status, wwwAuthenticate: ar.headers.get('WWW-Authenticate') ?? ''};
  } catch (err) {
    out.error = String(err);
  }
  try {
    const res = await fetch(API, {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'},
      body: JSON.stringify({jsonrpc: '2.0', id: 99, method: 'resources/read', params: {uri: 'docs://about'}})});
    out.noCors = {type: res.type};
  } catch (err) {
    out.noCors = {error: String(err)};
  }
  document.getElementById('result').textContent = JSON.stringify(out);
  document.body.dataset.done = 'yes';
  await fetch('/result', {method: 'POST', body: JSON.stringify(out)});
}
main();
`

// pageServer serves the page on its own loopback origin and receives its
// result.
type pageServer struct {
	origin  string
	results chan pageResult

	mu   sync.Mutex
	page string // set by setTarget
}

// startPage listens on a free port of 127.0.0.1 (its origin is known from
// then on) and serves /page.html once setTarget said what it calls.
func startPage(t *testing.T) *pageServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &pageServer{origin: "http://" + ln.Addr().String(), results: make(chan pageResult, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /page.html", func(w http.ResponseWriter, _ *http.Request) {
		p.mu.Lock()
		page := p.page
		p.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = io.WriteString(w, page)
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("POST /result", func(w http.ResponseWriter, r *http.Request) {
		var res pageResult
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&res); err != nil {
			http.Error(w, "bad result", http.StatusBadRequest)
			return
		}
		select {
		case p.results <- res:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

// setTarget makes the page's script call the MCP endpoint api with token.
func (p *pageServer) setTarget(t *testing.T, api, token string) {
	t.Helper()
	consts, err := json.Marshal(map[string]string{"API": api, "TOKEN": token}) // escapes <, > and &
	require.NoError(t, err)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.page = `<!doctype html><html><head><meta charset="utf-8"><title>mcpkit browser client</title></head>
<body><pre id="result">pending</pre><script>
const {API, TOKEN} = ` + string(consts) + `;
` + pageScript + `</script></body></html>`
}

// resultElement is the <pre> the page writes its result into.
var resultElement = regexp.MustCompile(`(?s)<pre id="result">(.*?)</pre>`)

// browse loads the page in headless Chromium (a fresh profile, no network
// services of its own) and returns its result as the DOM shows it, after
// checking it equals what the page posted.
func browse(t *testing.T, browser string, p *pageServer) pageResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard, not a timing assertion
	defer cancel()
	cmd := exec.CommandContext(ctx, browser,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(),
		"--virtual-time-budget=60000", "--dump-dom", p.origin+"/page.html")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, err, "chromium failed:\n%s", stderr.String())
	var posted pageResult
	select {
	case posted = <-p.results:
	default:
		t.Fatalf("the page posted no result; DOM:\n%s\nchromium's stderr:\n%s", stdout.String(), stderr.String())
	}
	m := resultElement.FindStringSubmatch(stdout.String())
	require.Len(t, m, 2, "no result element in the DOM:\n%s", stdout.String())
	require.Contains(t, stdout.String(), `data-done="yes"`, "the script finished")
	var shown pageResult
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(m[1])), &shown), "DOM result: %s", m[1])
	assert.Equal(t, posted, shown, "the DOM shows what the page posted")
	return shown
}

// A real browser (headless Chromium) and CORS: the documents server allows
// one page origin (http://127.0.0.1:P1); its API is on another origin
// (http://localhost:P2). A page from the allowed origin lists every page
// of alice's resources with her bearer token, reads a document in both
// protocol eras, and can read the exposed Mcp-Session-Id and
// WWW-Authenticate headers; a page from another origin (127.0.0.1, another
// port) gets nothing: its preflight is refused, fetch fails, and its
// simple no-cors POST is refused by the server (403) as well.
func TestBrowserCORS(t *testing.T) {
	browser := chromium(t)
	allowed, other := startPage(t), startPage(t)
	logs := &syncBuffer{}
	d := startDocumentsWith(t, func(c *app.Config) {
		c.Addr = "localhost:0" // another origin than the pages' 127.0.0.1
		c.AllowedOrigins = []string{allowed.origin}
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	require.True(t, strings.HasPrefix(d.mcpURL, "http://localhost:"), d.mcpURL)
	goList, _ := walk(t, d.connect(t, d.alice, "2025-11-25"))
	bobs := d.bobsDocuments(t)

	t.Run("allowed origin", func(t *testing.T) {
		allowed.setTarget(t, d.mcpURL, d.alice)
		r := browse(t, browser, allowed)
		t.Logf("page %s: %d resources in %d pages; read %s (%d bytes); error %q", r.Origin, len(r.Listed), r.Pages, r.Read.URI, len(r.Read.Text), r.Error)
		require.Empty(t, r.Error)
		assert.Equal(t, allowed.origin, r.Origin)
		var uris []string
		for _, l := range r.Listed {
			uris = append(uris, l.URI)
		}
		assert.Equal(t, goList, uris, "the browser lists what the go-sdk client lists")
		assert.Greater(t, r.Pages, 1, "nextCursor followed")
		for _, u := range bobs {
			assert.NotContains(t, uris, u)
		}
		assert.True(t, strings.HasPrefix(r.Read.URI, documentPrefix))
		assert.NotEmpty(t, r.Read.Text)
		assert.Equal(t, http.StatusOK, r.ModernRead.Status, "2026-07-28: Mcp-Method and Mcp-Name pass the preflight")
		assert.Equal(t, r.Read.Text, r.ModernRead.Text)
		assert.True(t, r.SessionIDVisible, "Mcp-Session-Id is exposed")
		assert.Equal(t, http.StatusUnauthorized, r.Anonymous.Status)
		assert.Contains(t, r.Anonymous.WWWAuthenticate, "resource_metadata=", "WWW-Authenticate is exposed")
		assert.Equal(t, "opaque", r.NoCORS.Type, "no-cors requests get opaque responses, even from an allowed origin")
	})

	t.Run("other origin", func(t *testing.T) {
		before := strings.Count(logs.String(), "status=403")
		other.setTarget(t, d.mcpURL, d.alice)
		r := browse(t, browser, other)
		t.Logf("page %s: error %q, no-cors %+v", r.Origin, r.Error, r.NoCORS)
		assert.Equal(t, other.origin, r.Origin)
		assert.Contains(t, r.Error, "TypeError", "fetch fails: the preflight is refused")
		assert.Empty(t, r.Listed, "no data")
		assert.Zero(t, r.Pages)
		assert.Empty(t, r.Read.Text)
		assert.Equal(t, "opaque", r.NoCORS.Type)
		// The server refused both: the preflight and the simple POST.
		assert.GreaterOrEqual(t, strings.Count(logs.String(), "status=403")-before, 2, "preflight and no-cors POST refused:\n%s", logs.String())
	})
}
