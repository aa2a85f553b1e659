package mcphttp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// FuzzEndpoint sends arbitrary bodies and header values to the endpoint: it
// must never panic and never answer 5xx (503 aside, which only a verifier
// that cannot check tokens produces).
func FuzzEndpoint(f *testing.F) {
	fx := mcptest.New(f, mcptest.Options{PageSize: 3})
	alice := fx.Token(f, "alice")
	modernList, _ := mcptest.Modern(1, "resources/list", nil)
	modernRead, _ := mcptest.Modern(2, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"})
	seeds := []string{
		mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}),
		mcptest.Legacy(1, "resources/list", nil),
		mcptest.Legacy(1, "resources/read", map[string]any{"uri": "test://template/1/data"}),
		mcptest.Legacy(1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"}, "argument": map[string]any{"name": "id", "value": "1"}}),
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, modernList, modernRead, `{"jsonrpc":"2.0","method":"x"}`, `{`, `[]`, `"`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), "application/json", "2025-11-25", "resources/list", "docs://documents/alice-0001", true)
		f.Add([]byte(s), "application/json", "2026-07-28", "resources/read", "=?base64?ZG9jczovL2RvY3VtZW50cy9hbGljZS0wMDAx?=", false)
	}
	f.Fuzz(func(t *testing.T, body []byte, contentType, version, method, name string, withToken bool) {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(string(body)))
		r.Header.Set("Content-Type", contentType)
		for k, v := range map[string]string{"MCP-Protocol-Version": version, "Mcp-Method": method, "Mcp-Name": name} {
			if v != "" && validFieldValue(v) {
				r.Header.Set(k, v)
			}
		}
		if withToken {
			r.Header.Set("Authorization", "Bearer "+alice)
		}
		w := httptest.NewRecorder()
		fx.EP.ServeHTTP(w, r)
		if w.Code >= 500 && w.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body.String())
		}
	})
}

// validFieldValue reports whether net/http would send v as a header value.
func validFieldValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
