package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
)

// syncBuffer is a bytes.Buffer safe for concurrent writers (loggers).
type syncBuffer struct{ logbuf.Buffer }

// waitFor polls until the buffer contains s (or fails t after 10 s).
func (b *syncBuffer) waitFor(t *testing.T, s string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("output never contained %q", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return b.String()
}

// testServer is an App running in-process on 127.0.0.1:0.
type testServer struct {
	app          *App
	cfg          Config // as given to New
	logs, stdout *syncBuffer
	cancel       context.CancelFunc
	done         chan error
}

// start runs an App in development mode (unless mutate configures an
// issuer) with a temporary data directory, logging at debug level into
// s.logs, and stops it at the end of the test.
func start(t *testing.T, mutate func(*Config)) *testServer {
	t.Helper()
	s := &testServer{logs: &syncBuffer{}, stdout: &syncBuffer{}, done: make(chan error, 1)}
	s.cfg = Config{
		Addr: "127.0.0.1:0", DataDir: t.TempDir(), Stdout: s.stdout,
		Logger: slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if mutate != nil {
		mutate(&s.cfg)
	}
	a, err := New(context.Background(), s.cfg)
	require.NoError(t, err)
	s.app = a
	var ctx context.Context
	ctx, s.cancel = context.WithCancel(context.Background())
	go func() { s.done <- a.Run(ctx) }()
	t.Cleanup(func() {
		s.cancel()
		<-s.done
		a.Close()
	})
	return s
}

// smallPages sets 5 resources a page, so that the seeded users' listings
// (alice: 13 resources) span several pages.
func smallPages(c *Config) { c.PageSize = 5 }

// token mints a development token the way "documents token USER" does.
func (s *testServer) token(t *testing.T, subject string) string {
	t.Helper()
	tok, err := DevToken(Config{Addr: s.app.Addr(), DataDir: s.cfg.DataDir, Resource: s.cfg.Resource}, subject, time.Hour)
	require.NoError(t, err)
	return tok
}

func (s *testServer) mcpURL() string { return s.app.URL() + "/mcp" }

type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

type rpcResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

type listResult struct {
	Resources []struct {
		URI      string `json:"uri"`
		Name     string `json:"name"`
		MIMEType string `json:"mimeType"`
	} `json:"resources"`
	NextCursor string `json:"nextCursor"`
}

// uris returns the URIs of a page.
func (lr listResult) uris() []string {
	var out []string
	for _, r := range lr.Resources {
		out = append(out, r.URI)
	}
	return out
}

type readResult struct {
	Contents []struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
		Text     string `json:"text"`
	} `json:"contents"`
}

// post sends a JSON-RPC request over real HTTP and returns the HTTP
// response (body read) and the decoded JSON-RPC response, if any.
func (s *testServer) post(t *testing.T, token, method string, params any) (*http.Response, rpcResponse) {
	t.Helper()
	return postRPC(t, http.DefaultClient, s.mcpURL(), token, method, params, nil)
}

// postRPC sends a JSON-RPC request with client to url (with token as a
// bearer token unless it is empty, and the headers of header) and returns
// the HTTP response (body read) and, for a 200, the decoded JSON-RPC
// response.
func postRPC(t *testing.T, client *http.Client, url, token, method string, params any, header map[string]string) (*http.Response, rpcResponse) {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method}
	if params != nil {
		msg["params"] = params
	}
	body, err := json.Marshal(msg)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var out rpcResponse
	if res.StatusCode == http.StatusOK {
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	}
	return res, out
}

// list fetches one resources/list page and requires success.
func (s *testServer) list(t *testing.T, token, cursor string) listResult {
	t.Helper()
	var lr listResult
	s.page(t, token, "resources/list", cursor, &lr)
	return lr
}

// page fetches one page of a list method (resources/list, skills/list)
// from cursor ("": the first), requires success and decodes the result
// into result.
func (s *testServer) page(t *testing.T, token, method, cursor string, result any) {
	t.Helper()
	var params any
	if cursor != "" {
		params = map[string]any{"cursor": cursor}
	}
	res, out := s.post(t, token, method, params)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Nil(t, out.Error)
	require.NoError(t, json.Unmarshal(out.Result, result))
}

// walk follows nextCursor to the end and returns every URI and the number
// of pages.
func (s *testServer) walk(t *testing.T, token string) (uris []string, pages int) {
	t.Helper()
	cursor := ""
	for {
		lr := s.list(t, token, cursor)
		pages++
		for _, r := range lr.Resources {
			uris = append(uris, r.URI)
		}
		if lr.NextCursor == "" {
			return uris, pages
		}
		require.Less(t, pages, 1000, "the walk must end")
		cursor = lr.NextCursor
	}
}

// read returns the JSON-RPC response of resources/read for uri.
func (s *testServer) read(t *testing.T, token, uri string) rpcResponse {
	t.Helper()
	res, out := s.post(t, token, "resources/read", map[string]any{"uri": uri})
	require.Equal(t, http.StatusOK, res.StatusCode)
	return out
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(b)
}

// tamper changes one character in the middle of a cursor.
func tamper(c string) string {
	b := []byte(c)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func documentsOnly(uris []string) []string {
	var out []string
	for _, u := range uris {
		if strings.HasPrefix(u, documentPrefix) {
			out = append(out, u)
		}
	}
	return out
}
