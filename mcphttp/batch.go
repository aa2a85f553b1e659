package mcphttp

import (
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// serveBatch answers a JSON array of messages, which only protocol
// 2025-03-26 allows (and which an absent MCP-Protocol-Version header
// implies). Each element is served on its own; the answer is the array of
// the responses to its requests, or 202 when it held none (notifications
// and client responses are never answered, JSON-RPC §6). If any element
// needs an authentication or scope challenge, or is over the caller's
// rate limit, the whole batch gets that answer: HTTP has one status per
// response.
func (e *Endpoint) serveBatch(w http.ResponseWriter, r *http.Request, items []jsonrpc.BatchItem, caller *principal.Principal, received time.Time) {
	if v := r.Header.Get(headerProtocolVersion); v != "" && v != Version20250326 {
		e.write(w, r, e.failure(&call{}, errBatchVersion))
		return
	}
	out := make([]byte, 0, 256*len(items))
	out = append(out, '[')
	n := 0
	for _, it := range items {
		if it.Err == nil && it.Message.Kind != jsonrpc.KindRequest {
			continue // notifications and client responses get no response (JSON-RPC §6)
		}
		var rep reply
		if it.Err != nil {
			rep = e.failure(&call{id: it.Message.ID}, it.Err)
		} else {
			rep = e.serveMessage(r, it.Message, caller, true, received)
		}
		if rep.authErr != nil || rep.status == http.StatusTooManyRequests {
			// One status per response: a challenge, or the rate limit
			// with its Retry-After, answers the whole batch.
			release(rep.pooled, rep.body)
			e.write(w, r, rep)
			return
		}
		if rep.body == nil {
			continue
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, rep.body...)
		release(rep.pooled, rep.body)
		n++
	}
	if n == 0 {
		e.write(w, r, reply{status: http.StatusAccepted})
		return
	}
	e.write(w, r, reply{body: append(out, ']')})
}
