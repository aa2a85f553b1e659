package jsonrpc_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
