package mcphttp

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/mcpkit/mcpkit/budget"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The resource methods: the inventory decides, these functions put its
// answers on the wire.

// cursorOf returns the cursor of a paginated request's params. A first
// page usually has no params at all, which costs no decoding. The
// endpoint never issues an empty cursor, so an empty one that is present
// is invalid, not "start over". params are read as UnmarshalParams would
// read them into a field Cursor *string `json:"cursor"`.
func cursorOf(params []byte) (string, error) {
	if len(params) == 0 {
		return "", nil
	}
	cursor, present, err := stringParam(params, "cursor", foldedCursor)
	switch {
	case err != nil:
		return "", err
	case present && cursor == "":
		return "", &inventory.CursorError{Reason: inventory.ReasonInvalid}
	}
	return cursor, nil
}

// uriOf returns the required params.uri of a request, read as
// UnmarshalParams would read it into a field URI *string `json:"uri"`.
func uriOf(params []byte) (string, error) {
	if len(params) == 0 {
		return "", invalidParams("params.uri is required")
	}
	uri, _, err := stringParam(params, "uri", foldedURI)
	if err != nil {
		return "", err
	}
	if uri == "" {
		return "", invalidParams("params.uri is required")
	}
	return uri, nil
}

// The folded names of the params read with stringParam.
const (
	foldedCursor = "CURSOR"
	foldedURI    = "URI"
)

func (e *Endpoint) list(ctx context.Context, c *call) (reply, error) {
	if c.caller == nil && e.inv.HasListSources() {
		return reply{}, inventory.ErrUnauthenticated // before looking at params
	}
	return e.servePage(ctx, c, "resources", func(buf *respBuf, req inventory.PageRequest) (listPage, error) {
		p := &buf.page
		err := e.inv.List(ctx, c.caller, req, p)
		return listPage{p, p.NextCursor, len(p.Resources)}, err
	})
}

func (e *Endpoint) templates(ctx context.Context, c *call) (reply, error) {
	return e.servePage(ctx, c, "resourceTemplates", func(buf *respBuf, req inventory.PageRequest) (listPage, error) {
		p := &buf.templates
		err := e.inv.Templates(ctx, c.caller, req, p)
		return listPage{p, p.NextCursor, len(p.Templates)}, err
	})
}

// listPage is what servePage needs of a filled inventory page
// (inventory.ResourcePage or TemplatePage).
type listPage struct {
	items interface {
		JSONLen() int
		AppendJSON([]byte) []byte
	}
	next    string
	entries int
}

// servePage answers a paginated list method: the params' cursor, fill's
// page (filled into buf under the byte limit less what the envelope takes),
// assembled as {"member":[…],"nextCursor":…} in buf.
func (e *Endpoint) servePage(ctx context.Context, c *call, member string, fill func(*respBuf, inventory.PageRequest) (listPage, error)) (reply, error) {
	cursor, err := cursorOf(c.params)
	if err != nil {
		return reply{}, err
	}
	buf := getResp()
	buf.head = jsonrpc.AppendResultHead(buf.head[:0], c.id)
	meta := e.meta(c)
	pg, err := fill(buf, inventory.PageRequest{Cursor: cursor, Reserve: reserve(buf.head, meta)})
	if err != nil {
		release(buf, nil)
		return reply{}, err
	}
	body, err := assemble(buf, member, pg.items.JSONLen(), pg.items.AppendJSON, pg.next, meta, e.inv.MaxBytes())
	if err != nil {
		release(buf, nil)
		return reply{}, e.assemblyFailed(c, err)
	}
	return reply{body: body, pooled: buf, entries: pg.entries}, nil
}

func (e *Endpoint) read(ctx context.Context, c *call) (reply, error) {
	uri, err := uriOf(c.params)
	if err != nil {
		return reply{}, err
	}
	c.noteURI(uri)
	contents, err := e.inv.Read(ctx, c.caller, uri)
	if err != nil {
		return reply{}, aboutURI(uri, err)
	}
	buf := getResp()
	out := jsonrpc.AppendResultHead(buf.body[:0], c.id)
	out = append(out, `{"contents":[`...)
	for i := range contents {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendContents(out, &contents[i])
	}
	out = closeResult(append(out, ']'), e.meta(c))
	if len(out) > e.inv.MaxBytes() {
		release(buf, out)
		e.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "mcphttp: response over the byte limit",
			slog.String("method", c.method), slog.Int("bytes", len(out)), slog.Int("limit", e.inv.MaxBytes()))
		return reply{}, errResultTooLarge
	}
	return reply{body: out, pooled: buf}, nil
}

// assemblyFailed logs a page the budget refused although the inventory
// filled it under the same limit (never expected).
func (e *Endpoint) assemblyFailed(c *call, err error) error {
	e.log.Error("mcphttp: cannot assemble the response", "method", c.method, "error", err.Error())
	return errResultTooLarge
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

func (e *Endpoint) complete(ctx context.Context, c *call) (reply, error) {
	if !e.inv.Completes() {
		return reply{}, errMethodNotFound
	}
	var p completeParams
	if err := jsonrpc.UnmarshalParams(c.params, &p); err != nil {
		return reply{}, err
	}
	switch {
	case p.Ref == nil || p.Argument == nil:
		return reply{}, invalidParams("params.ref and params.argument are required")
	case p.Ref.Type == "ref/prompt":
		return reply{}, invalidParams("this server has no prompts")
	case p.Ref.Type != "ref/resource":
		return reply{}, invalidParams("params.ref.type must be ref/resource")
	}
	c.noteURI(p.Ref.URI)
	var args map[string]string
	if p.Context != nil {
		args = p.Context.Arguments
	}
	comp, err := e.inv.Complete(ctx, c.caller, p.Ref.URI, p.Argument.Name, p.Argument.Value, args)
	if err != nil {
		return reply{}, err
	}
	return resultReply(c.id, e.completionResult(c, comp)), nil
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
	b = strconv.AppendInt(b, int64(max(comp.Total, len(comp.Values))), 10)
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
