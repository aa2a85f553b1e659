package intercept_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// echoLegacy answers every request with the body it received, marked by
// a header: what reached the legacy handler is in the answer.
var echoLegacy = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Legacy", "1")
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write(body)
})

// lenient is a message as a lenient decoder (encoding/json: last key
// wins, case-insensitive names) reads it.
type lenient struct {
	Method string `json:"method"`
	Params struct {
		Name string `json:"name"`
		Ref  struct {
			Type string `json:"type"`
		} `json:"ref"`
	} `json:"params"`
}

// FuzzRouting: whatever the body, what reaches the legacy handler is the
// body received, byte for byte, and no message of it is one the endpoint
// owns as a lenient decoder reads it — no resources/… method, no
// completion that is not for a prompt, no call of one of the endpoint's
// tools.
func FuzzRouting(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"resources/read","params":{"uri":"docs://documents/alice-0001"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","Method":"resources/read"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","\u006dethod":"resources/read"}`,
		`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"Type":"ref/prompt","type":"ref/resource"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"echo","name":"read_resource"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_r\u0065source"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"resources/read"}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":9,"result":{}}`,
	} {
		f.Add(s)
	}
	fx := mcptest.New(f, mcptest.Options{Endpoint: func(o *mcphttp.Options) { o.Authenticator = nil }}, bridge{})
	h, err := intercept.New(fx.EP, echoLegacy, intercept.Options{Logger: quiet})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		w := serve(h, request(body, nil))
		if w.Header().Get("X-Legacy") == "" {
			return
		}
		if w.Body.String() != body {
			t.Fatalf("legacy got %q, the client sent %q", w.Body.String(), body)
		}
		var msgs []lenient
		if strings.HasPrefix(strings.TrimLeft(body, " \t\r\n"), "[") {
			_ = json.Unmarshal([]byte(body), &msgs)
		} else {
			var m lenient
			_ = json.Unmarshal([]byte(body), &m)
			msgs = append(msgs, m)
		}
		for _, m := range msgs {
			switch {
			case strings.HasPrefix(m.Method, "resources/"):
				t.Fatalf("legacy was asked for %s: %q", m.Method, body)
			case m.Method == "completion/complete" && m.Params.Ref.Type != "ref/prompt":
				t.Fatalf("legacy was asked for a completion of %q: %q", m.Params.Ref.Type, body)
			case m.Method == "tools/call" && slices.Contains(bridgeTools, m.Params.Name):
				t.Fatalf("legacy was asked for the endpoint's tool %s: %q", m.Params.Name, body)
			}
		}
	})
}
