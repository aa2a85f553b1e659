package intercept_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// batchAnswer is a batch answer by id: JSON, or the SSE events' messages
// (each a message or an array), with the notifications apart.
func batchAnswer(t *testing.T, w *httptest.ResponseRecorder) (map[string]json.RawMessage, []string) {
	t.Helper()
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var chunks []string
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(w.Body.String(), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				chunks = append(chunks, d)
			}
		}
	} else {
		require.Equal(t, "application/json", w.Header().Get("Content-Type"))
		chunks = []string{w.Body.String()}
	}
	byID := map[string]json.RawMessage{}
	var notes []string
	for _, c := range chunks {
		var list []json.RawMessage
		if strings.HasPrefix(c, "[") {
			require.NoError(t, json.Unmarshal([]byte(c), &list))
		} else {
			list = []json.RawMessage{json.RawMessage(c)}
		}
		for _, m := range list {
			var probe struct {
				ID     json.RawMessage
				Method string
			}
			require.NoError(t, json.Unmarshal(m, &probe))
			if probe.Method != "" {
				notes = append(notes, probe.Method)
				continue
			}
			_, dup := byID[string(probe.ID)]
			require.False(t, dup, "one response per id: %s", m)
			byID[string(probe.ID)] = m
		}
	}
	return byID, notes
}

// A 2025-03-26 batch mixing the endpoint's methods and legacy's is split:
// each part answers its own elements, a first tools/list page is merged
// (legacy's tools, then the endpoint's), and the answer holds every
// response once — with legacy's JSON or SSE answer (its notifications
// kept, before the responses).
func TestBatchesAreSplitAndMerged(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			legacy := &toolServer{tools: []string{"echo"}, sse: sse}
			_, h, err := interceptTools(t, legacy, nil)
			require.NoError(t, err)
			post := func(body string) *httptest.ResponseRecorder {
				r := request(body, map[string]string{"MCP-Protocol-Version": "2025-03-26"})
				return serve(h, withPrincipal(t, r, alice))
			}
			names := func(msg json.RawMessage) []string {
				var resp struct {
					Result struct{ Tools []struct{ Name string } }
				}
				require.NoError(t, json.Unmarshal(msg, &resp))
				var out []string
				for _, tl := range resp.Result.Tools {
					out = append(out, tl.Name)
				}
				return out
			}

			// [tools/list, resources/read]: both tool lists, alice's document.
			byID, notes := batchAnswer(t, post(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},`+
				`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"docs://documents/alice-0001"}}]`))
			require.Len(t, byID, 2)
			assert.Equal(t, []string{"echo", "list_resources", "read_resource", "search", "fetch"}, names(byID["1"]))
			assert.Contains(t, string(byID["2"]), "Contents of Document alice-0001")
			if sse {
				assert.Equal(t, []string{"notifications/progress"}, notes, "legacy's notification is kept")
			}

			// [tools/list, tools/call echo, tools/call read_resource, a notification].
			calls := legacy.calls.Load()
			byID, _ = batchAnswer(t, post(`[{"jsonrpc":"2.0","id":"a","method":"tools/list"},`+
				`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{}}},`+
				`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"read_resource","arguments":{"uri":"docs://documents/alice-0002"}}},`+
				`{"jsonrpc":"2.0","method":"notifications/initialized"}]`))
			require.Len(t, byID, 3)
			assert.Equal(t, []string{"echo", "list_resources", "read_resource", "search", "fetch"}, names(byID[`"a"`]))
			assert.Contains(t, string(byID[`"b"`]), "legacy echo")
			assert.Contains(t, string(byID[`"c"`]), "Contents of Document alice-0002")
			assert.Equal(t, calls+1, legacy.calls.Load(), "legacy ran its own call alone")

			// A batch of legacy's alone is still forwarded whole, byte for byte.
			batches := legacy.batches.Load()
			byID, _ = batchAnswer(t, post(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}]`))
			assert.Len(t, byID, 1)
			assert.Equal(t, batches+1, legacy.batches.Load())
		})
	}
}

// The endpoint answers a split batch first: its refusal (here a
// challenge: no caller for a protected read) is the answer, and legacy
// runs nothing of the batch.
func TestBatchSplitRefusedByTheEndpoint(t *testing.T) {
	legacy := &toolServer{tools: []string{"echo"}}
	f, h, err := interceptTools(t, legacy, nil)
	require.NoError(t, err)
	_ = f
	r := request(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}},`+
		`{"jsonrpc":"2.0","id":2,"method":"resources/list"}]`, map[string]string{"MCP-Protocol-Version": "2025-03-26"})
	w := serve(h, r)
	assert.Equal(t, http.StatusUnauthorized, w.Code, w.Body.String())
	assert.Zero(t, legacy.calls.Load(), "legacy ran nothing")
	assert.Zero(t, legacy.batches.Load())
}
