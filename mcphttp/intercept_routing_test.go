package mcphttp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
)

// permissiveLegacy stands for a legacy MCP handler whose decoder reads a
// body the lenient way (encoding/json: last duplicate key wins, member
// names match case-insensitively). It records every method it was asked
// to serve, and answers each with an empty result.
type permissiveLegacy struct {
	mu      sync.Mutex
	methods []string
	bodies  []string
}

func (l *permissiveLegacy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	var ms []msg
	if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
		_ = json.Unmarshal(raw, &ms)
	} else {
		var m msg
		_ = json.Unmarshal(raw, &m)
		ms = append(ms, m)
	}
	l.mu.Lock()
	for _, m := range ms {
		l.methods = append(l.methods, m.Method)
	}
	l.bodies = append(l.bodies, string(raw))
	l.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
}

func (l *permissiveLegacy) seen() ([]string, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.methods...), append([]string(nil), l.bodies...)
}

// No body that the strict decode reads as something else, or cannot read,
// reaches the legacy handler: duplicate and case-variant member names,
// batches mixing owned and forwarded methods, invalid elements.
func TestInterceptRoutesOnTheStrictDecode(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	bob := "Bearer " + f.token(t, "bob")
	const aliceDoc = `{"uri":"docs://documents/alice-0001"}`
	cases := []struct {
		name    string
		body    string
		forward bool // reaches the legacy handler
		status  int
	}{
		{"a tool call is forwarded", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, true, 200},
		{"a notification is forwarded", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, true, 200},
		{"a client response is forwarded", `{"jsonrpc":"2.0","id":9,"result":{}}`, true, 200},
		{"resources/read is ours", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":` + aliceDoc + `}`, false, 200},
		{"resources/subscribe is ours", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":` + aliceDoc + `}`, false, 200},
		{"an unknown resources/ method is ours", `{"jsonrpc":"2.0","id":1,"method":"resources/export"}`, false, 200},
		{"a resource completion is ours", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"test://template/{id}/data"},"argument":{"name":"id","value":"1"}}}`, false, 200},
		{"a prompt completion is forwarded", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}}`, true, 200},
		// Attack rows: each body is read as a resource method by a lenient
		// decoder, or cannot be read unambiguously.
		{"duplicate method, the last one a resource method", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"resources/read","params":` + aliceDoc + `}`, false, 400},
		{"case-variant method", `{"jsonrpc":"2.0","id":1,"method":"ping","Method":"resources/read","params":` + aliceDoc + `}`, false, 400},
		{"a lone Method", `{"jsonrpc":"2.0","id":1,"Method":"resources/read","params":` + aliceDoc + `}`, false, 400},
		{"duplicate params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},"params":{"name":"x"}}`, false, 400},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call"}`, false, 400},
		{"escaped duplicate method", `{"jsonrpc":"2.0","id":1,"method":"ping","\u006dethod":"resources/read"}`, false, 400},
		{"a prompt completion with a case-variant ref", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"Ref":{"type":"ref/resource","uri":"test://template/{id}/data"},"argument":{"name":"id","value":"1"}}}`, false, 200},
		{"a completion whose ref type is a resource in another case", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"Type":"ref/prompt","type":"ref/resource"}}}`, false, 400},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\xff\"}", false, 400},
		{"not JSON", `{"jsonrpc":"2.0","id":1,"method":"resources/read"`, false, 400},
		// Batches (2025-03-26).
		{"a batch of forwarded methods is forwarded whole", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, true, 200},
		{"a batch of owned methods is ours", `[{"jsonrpc":"2.0","id":1,"method":"resources/read","params":` + aliceDoc + `},{"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}]`, false, 200},
		{"a batch mixing owned and forwarded methods reaches nobody", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"resources/read","params":` + aliceDoc + `}]`, false, 400},
		{"a batch with an ambiguous element beside a forwarded one", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping","method":"resources/read","params":` + aliceDoc + `}]`, false, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			legacy := &permissiveLegacy{}
			h, err := mcphttp.Intercept(f.inv, legacy, mcphttp.Options{Authenticator: f.auth})
			require.NoError(t, err)
			w := post(t, h, tc.body, bob, nil)
			methods, bodies := legacy.seen()
			if tc.forward {
				require.Len(t, bodies, 1)
				assert.Equal(t, tc.body, bodies[0], "forwarded byte for byte")
			} else {
				assert.Empty(t, bodies, "must not reach the legacy handler (it read %v)", methods)
			}
			for _, m := range methods {
				assert.False(t, strings.HasPrefix(m, "resources/"), "the legacy handler was asked for %s", m)
			}
			assert.Equal(t, tc.status, w.Code, w.Body.String())
			assert.NotContains(t, w.Body.String(), "Contents of Document alice", "bob never reads alice's document")
		})
	}
}
