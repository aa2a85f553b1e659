package mcphttp

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
)

// writeRefusal answers the refusal err of r's credentials with the
// Authenticator's response, but for 429 (authn's Throttle: too many
// refused credentials from the client's address): on this JSON-RPC
// endpoint that is answered as the rate limits answer, in the shape of the
// MCP rate-limit error draft (SEP-3304) — HTTP 429 with the
// Authenticator's headers (Retry-After among them) and a JSON-RPC error
// -32023 "Rate limit exceeded" with data.retryAfterMs (Retry-After in
// milliseconds). id is the request's, null when the body was not read (a
// refusal is answered before it is).
func (e *Endpoint) writeRefusal(w http.ResponseWriter, r *http.Request, id jsonrpc.ID, err error) {
	if e.auth.StatusOf(err) != http.StatusTooManyRequests {
		e.auth.WriteError(w, r, err)
		return
	}
	hw := headerWriter{h: http.Header{}}
	e.auth.WriteError(&hw, r, err) // for its headers; its body is replaced
	secs, perr := strconv.Atoi(hw.h.Get("Retry-After"))
	if perr != nil || secs < 1 {
		secs = 1
		hw.h.Set("Retry-After", "1")
	}
	h := w.Header()
	for k, v := range hw.h {
		if k != "Content-Type" && k != "Content-Length" {
			h[k] = v
		}
	}
	data := json.RawMessage(`{"retryAfterMs":` + strconv.FormatInt(int64(secs)*1000, 10) + `}`)
	jsonrpc.WriteHTTPError(w, http.StatusTooManyRequests, id, &jsonrpc.Error{Code: mcpwire.CodeRateLimited, Message: mcpwire.RateLimitedMessage, Data: data})
}

// headerWriter keeps the headers a response writer is given and drops
// its status and body.
type headerWriter struct{ h http.Header }

func (w *headerWriter) Header() http.Header         { return w.h }
func (w *headerWriter) WriteHeader(int)             {}
func (w *headerWriter) Write(b []byte) (int, error) { return len(b), nil }

// requestID is the id of b's message, null for a batch.
func requestID(b *jsonrpc.Body) jsonrpc.ID {
	if b == nil || b.Batch {
		return jsonrpc.ID{}
	}
	return b.Message.ID
}
