package mcphttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// FuzzObserver sends arbitrary bodies to two endpoints over one
// inventory, one observed and one not: observing never changes the
// answer's status or JSON-RPC error code, every Start has its End, and
// what the Observer saw matches what the client got (Meta is read on
// every call and must never panic).
func FuzzObserver(f *testing.F) {
	obs := &recorder{mark: "fuzz"}
	plain := mcptest.New(f, mcptest.Options{PageSize: 3})
	ep, err := mcphttp.New(plain.Inv, mcphttp.Options{Authenticator: plain.Auth}, mcphttp.Observe(obs))
	if err != nil {
		f.Fatal(err)
	}
	alice := plain.Token(f, "alice")
	for _, s := range []string{
		mcptest.Legacy(1, "resources/list", nil),
		mcptest.Legacy(2, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"}),
		mcptest.Legacy(3, "resources/list", map[string]any{"cursor": "AAAA"}),
		`{"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"traceparent":{"a":1},"x":[1,2]}}}`,
		`[` + mcptest.Legacy(6, "resources/list", nil) + `,{"jsonrpc":"2.0","method":"n"}]`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{`, `[]`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	serve := func(h http.Handler, body []byte, token bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(string(body)))
		r.Header.Set("Content-Type", "application/json")
		if token {
			r.Header.Set("Authorization", "Bearer "+alice)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	errCode := func(b []byte) (int64, bool) {
		var m struct {
			Error *struct {
				Code int64 `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &m) != nil || m.Error == nil {
			return 0, false
		}
		return m.Error.Code, true
	}
	f.Fuzz(func(t *testing.T, body []byte, token bool) {
		want := serve(plain.EP, body, token)
		got := serve(ep, body, token)
		if got.Code != want.Code {
			t.Fatalf("observed status %d, unobserved %d for %q", got.Code, want.Code, body)
		}
		wc, wok := errCode(want.Body.Bytes())
		gc, gok := errCode(got.Body.Bytes())
		if wc != gc || wok != gok {
			t.Fatalf("observed error %d, unobserved %d for %q", gc, wc, body)
		}
		calls := obs.take(t)
		if len(calls) == 1 && calls[0].Status != got.Code {
			t.Fatalf("observed status %d, response %d for %q", calls[0].Status, got.Code, body)
		}
	})
}
