package jsonrpc_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// decodeWith runs one request through a Decoder and returns the response
// and what the next handler saw (nil when it was not called).
func decodeWith(t *testing.T, l jsonrpc.Limits, r *http.Request) (*httptest.ResponseRecorder, *seen) {
	t.Helper()
	var got *seen
	h := jsonrpc.Decoder(l)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := jsonrpc.FromContext(r.Context())
		raw, _ := io.ReadAll(r.Body)
		got = &seen{ok: ok, body: string(raw)}
		if ok {
			got.batch, got.raw = b.Batch, string(b.Raw)
			got.method, got.id, got.items = b.Message.Method, b.Message.ID.Raw(), len(b.Items)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w, got
}

type seen struct {
	ok                    bool
	batch                 bool
	raw, body, method, id string
	items                 int
}

func post(body, contentType string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

func TestDecoderHandsOnOneDecode(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":7,"method":"resources/list"}`
	w, got := decodeWith(t, jsonrpc.Limits{}, post(body, "application/json"))
	require.NotNil(t, got)
	assert.Equal(t, http.StatusNoContent, w.Code)
	assert.True(t, got.ok)
	assert.Equal(t, "resources/list", got.method)
	assert.Equal(t, "7", got.id)
	assert.Equal(t, body, got.raw, "the original bytes, for forwarding")
	assert.Equal(t, body, got.body, "r.Body can be read again")

	w, got = decodeWith(t, jsonrpc.Limits{}, post(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x","method":"y"}]`, "application/json"))
	require.NotNil(t, got, "a batch with a bad element is next's to answer")
	assert.True(t, got.batch)
	assert.Equal(t, 2, got.items)
	assert.Equal(t, http.StatusNoContent, w.Code)
}

func TestDecoderLetsOtherMethodsThrough(t *testing.T) {
	for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodOptions} {
		r := httptest.NewRequest(m, "/mcp", strings.NewReader("not json"))
		_, got := decodeWith(t, jsonrpc.Limits{}, r)
		require.NotNil(t, got, m)
		assert.False(t, got.ok, m)
		assert.Equal(t, "not json", got.body, m)
	}
}

// Malformed input is answered by the Decoder and never reaches next.
func TestDecoderAnswersMalformedInput(t *testing.T) {
	cases := []struct {
		name, body, contentType string
		status                  int
		code                    int64
		id                      string
	}{
		{"not JSON", `{"jsonrpc":`, "application/json", 400, jsonrpc.CodeParseError, "null"},
		{"not an object", `42`, "application/json", 400, jsonrpc.CodeInvalidRequest, "null"},
		{"no method", `{"jsonrpc":"2.0","id":3}`, "application/json", 400, jsonrpc.CodeInvalidRequest, "3"},
		// Attack rows: bodies other JSON-RPC decoders read differently.
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"resources/read"}`, "application/json", 400, jsonrpc.CodeInvalidRequest, "1"},
		{"case-variant method", `{"jsonrpc":"2.0","id":1,"method":"ping","Method":"resources/read"}`, "application/json", 400, jsonrpc.CodeInvalidRequest, "1"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}", "application/json", 400, jsonrpc.CodeParseError, "null"},
		{"empty batch", `[]`, "application/json", 400, jsonrpc.CodeInvalidRequest, "null"},
		{"text/plain", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "text/plain", 415, jsonrpc.CodeInvalidRequest, "null"},
		{"no content type", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "", 415, jsonrpc.CodeInvalidRequest, "null"},
		{"json-seq", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "application/json-seq", 415, jsonrpc.CodeInvalidRequest, "null"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, got := decodeWith(t, jsonrpc.Limits{}, post(tc.body, tc.contentType))
			assert.Nil(t, got, "next must not run")
			assert.Equal(t, tc.status, w.Code)
			assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
			assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
			var resp struct {
				ID    json.RawMessage      `json:"id"`
				Error struct{ Code int64 } `json:"error"`
			}
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &resp), w.Body.String())
			assert.Equal(t, tc.code, resp.Error.Code)
			assert.Equal(t, tc.id, string(resp.ID))
		})
	}
}

func TestDecoderContentTypes(t *testing.T) {
	for ct, ok := range map[string]bool{
		"application/json": true, "application/json; charset=utf-8": true, "Application/JSON": true,
		" application/json ": true, "application/jsonx": false, "application/json-seq": false,
		"text/plain": false, "": false,
	} {
		w, got := decodeWith(t, jsonrpc.Limits{}, post(`{"jsonrpc":"2.0","method":"x"}`, ct))
		assert.Equal(t, ok, got != nil, "%q", ct)
		if !ok {
			assert.Equal(t, http.StatusUnsupportedMediaType, w.Code, "%q", ct)
		}
	}
}

func TestDecoderBodyLimit(t *testing.T) {
	msg := func(n int) string { return `{"jsonrpc":"2.0","method":"` + strings.Repeat("x", n) + `"}` }
	base := len(msg(0))
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{msg(10), true},
		{msg(1), true},
		{msg(11), false},
		{msg(9000), false},
	} {
		for _, known := range []bool{true, false} {
			r := post(tc.body, "application/json")
			if !known {
				r.ContentLength = -1
			}
			w, got := decodeWith(t, jsonrpc.Limits{MaxBytes: int64(base + 10)}, r)
			assert.Equal(t, tc.ok, got != nil, "%d bytes, length known %v", len(tc.body), known)
			if !tc.ok {
				assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
			}
		}
	}
}

// A Decoder after another Decoder (or a handler that decodes itself after
// one) does not read the body twice.
func TestDecoderDecodesOnce(t *testing.T) {
	method := ""
	h := jsonrpc.Decoder(jsonrpc.Limits{})(jsonrpc.Decoder(jsonrpc.Limits{MaxBytes: 1})(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		if b, ok := jsonrpc.FromContext(r.Context()); ok {
			method = b.Message.Method
		}
	})))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, post(`{"jsonrpc":"2.0","id":"a","method":"ping"}`, "application/json"))
	assert.Equal(t, "ping", method, "the outer decode is used; the inner limit does not apply again")
}

func TestBodyRelease(t *testing.T) {
	w := httptest.NewRecorder()
	b, ok := jsonrpc.Limits{}.ReadBody(w, post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "application/json"))
	require.True(t, ok)
	assert.Equal(t, "ping", b.Message.Method)
	b.Release()
	assert.Nil(t, b.Raw)
	b.Release() // harmless
	var nilBody *jsonrpc.Body
	nilBody.Release()
}

// slowBody is a request body whose bytes arrive when the test sends them.
type slowBody struct{ ch chan []byte }

func (s *slowBody) Read(p []byte) (int, error) {
	b, ok := <-s.ch
	if !ok {
		return 0, io.EOF
	}
	return copy(p, b), nil
}

// Storage follows the bytes received, never the Content-Length declared:
// a client declaring the maximum and sending 70 bytes holds 4 KiB of the
// budget, not 4 MiB (issue 19).
func TestReadBodyMemoryFollowsBytesReceived(t *testing.T) {
	budget := jsonrpc.NewBodyBudget(1<<30, jsonrpc.BudgetOptions{})
	body := &slowBody{ch: make(chan []byte)}
	r := signedIn(t, httptest.NewRequest(http.MethodPost, "/mcp", body), "alice")
	r.Header.Set("Content-Type", "application/json")
	r.ContentLength = jsonrpc.DefaultMaxBytes
	done := make(chan *httptest.ResponseRecorder)
	go func() {
		w := httptest.NewRecorder()
		if b, ok := (jsonrpc.Limits{Budget: budget}).ReadBody(w, r); ok {
			b.Release()
		}
		done <- w
	}()
	body.ch <- []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`)
	body.ch <- []byte(strings.Repeat("y", 14))
	assert.Equal(t, int64(4<<10), budget.InUse(), "got %d bytes charged, want the initial 4 KiB", budget.InUse())
	// Growing with the bytes: 64 KiB received take at most twice that.
	for range 16 {
		body.ch <- []byte(strings.Repeat("y", 4<<10))
	}
	assert.LessOrEqual(t, budget.InUse(), int64(2*(64<<10+100)))
	body.ch <- []byte(`"}}`)
	close(body.ch)
	w := <-done
	assert.Equal(t, http.StatusOK, w.Code, "the whole message arrived: got %d", w.Code)
	assert.Zero(t, budget.InUse(), "released")
}

// A body of any size is read whole, whatever its declared length (none,
// the right one), across the growth steps; the budget is returned.
func TestReadBodyGrows(t *testing.T) {
	budget := jsonrpc.NewBodyBudget(0, jsonrpc.BudgetOptions{})
	for _, n := range []int{0, 1, 4000, 4096, 4097, 8191, 8192, 100_000, 1 << 20} {
		msg := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("y", n) + `"}}`
		for _, known := range []bool{true, false} {
			r := signedIn(t, post(msg, "application/json"), "alice")
			if !known {
				r.ContentLength = -1
			}
			w := httptest.NewRecorder()
			b, ok := (jsonrpc.Limits{Budget: budget}).ReadBody(w, r)
			require.True(t, ok, "%d bytes, length known %v: %d %s", len(msg), known, w.Code, w.Body)
			assert.Equal(t, msg, string(b.Raw))
			assert.Positive(t, budget.InUse())
			b.Release()
			assert.Zero(t, budget.InUse(), "%d bytes: budget returned", len(msg))
		}
	}
}

// A body longer than it declared (a reader that is not net/http's) is
// still bounded by the byte limit.
func TestReadBodyLongerThanDeclared(t *testing.T) {
	r := post(`{"jsonrpc":"2.0","id":1,"method":"`+strings.Repeat("p", 10_000)+`"}`, "application/json")
	r.ContentLength = 10
	w := httptest.NewRecorder()
	_, ok := (jsonrpc.Limits{MaxBytes: 5000}).ReadBody(w, signedIn(t, r, "alice"))
	assert.False(t, ok)
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
}

// With the budget taken, a new request gets 503 and Retry-After instead
// of memory; once bodies are released, requests are served again.
func TestReadBodyBudgetExhausted(t *testing.T) {
	// 16 KiB for alice: a reserve of 2 KiB, 14 KiB shared, 12 KiB her ceiling.
	budget := jsonrpc.NewBodyBudget(20<<10, jsonrpc.BudgetOptions{Anonymous: 4 << 10, PerPrincipal: 12 << 10})
	post := func(body, ct string) *http.Request { return signedIn(t, post(body, ct), "alice") }
	var held []*jsonrpc.Body
	for range 3 {
		w := httptest.NewRecorder()
		b, ok := (jsonrpc.Limits{Budget: budget}).ReadBody(w, post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "application/json"))
		require.True(t, ok)
		held = append(held, b)
	}
	w := httptest.NewRecorder()
	_, ok := (jsonrpc.Limits{Budget: budget}).ReadBody(w, post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "application/json"))
	require.False(t, ok)
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	assert.Contains(t, w.Body.String(), `"code":-32603`)

	// A body that outgrows the room left is refused the same way.
	held[2].Release()
	held[1].Release()
	w = httptest.NewRecorder()
	_, ok = (jsonrpc.Limits{Budget: budget}).ReadBody(w, post(`{"jsonrpc":"2.0","id":1,"method":"`+strings.Repeat("p", 20<<10)+`"}`, "application/json"))
	require.False(t, ok)
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Equal(t, int64(4<<10), budget.InUse(), "only the body still held is charged")
	held[0].Release()
	assert.Zero(t, budget.InUse())
}

// A body that trickles in is cut off at the read timeout, over a real
// connection, and the server goes on serving others.
func TestReadBodyTimeout(t *testing.T) {
	srv := httptest.NewServer(jsonrpc.Decoder(jsonrpc.Limits{ReadTimeout: 300 * time.Millisecond})(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second))) // bounds the test, not the server
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the server answers the trickling body instead of waiting for it")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	ok, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, ok.StatusCode)
	ok.Body.Close()
}
