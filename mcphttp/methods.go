package mcphttp

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/budget"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// envelope returns the bytes around a result of c, for the inventory's
// budgeted writers: the JSON-RPC envelope and, for the modern protocol,
// the result members every cacheable per-caller result carries.
func (e *Endpoint) envelope(c *call) (inventory.Envelope, *respBuf) {
	buf := respPool.Get().(*respBuf)
	buf.head = jsonrpc.AppendResultHead(buf.head[:0], c.id)
	env := inventory.Envelope{Head: buf.head, Tail: resultTail, Buf: buf.body[:0]}
	if c.modern {
		env.Meta = e.metaPrivate
	}
	return env, buf
}

// resultTail closes a JSON-RPC result response.
var resultTail = []byte("}")

// respBuf is the storage of one inventory response: its JSON-RPC head and
// the response itself. respPool recycles it across requests.
type respBuf struct{ head, body []byte }

var respPool = sync.Pool{New: func() any { return &respBuf{head: make([]byte, 0, 64), body: make([]byte, 0, 16<<10)} }}

// pooledReply is the reply for a response assembled in pool storage; write
// returns the storage once the response is sent.
func pooledReply(body []byte, buf *respBuf) reply {
	return reply{body: body, pooled: buf}
}

// release returns a response's storage to the pool. Huge responses are not
// kept alive.
func release(buf *respBuf, body []byte) {
	if buf == nil || cap(body) > 256<<10 {
		return
	}
	buf.body = body[:0]
	respPool.Put(buf)
}

type cursorParams struct {
	Cursor *string `json:"cursor"`
}

// cursorOf returns the cursor of a paginated request's params. A first
// page usually has no params at all, which costs no decoding.
func cursorOf(params []byte) (string, error) {
	if len(params) == 0 {
		return "", nil
	}
	var p cursorParams
	if err := jsonrpc.UnmarshalParams(params, &p); err != nil {
		return "", err
	}
	return p.cursor()
}

// cursor returns the request's cursor. The endpoint never issues an empty
// cursor, so an empty one that is present is invalid, not "start over".
func (p cursorParams) cursor() (string, error) {
	if p.Cursor != nil && *p.Cursor == "" {
		return "", &inventory.CursorError{Reason: inventory.ReasonInvalid}
	}
	return deref(p.Cursor), nil
}

func (e *Endpoint) list(ctx context.Context, c *call) reply {
	if c.caller == nil && e.inv.HasListSources() {
		return e.errorFor(c, inventory.ErrUnauthenticated, "") // before looking at params
	}
	return e.paginated(ctx, c, e.inv.List)
}

func (e *Endpoint) templates(ctx context.Context, c *call) reply {
	return e.paginated(ctx, c, e.inv.Templates)
}

// paginated serves a paginated list method: it reads the cursor and has
// the inventory assemble the page in pooled storage.
func (e *Endpoint) paginated(ctx context.Context, c *call,
	page func(context.Context, *authn.Principal, string, inventory.Envelope) ([]byte, error)) reply {
	cursor, err := cursorOf(c.params)
	if err != nil {
		return e.errorFor(c, err, "")
	}
	env, buf := e.envelope(c)
	body, err := page(ctx, c.caller, cursor, env)
	if err != nil {
		respPool.Put(buf)
		return e.errorFor(c, err, "")
	}
	return pooledReply(body, buf)
}

func (e *Endpoint) read(ctx context.Context, c *call) reply {
	var p struct {
		URI *string `json:"uri"`
	}
	if err := jsonrpc.UnmarshalParams(c.params, &p); err != nil {
		return e.errorFor(c, err, "")
	}
	if p.URI == nil || *p.URI == "" {
		return e.errorFor(c, invalidParams("params.uri is required"), "")
	}
	env, buf := e.envelope(c)
	body, err := e.inv.ReadResponse(ctx, c.caller, *p.URI, env)
	if err != nil {
		respPool.Put(buf)
		return e.errorFor(c, err, *p.URI)
	}
	return pooledReply(body, buf)
}

type completeParams struct {
	Ref *struct {
		Type string `json:"type"`
		URI  string `json:"uri"`
		Name string `json:"name"`
	} `json:"ref"`
	Argument *struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Context *struct {
		Arguments map[string]string `json:"arguments"`
	} `json:"context"`
}

func (e *Endpoint) complete(ctx context.Context, c *call) reply {
	if !e.inv.Completes() {
		return errorReply(notFoundStatus(c), c.id, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, ""))
	}
	var p completeParams
	if err := jsonrpc.UnmarshalParams(c.params, &p); err != nil {
		return e.errorFor(c, err, "")
	}
	switch {
	case p.Ref == nil || p.Argument == nil:
		return e.errorFor(c, invalidParams("params.ref and params.argument are required"), "")
	case p.Ref.Type == "ref/prompt":
		return e.errorFor(c, invalidParams("this server has no prompts"), "")
	case p.Ref.Type != "ref/resource":
		return e.errorFor(c, invalidParams("params.ref.type must be ref/resource"), "")
	}
	var args map[string]string
	if p.Context != nil {
		args = p.Context.Arguments
	}
	comp, err := e.inv.Complete(ctx, c.caller, p.Ref.URI, p.Argument.Name, p.Argument.Value, args)
	if err != nil {
		return e.errorFor(c, err, "")
	}
	return resultReply(c.id, e.completionResult(c, comp))
}

// completionResult encodes {"completion":{"values":[…],"total":n,"hasMore":b}}.
func (e *Endpoint) completionResult(c *call, comp inventory.Completion) []byte {
	b := make([]byte, 0, 64+16*len(comp.Values))
	b = append(b, `{"completion":{"values":[`...)
	for i, v := range comp.Values {
		if i > 0 {
			b = append(b, ',')
		}
		b = budget.AppendString(b, v)
	}
	b = append(b, `],"total":`...)
	total, _ := json.Marshal(max(comp.Total, len(comp.Values)))
	b = append(b, total...)
	if comp.HasMore {
		b = append(b, `,"hasMore":true`...)
	} else {
		b = append(b, `,"hasMore":false`...)
	}
	b = append(b, '}')
	if c.modern {
		b = append(b, ',')
		b = append(b, e.metaPlain...)
	}
	return append(b, '}')
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// notFoundStatus is the HTTP status of a -32601 answer: 404 in the modern
// protocol, 200 in the legacy ones.
func notFoundStatus(c *call) int {
	if c.modern {
		return http.StatusNotFound
	}
	return http.StatusOK
}
