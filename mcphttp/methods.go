package mcphttp

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/mcpkit/mcpkit/budget"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// envelope returns the bytes around a result of c, for the inventory's
// budgeted writers: the JSON-RPC envelope and, for the modern protocol,
// the result members every cacheable per-caller result carries.
func (e *Endpoint) envelope(c *call) inventory.Envelope {
	head, tail := jsonrpc.ResultEnvelope(c.id)
	env := inventory.Envelope{Head: head, Tail: tail}
	if c.modern {
		env.Meta = e.metaPrivate
	}
	return env
}

type cursorParams struct {
	Cursor *string `json:"cursor"`
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
	var p cursorParams
	if err := jsonrpc.UnmarshalParams(c.params, &p); err != nil {
		return e.errorFor(c, err, "")
	}
	cursor, err := p.cursor()
	if err != nil {
		return e.errorFor(c, err, "")
	}
	body, err := e.inv.List(ctx, c.caller, cursor, e.envelope(c))
	if err != nil {
		return e.errorFor(c, err, "")
	}
	return reply{body: body}
}

func (e *Endpoint) templates(ctx context.Context, c *call) reply {
	var p cursorParams
	if err := jsonrpc.UnmarshalParams(c.params, &p); err != nil {
		return e.errorFor(c, err, "")
	}
	cursor, err := p.cursor()
	if err != nil {
		return e.errorFor(c, err, "")
	}
	body, err := e.inv.Templates(ctx, c.caller, cursor, e.envelope(c))
	if err != nil {
		return e.errorFor(c, err, "")
	}
	return reply{body: body}
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
	body, err := e.inv.ReadResponse(ctx, c.caller, *p.URI, e.envelope(c))
	if err != nil {
		return e.errorFor(c, err, *p.URI)
	}
	return reply{body: body}
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
