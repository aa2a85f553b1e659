package tools

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// Tool results on the wire:
//
//	"content":[{"type":"text","text":…} | {"type":"resource","resource":{…}}, …]
//	(,"structuredContent":{…})  2025-06-18 and later
//	(,"isError":true)
//
// the members of a result object, which the endpoint closes with the
// era's members. The whole response stays within the byte limit
// (mcphttp.Call.Room).

// The text item's encoding around its JSON string.
const (
	textItemHead = `{"type":"text","text":`
	textItemTail = `}`
	// textResultOverhead is what a result of one empty text item takes:
	// the room left for the escaped text is Room minus this.
	textResultOverhead = len(`"content":[`) + len(textItemHead) + len(`""`) + len(textItemTail) + len(`]`)
)

// bufPool holds the storage results are encoded in; the endpoint copies
// them into the response.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

// putBuf returns storage to the pool. Huge buffers are not kept alive.
func putBuf(p *[]byte, b []byte) {
	if cap(b) > 256<<10 {
		return
	}
	*p = b[:0]
	bufPool.Put(p)
}

// encode answers a call with res: encoded within the byte limit, or,
// over it or malformed, the generic tool error (logged).
func (p *Part) encode(ctx context.Context, c *mcphttp.Call, res Result) (mcphttp.Result, error) {
	if out, ok := p.tryEncode(ctx, c, &res); ok {
		return out, nil
	}
	return p.failed(ctx, c)
}

// failed is the generic tool error of a call the server could not
// complete.
func (p *Part) failed(ctx context.Context, c *mcphttp.Call) (mcphttp.Result, error) {
	c.NoteOutcome(mcphttp.OutcomeError, "")
	res := ErrorResult(textFailed)
	if out, ok := p.tryEncode(ctx, c, &res); ok {
		return out, nil
	}
	return mcphttp.Result{}, mcphttp.ErrResultTooLarge // a limit below any answer's: New refuses those
}

// textFailed is the text of the generic tool error.
const textFailed = "The server could not complete this call."

// tryEncode encodes res as the call's answer; ok is false (and logged)
// when res is malformed or over the byte limit.
func (p *Part) tryEncode(ctx context.Context, c *mcphttp.Call, res *Result) (mcphttp.Result, bool) {
	if res.Structured != nil && !validObject(res.Structured) {
		p.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "mcphttp/tools: a tool's structured content is not a JSON object",
			slog.String("tool", c.Target))
		return mcphttp.Result{}, false
	}
	buf := getBuf()
	b := appendResult((*buf)[:0], res, mcphttp.Structured(c.ProtocolVersion))
	if room := c.Room(mcphttp.CachePrivate); len(b) > room {
		putBuf(buf, b)
		p.tooLarge(ctx, c, len(b), room)
		return mcphttp.Result{}, false
	}
	if res.IsError {
		c.NoteToolError()
	}
	out := c.Result(b, mcphttp.CachePrivate)
	putBuf(buf, b)
	return out, true
}

// appendResult appends the members of res's result object; structured
// says whether the protocol version has structuredContent.
func appendResult(b []byte, res *Result, structured bool) []byte {
	b = append(b, `"content":[`...)
	for i := range res.Content {
		if i > 0 {
			b = append(b, ',')
		}
		ct := &res.Content[i]
		if ct.Resource == nil {
			b = append(mcphttp.AppendString(append(b, textItemHead...), ct.Text), textItemTail...)
			continue
		}
		b = append(mcphttp.AppendContents(append(b, `{"type":"resource","resource":`...), ct.Resource), '}')
	}
	b = append(b, ']')
	if structured && res.Structured != nil {
		b = append(append(b, `,"structuredContent":`...), res.Structured...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return b
}

// validObject reports whether b is the text of a JSON object.
func validObject(b []byte) bool {
	v, err := jsonstrict.Parse(b)
	return err == nil && v.Kind() == jsonstrict.Object
}
