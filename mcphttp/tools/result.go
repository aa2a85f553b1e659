package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
)

// Tool results on the wire:
//
//	"content":[{"type":"text","text":…} | {"type":"image"|"audio","data":…,"mimeType":…} |
//	           {"type":"resource","resource":{…}} | {"type":"resource_link","uri":…,"name":…}, …]
//	(,"structuredContent":{…})  2025-06-18 and later
//	(,"isError":true)
//
// the members of a result object, which the endpoint closes with the
// era's members. The whole response stays within the byte limit
// (mcphttp.Request.Room).

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
func (p *Part) encode(ctx context.Context, c *mcphttp.Request, res Result) (mcphttp.Result, error) {
	if out, ok := p.tryEncode(ctx, c, &res); ok {
		return out, nil
	}
	return p.failed(ctx, c)
}

// failed is the generic tool error of a call the server could not
// complete.
func (p *Part) failed(ctx context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
	c.NoteOutcome(mcphttp.OutcomeError, "")
	res := ErrorResult(textFailed)
	if out, ok := p.tryEncode(ctx, c, &res); ok {
		return out, nil
	}
	return mcphttp.Result{}, mcpwire.ResultTooLarge{} // a limit below any answer's: New refuses those
}

// textFailed is the text of the generic tool error.
const textFailed = "The server could not complete this call."

// tryEncode encodes res as the call's answer; ok is false (and logged)
// when res is malformed or over the byte limit.
func (p *Part) tryEncode(ctx context.Context, c *mcphttp.Request, res *Result) (mcphttp.Result, bool) {
	structured, err := structuredJSON(res.Structured)
	if err == nil {
		err = checkContent(res.Content)
	}
	if err != nil {
		p.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "mcphttp/tools: a tool's result is malformed",
			slog.String("tool", toolOf(c)), slog.String("error", err.Error()))
		return mcphttp.Result{}, false
	}
	buf := getBuf()
	b := appendResult((*buf)[:0], res, structured, mcpwire.Structured(c.ProtocolVersion))
	if room := membersRoom(c); len(b) > room {
		putBuf(buf, b)
		p.tooLarge(ctx, c, toolOf(c), len(b), room)
		return mcphttp.Result{}, false
	}
	if res.IsError {
		c.NoteToolError()
	}
	out, ok := seam.ResultOf[mcphttp.Result](c, b, true)
	putBuf(buf, b)
	return out, ok
}

// structuredJSON returns the JSON object of a Result's Structured: a
// json.RawMessage or []byte as it is, anything else as encoding/json
// encodes it; nil for none.
func structuredJSON(v any) ([]byte, error) {
	var b []byte
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		b = v
	case []byte:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, errors.New("structured content does not encode: " + err.Error())
		}
	}
	if !validObject(b) {
		return nil, errors.New("structured content is not a JSON object")
	}
	return b, nil
}

// checkContent checks that each content item is one kind, with what that
// kind requires.
func checkContent(items []Content) error {
	for i := range items {
		ct := &items[i]
		n := 0
		for _, set := range [...]bool{ct.Image != nil, ct.Audio != nil, ct.Resource != nil, ct.Link != nil} {
			if set {
				n++
			}
		}
		switch {
		case n > 1:
			return errors.New("content item " + strconv.Itoa(i) + " sets more than one of Image, Audio, Resource, Link")
		case ct.Image != nil && ct.Image.MIMEType == "", ct.Audio != nil && ct.Audio.MIMEType == "":
			return errors.New("content item " + strconv.Itoa(i) + " has no MIME type")
		case ct.Link != nil && (ct.Link.URI == "" || ct.Link.Name == ""):
			return errors.New("content item " + strconv.Itoa(i) + ": a resource link needs a URI and a name")
		case ct.Resource != nil && ct.Resource.URI == "":
			return errors.New("content item " + strconv.Itoa(i) + ": an embedded resource needs a URI")
		}
	}
	return nil
}

// appendResult appends the members of res's result object; structured
// is its structuredContent (nil: none), sent when withStructured (the
// protocol version has it).
func appendResult(b []byte, res *Result, structured []byte, withStructured bool) []byte {
	b = append(b, `"content":[`...)
	for i := range res.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendContent(b, &res.Content[i])
	}
	b = append(b, ']')
	if withStructured && structured != nil {
		b = append(append(b, `,"structuredContent":`...), structured...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return b
}

// appendContent appends one content item.
func appendContent(b []byte, ct *Content) []byte {
	switch {
	case ct.Image != nil:
		return appendMedia(append(b, `{"type":"image"`...), ct.Image)
	case ct.Audio != nil:
		return appendMedia(append(b, `{"type":"audio"`...), ct.Audio)
	case ct.Resource != nil:
		return append(mcpwire.AppendContents(append(b, `{"type":"resource","resource":`...), ct.Resource), '}')
	case ct.Link != nil:
		l := ct.Link
		b = mcpwire.AppendString(append(b, `{"type":"resource_link","uri":`...), l.URI)
		b = mcpwire.AppendString(append(b, `,"name":`...), l.Name)
		for _, m := range [...]struct{ name, value string }{{"title", l.Title}, {"description", l.Description}, {"mimeType", l.MIMEType}} {
			if m.value != "" {
				b = mcpwire.AppendString(append(append(append(b, `,"`...), m.name...), `":`...), m.value)
			}
		}
		if l.Size > 0 {
			b = strconv.AppendInt(append(b, `,"size":`...), l.Size, 10)
		}
		return append(b, '}')
	}
	return append(mcpwire.AppendString(append(b, textItemHead...), ct.Text), textItemTail...)
}

// appendMedia appends the data and MIME type of an image or audio item,
// and closes it.
func appendMedia(b []byte, m *Media) []byte {
	b = append(b, `,"data":"`...)
	b = base64.StdEncoding.AppendEncode(b, m.Data)
	b = mcpwire.AppendString(append(b, `","mimeType":`...), m.MIMEType)
	return append(b, '}')
}

// validObject reports whether b is the text of a JSON object.
func validObject(b []byte) bool {
	v, err := jsonstrict.Parse(b)
	return err == nil && v.Kind() == jsonstrict.Object
}

// membersRoom is the room of a private result's members (Room counts the
// braces of the result object).
func membersRoom(c *mcphttp.Request) int { return c.Room(mcphttp.CachePrivate) - len("{}") }
