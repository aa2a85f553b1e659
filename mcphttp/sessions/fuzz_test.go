package sessions_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// FuzzSessionRequests sends arbitrary bodies, session ids and HTTP methods
// to an endpoint with the sessions part, as alice, anonymously, or as bob
// (whose session the seeds never name): it must never panic, never answer
// 5xx (503 aside: a full stream table), and never serve bob in alice's
// session.
func FuzzSessionRequests(f *testing.F) {
	fx := newFixture(f, fixtureOptions{})
	alice, bob := fx.Token(f, "alice"), fx.Token(f, "bob")
	_, session := fx.initializeOn(f, alice)
	listen, _ := listenBody(1)
	seeds := []string{
		mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}),
		mcptest.Legacy(1, "resources/subscribe", map[string]any{"uri": "docs://documents/alice-0001"}),
		mcptest.Legacy(1, "resources/unsubscribe", map[string]any{"uri": "docs://documents/alice-0001"}),
		mcptest.Legacy(1, "ping", nil), `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://static-text"}}]`,
		listen, `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":[1]}}}`, `{`,
	}
	for _, s := range seeds {
		for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			f.Add([]byte(s), m, session, uint8(0))
			f.Add([]byte(s), m, "no-such-session", uint8(1))
			f.Add([]byte(s), m, session, uint8(2))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, method, sessionID string, who uint8) {
		switch method {
		case http.MethodPost, http.MethodGet, http.MethodDelete:
		default:
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond) // ends any stream opened
		defer cancel()
		r := httptest.NewRequestWithContext(ctx, method, "http://127.0.0.1:8080/mcp", strings.NewReader(string(body)))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if validFieldValue(sessionID) {
			r.Header.Set("Mcp-Session-Id", sessionID)
		}
		switch who % 3 {
		case 0:
			r.Header.Set("Authorization", "Bearer "+alice)
		case 2:
			r.Header.Set("Authorization", "Bearer "+bob)
		}
		w := httptest.NewRecorder()
		fx.EP.ServeHTTP(w, r)
		if w.Code >= 500 && w.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d for %s %q: %s", w.Code, method, body, w.Body.String())
		}
		if who%3 == 2 && sessionID == session && method != http.MethodPost {
			if w.Code != http.StatusNotFound && w.Code != http.StatusNotAcceptable {
				t.Fatalf("bob got %d on %s in alice's session", w.Code, method)
			}
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
	return v != ""
}
