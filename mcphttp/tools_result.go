package mcphttp

import (
	"context"
	"log/slog"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/budget"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Tool results, assembled like the resource methods' results: from the
// inventory's Go values, under the inventory's byte limit for the whole
// response.

const (
	textHead = `{"content":[{"type":"text","text":`
	textTail = `}]`
)

// textOverhead is the size of a response holding one empty text item:
// head, {"content":[{"type":"text","text":""}], (`,` meta) and the two
// closing braces of the result and the response.
func textOverhead(head, meta []byte) int {
	n := len(head) + len(textHead) + len(`""`) + len(textTail) + len("}}")
	if len(meta) > 0 {
		n += 1 + len(meta)
	}
	return n
}

// toolError is a tool error result: one text item and isError.
func (e *Endpoint) toolError(c *call, text string) reply {
	c.noteToolError()
	b := make([]byte, 0, len(textHead)+len(text)+64+len(e.meta(c)))
	b = append(b, textHead...)
	b = budget.AppendString(b, text)
	b = append(b, textTail...)
	b = append(b, `,"isError":true`...)
	return resultReply(c.id, closeObject(b, e.meta(c)))
}

// tooLarge logs a tool result over the byte limit and returns the error
// that becomes a generic tool error.
func (e *Endpoint) tooLarge(ctx context.Context, c *call, tool string, n int) error {
	e.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "mcphttp: response over the byte limit",
		slog.String("method", c.method), slog.String("tool", tool), slog.Int("bytes", n), slog.Int("limit", e.inv.MaxBytes()))
	return errResultTooLarge
}

// toolListResources is list_resources: one page of resources/list, with
// the same cursors (the same purpose and binding: a resources/list cursor
// continues here, and the other way round). The page appears twice in the
// result — as structuredContent and as its JSON text for clients that read
// only text, a string in which every byte is escaped to at most two — so
// the inventory fills it under a third of what the envelope leaves: the
// whole response stays within the byte limit. Below that size the page is
// exactly the page resources/list gives.
func (e *Endpoint) toolListResources(ctx context.Context, c *call, cursor string) (reply, error) {
	if c.caller == nil && e.inv.HasListSources() {
		return reply{}, inventory.ErrUnauthenticated
	}
	buf := getResp()
	buf.head = jsonrpc.AppendResultHead(buf.head[:0], c.id)
	meta := e.meta(c)
	limit := e.inv.MaxBytes()
	fixed := textOverhead(buf.head, meta) + len(`,"structuredContent":`)
	room := max(limit-fixed, 0) / 3
	page := &buf.page
	if err := e.inv.List(ctx, c.caller, inventory.PageRequest{Cursor: cursor, Reserve: limit - room}, page); err != nil {
		release(buf, nil)
		return reply{}, err
	}
	obj := append(buf.tail[:0], `{"resources":[`...)
	for i := range page.Resources {
		if i > 0 {
			obj = append(obj, ',')
		}
		obj = append(obj, page.Resources[i].JSON...)
	}
	obj = append(obj, ']')
	if page.NextCursor != "" {
		obj = append(append(append(obj, `,"nextCursor":"`...), page.NextCursor...), '"')
	}
	obj = append(obj, '}')
	buf.tail = obj

	out := append(buf.body[:0], buf.head...)
	out = append(out, textHead...)
	out = budget.AppendString(out, string(obj))
	out = append(out, textTail...)
	if structured(c.version) {
		out = append(out, `,"structuredContent":`...)
		out = append(out, obj...)
	}
	out = closeResult(out, meta)
	if len(out) > limit {
		release(buf, out)
		return reply{}, e.tooLarge(ctx, c, ToolListResources, len(out))
	}
	return reply{body: out, pooled: buf, entries: len(page.Resources)}, nil
}

// toolRead is read_resource and the typed template tools: resources/read
// of uri, its access checks included. Text contents become text items,
// binary ones embedded resources (with the blob base64-encoded).
func (e *Endpoint) toolRead(ctx context.Context, c *call, uri string) (reply, error) {
	c.noteURI(uri)
	contents, err := e.inv.Read(ctx, c.caller, uri)
	if err != nil {
		return reply{}, err
	}
	buf := getResp()
	out := jsonrpc.AppendResultHead(buf.body[:0], c.id)
	out = append(out, `{"content":[`...)
	for i := range contents {
		if i > 0 {
			out = append(out, ',')
		}
		ct := &contents[i]
		if ct.Blob == nil {
			out = append(out, `{"type":"text","text":`...)
			out = budget.AppendString(out, ct.Text)
			out = append(out, '}')
			continue
		}
		out = append(out, `{"type":"resource","resource":`...)
		out = appendContents(out, ct)
		out = append(out, '}')
	}
	out = closeResult(append(out, ']'), e.meta(c))
	if len(out) > e.inv.MaxBytes() {
		release(buf, out)
		return reply{}, e.tooLarge(ctx, c, ToolReadResource, len(out))
	}
	return reply{body: out, pooled: buf}, nil
}

// toolSearch is search, in the contract of ChatGPT connectors and deep
// research: one text item holding {"results":[{"id","title","url"}]}. The
// id is the resource URI, which fetch reads. Results past the byte limit
// are left out (they come last: the least relevant).
func (e *Endpoint) toolSearch(ctx context.Context, c *call, query string) (reply, error) {
	hits, err := e.inv.Search(ctx, c.caller, query, e.tools.searchLimit)
	if err != nil {
		return reply{}, err
	}
	head := jsonrpc.AppendResultHead(nil, c.id)
	meta := e.meta(c)
	room := e.inv.MaxBytes() - textOverhead(head, meta)
	inner := append(make([]byte, 0, 128*len(hits)+16), `{"results":[`...)
	used := len(inner) + len(`]}`) // escaped, these take no more bytes
	var item, esc []byte
	for i := range hits {
		h := &hits[i]
		item = append(item[:0], `{"id":`...)
		item = budget.AppendString(item, h.URI)
		item = append(item, `,"title":`...)
		item = budget.AppendString(item, h.Name)
		item = append(item, `,"url":`...)
		item = budget.AppendString(item, e.tools.citation(h.URI))
		item = append(item, '}')
		esc = budget.AppendString(esc[:0], string(item))
		n := len(esc) - 2
		if i > 0 {
			n++ // the comma
		}
		if used+n > room {
			break
		}
		used += n
		if i > 0 {
			inner = append(inner, ',')
		}
		inner = append(inner, item...)
	}
	inner = append(inner, `]}`...)
	out := append(head, textHead...)
	out = budget.AppendString(out, string(inner))
	out = closeResult(append(out, textTail...), meta)
	if len(out) > e.inv.MaxBytes() {
		return reply{}, e.tooLarge(ctx, c, ToolSearch, len(out)) // only an envelope over the limit
	}
	return reply{body: out}, nil
}

// toolFetch is fetch: resources/read of the id (a search result's URI),
// its access checks included, as one text item holding
// {"id","title","text","url","metadata"}. text joins the text contents;
// title is the contents' Title clipped like a name (inventory.ClipName),
// else — empty, or not printable UTF-8 — the URI. A text too long for the byte
// limit is cut at a character boundary, and metadata.truncated says so.
func (e *Endpoint) toolFetch(ctx context.Context, c *call, id string) (reply, error) {
	c.noteURI(id)
	contents, err := e.inv.Read(ctx, c.caller, id)
	if err != nil {
		return reply{}, err
	}
	var text []byte
	title, mime, n := "", "", 0
	for i := range contents {
		ct := &contents[i]
		if title == "" {
			title = ct.Title
		}
		if mime == "" {
			mime = ct.MIMEType
		}
		if ct.Blob == nil {
			if n > 0 {
				text = append(text, '\n')
			}
			text = append(text, ct.Text...)
			n++
		}
	}
	if title = inventory.ClipName(title); title == "" || !printableText(title) {
		title = id
	}
	head := jsonrpc.AppendResultHead(nil, c.id)
	meta := e.meta(c)
	room := e.inv.MaxBytes() - textOverhead(head, meta)
	doc := func(text []byte, truncated bool) []byte {
		b := append(make([]byte, 0, len(text)+len(id)*2+len(title)+128), `{"id":`...)
		b = budget.AppendString(b, id)
		b = append(b, `,"title":`...)
		b = budget.AppendString(b, title)
		b = append(b, `,"text":`...)
		b = budget.AppendString(b, string(text))
		b = append(b, `,"url":`...)
		b = budget.AppendString(b, e.tools.citation(id))
		b = append(b, `,"metadata":{"uri":`...)
		b = budget.AppendString(b, id)
		if mime != "" {
			b = append(b, `,"mimeType":`...)
			b = budget.AppendString(b, mime)
		}
		if truncated {
			b = append(b, `,"truncated":true`...)
		}
		return append(b, `}}`...)
	}
	escLen := func(b []byte) int { return len(budget.AppendString(nil, string(b))) - 2 }
	inner := doc(text, false)
	if escLen(inner) > room {
		// The longest prefix of text, at a character boundary, that fits:
		// a binary search over byte offsets.
		fits := func(k int) bool { return escLen(doc(text[:runeStart(text, k)], true)) <= room }
		lo, hi := 0, len(text)
		for lo < hi {
			if mid := (lo + hi + 1) / 2; fits(mid) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		inner = doc(text[:runeStart(text, lo)], true)
		if escLen(inner) > room {
			return reply{}, e.tooLarge(ctx, c, ToolFetch, len(head)+escLen(inner))
		}
	}
	out := append(head, textHead...)
	out = budget.AppendString(out, string(inner))
	out = closeResult(append(out, textTail...), meta)
	if len(out) > e.inv.MaxBytes() {
		return reply{}, e.tooLarge(ctx, c, ToolFetch, len(out))
	}
	return reply{body: out}, nil
}

// printableText reports valid UTF-8 without control characters.
func printableText(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

// runeStart returns the largest offset ≤ i that starts a character of b.
func runeStart(b []byte, i int) int {
	i = min(i, len(b))
	for i > 0 && i < len(b) && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}
