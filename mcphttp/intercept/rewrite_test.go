package intercept_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
)

// fixedLegacy answers every POST with the same status, content type and
// body, and a Content-Length when length is set.
func fixedLegacy(status int, ct, body string, length bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Mcp-Session-Id", "legacy-session")
		if length {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	})
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// capsOf returns the capabilities of an initialize or server/discover
// answer (JSON or SSE).
func capsOf(t *testing.T, w interface{ Header() http.Header }, body []byte) map[string]json.RawMessage {
	t.Helper()
	var resp struct {
		Result struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
			ServerInfo   struct{ Name string }      `json:"serverInfo"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &resp), string(body))
	assert.Equal(t, "legacy", resp.Result.ServerInfo.Name, "the rest of legacy's result stays")
	return resp.Result.Capabilities
}

func TestInitializeGetsTheEndpointsCapabilities(t *testing.T) {
	result := `{"protocolVersion":"2025-11-25","capabilities":{"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true},"prompts":{}},"serverInfo":{"name":"legacy","version":"1"}}`
	msg := `{"jsonrpc":"2.0","id":1,"result":` + result + `}`
	withTools := mcptest.New(t, mcptest.Options{}, bridge{})
	plain := mcptest.New(t, mcptest.Options{})
	cases := []struct {
		name   string
		ep     *mcphttp.Endpoint
		legacy http.Handler
		tools  string // the tools capability announced
	}{
		{"JSON", plain.EP, fixedLegacy(200, "application/json", msg, true), `{"listChanged":true}`},
		{"SSE", plain.EP, fixedLegacy(200, "text/event-stream", "event: message\nid: 7\ndata: "+msg+"\n\n", false), `{"listChanged":true}`},
		{"SSE with CRLF and a notification first", plain.EP, fixedLegacy(200, "text/event-stream",
			"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\r\n\r\nevent: message\r\nid: 7\r\ndata: "+msg+"\r\n\r\n", false), `{"listChanged":true}`},
		{"legacy's tools capability stays", withTools.EP, fixedLegacy(200, "application/json", msg, true), `{"listChanged":true}`},
		{"the endpoint's tools where legacy has none", withTools.EP, fixedLegacy(200, "application/json",
			`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"legacy","version":"1"}}}`, true), `{"listChanged":false}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := intercept.New(tc.ep, tc.legacy, intercept.Options{Logger: quiet, ForwardAnonymous: true})
			require.NoError(t, err)
			w := serve(h, request(initBody, nil))
			require.Equal(t, http.StatusOK, w.Code)
			assert.Equal(t, "legacy-session", w.Header().Get("Mcp-Session-Id"), "legacy's headers pass")
			if cl := w.Header().Get("Content-Length"); cl != "" {
				assert.Equal(t, strconv.Itoa(w.Body.Len()), cl, "Content-Length follows the rewritten body")
			}
			caps := capsOf(t, w, jsonOf(t, w))
			assert.JSONEq(t, `{"subscribe":false,"listChanged":false}`, string(caps["resources"]), "the endpoint's resources replace legacy's")
			assert.JSONEq(t, `{}`, string(caps["completions"]), "the fixture's template completes")
			assert.JSONEq(t, tc.tools, string(caps["tools"]))
			if tc.tools == `{"listChanged":true}` { // legacy's full result
				assert.JSONEq(t, `{}`, string(caps["prompts"]), "legacy's other capabilities stay")
			} else {
				assert.NotContains(t, caps, "prompts")
			}
			if strings.Contains(tc.name, "SSE") {
				assert.Contains(t, w.Body.String(), "id: 7\n", "the event's other fields stay")
				assert.Equal(t, 1, strings.Count(w.Body.String(), `"capabilities"`))
			}
			if strings.Contains(tc.name, "notification first") {
				assert.Contains(t, w.Body.String(), `"method":"notifications/message"`, "other events pass")
			}
		})
	}
}

// Legacy answers that are not a result for the request pass unchanged.
func TestInitializeRewriteLeavesOtherAnswers(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	cases := []struct {
		name   string
		status int
		ct     string
		body   string
	}{
		{"an error", 200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`},
		{"another id", 200, "application/json", `{"jsonrpc":"2.0","id":2,"result":{"capabilities":{}}}`},
		{"the id as a string", 200, "application/json", `{"jsonrpc":"2.0","id":"1","result":{"capabilities":{}}}`},
		{"capabilities that are not an object", 200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"capabilities":[]}}`},
		{"a refusal", 400, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{}}}`},
		{"not JSON", 200, "text/plain", `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{}}}`},
		{"broken JSON", 200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := intercept.New(f.EP, fixedLegacy(tc.status, tc.ct, tc.body, false), intercept.Options{Logger: quiet, ForwardAnonymous: true})
			require.NoError(t, err)
			w := serve(h, request(initBody, nil))
			assert.Equal(t, tc.status, w.Code)
			assert.Equal(t, tc.body, w.Body.String())
		})
	}
}

// server/discover is rewritten too, with the capabilities of an answer
// with event streams: in the modern protocol those are the endpoint's own
// method (subscriptions/listen).
func TestServerDiscoverGetsTheEndpointsCapabilities(t *testing.T) {
	streams := mcphttp.PartFunc(func(s *mcphttp.Setup) error { seam.Of(s).Notifying(); return nil })
	for _, tc := range []struct {
		name  string
		parts []mcphttp.Part
		flags string
	}{
		{"without event streams", nil, `{"subscribe":false,"listChanged":false}`},
		{"with a part that serves them", []mcphttp.Part{streams}, `{"subscribe":true,"listChanged":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := mcptest.New(t, mcptest.Options{}, tc.parts...)
			msg := `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"},"resultType":"complete"}}`
			h, err := intercept.New(f.EP, fixedLegacy(200, "application/json", msg, false), intercept.Options{Logger: quiet, ForwardAnonymous: true})
			require.NoError(t, err)
			body, headers := mcptest.Modern(1, "server/discover", nil)
			w := serve(h, request(body, headers))
			caps := capsOf(t, w, w.Body.Bytes())
			assert.JSONEq(t, tc.flags, string(caps["resources"]))
			// Legacy's initialize, without Options.Sessions, never announces them.
			init := serve(h, request(initBody, nil))
			assert.Equal(t, http.StatusOK, init.Code)
			caps = capsOf(t, init, init.Body.Bytes())
			assert.JSONEq(t, `{"subscribe":false,"listChanged":false}`, string(caps["resources"]))
		})
	}
}
