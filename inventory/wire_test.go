package inventory_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/principal"
)

// envelope is what a transport puts around a result object, and its byte
// limit: the test helpers below assemble whole responses as mcphttp does,
// encoding each item in the fit function the inventory asks, so that
// tests check the byte budget of the complete response.
//
//	Head ‖ {result members[,Meta]} ‖ Tail
type envelope struct {
	Head, Meta, Tail []byte
	// Limit is the byte limit of the whole response; zero means 1 MiB.
	Limit int
}

func (env envelope) limit() int {
	if env.Limit == 0 {
		return 1 << 20
	}
	return env.Limit
}

// close appends (`,` Meta) `}` Tail.
func (env envelope) close(dst []byte) []byte {
	if len(env.Meta) > 0 {
		dst = append(append(dst, ','), env.Meta...)
	}
	return append(append(dst, '}'), env.Tail...)
}

// errNoRoom: the envelope leaves no room for an empty page with a cursor
// (a transport refuses such a limit at construction).
var errNoRoom = errors.New("no room for an empty page")

// page assembles a paginated result: head ‖ {"member":[items],"nextCursor":…}
// under the limit, keeping room for the longest cursor.
func pageWire[T any](env envelope, member string, maxCursor int, encode func([]byte, *T) []byte,
	list func(fit func(*T) bool) (string, error)) ([]byte, error) {
	out := append(append([]byte(nil), env.Head...), `{"`+member+`":[`...)
	reserve := len(`]`) + len(`,"nextCursor":""`) + maxCursor + len(`}`) + len(env.Tail)
	if len(env.Meta) > 0 {
		reserve += 1 + len(env.Meta)
	}
	if len(out)+reserve > env.limit() {
		return nil, errNoRoom
	}
	n := 0
	next, err := list(func(it *T) bool {
		mark := len(out)
		if n > 0 {
			out = append(out, ',')
		}
		out = encode(out, it)
		if len(out)+reserve > env.limit() {
			out = out[:mark]
			return false
		}
		n++
		return true
	})
	if err != nil {
		return nil, err
	}
	out = append(out, ']')
	if next != "" {
		out = append(append(append(out, `,"nextCursor":"`...), next...), '"')
	}
	return env.close(out), nil
}

// listWire lists one page and returns the whole response.
func listWire(ctx context.Context, inv *inventory.Inventory, caller *principal.Principal, cursor string, env envelope) ([]byte, error) {
	return pageWire(env, "resources", inv.MaxCursorLen(), appendItem, func(fit func(*inventory.Item) bool) (string, error) {
		return inv.List(ctx, caller, cursor, fit)
	})
}

// templatesWire lists one page of templates and returns the whole response.
func templatesWire(ctx context.Context, inv *inventory.Inventory, caller *principal.Principal, cursor string, env envelope) ([]byte, error) {
	return pageWire(env, "resourceTemplates", inv.MaxCursorLen(), appendTemplateItem, func(fit func(*inventory.TemplateItem) bool) (string, error) {
		return inv.Templates(ctx, caller, cursor, fit)
	})
}

// appendItem encodes an MCP Resource.
func appendItem(dst []byte, it *inventory.Item) []byte {
	dst = append(dst, `{"uri":`...)
	dst = jsonstrict.AppendString(dst, it.URI)
	dst = append(dst, `,"name":`...)
	dst = jsonstrict.AppendString(dst, it.Name)
	dst = optional(dst, "title", it.Title)
	dst = optional(dst, "description", it.Description)
	dst = optional(dst, "mimeType", it.MIMEType)
	if a := it.Annotations; a != nil && (len(a.Audience) > 0 || a.Priority != nil || a.LastModified != "") {
		dst = append(dst, `,"annotations":{`...)
		sep := ""
		if len(a.Audience) > 0 {
			dst = append(dst, `"audience":[`...)
			for i, s := range a.Audience {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = jsonstrict.AppendString(dst, s)
			}
			dst = append(dst, ']')
			sep = ","
		}
		if a.Priority != nil {
			dst = append(append(append(dst, sep...), `"priority":`...), strconv.FormatFloat(*a.Priority, 'f', -1, 64)...)
			sep = ","
		}
		if a.LastModified != "" {
			dst = append(append(dst, sep...), `"lastModified":`...)
			dst = jsonstrict.AppendString(dst, a.LastModified)
		}
		dst = append(dst, '}')
	}
	if it.Size > 0 {
		dst = strconv.AppendInt(append(dst, `,"size":`...), it.Size, 10)
	}
	return append(dst, '}')
}

// appendTemplateItem encodes an MCP ResourceTemplate.
func appendTemplateItem(dst []byte, it *inventory.TemplateItem) []byte {
	dst = append(dst, `{"uriTemplate":`...)
	dst = jsonstrict.AppendString(dst, it.URITemplate)
	dst = append(dst, `,"name":`...)
	dst = jsonstrict.AppendString(dst, it.Name)
	dst = optional(dst, "title", it.Title)
	dst = optional(dst, "description", it.Description)
	dst = optional(dst, "mimeType", it.MIMEType)
	return append(dst, '}')
}

func optional(dst []byte, key, value string) []byte {
	if value == "" {
		return dst
	}
	dst = append(append(append(dst, `,"`...), key...), `":`...)
	return jsonstrict.AppendString(dst, value)
}

// errTooLarge reports a read response over the envelope's byte limit.
var errTooLarge = errors.New("read response over the byte limit")

// readWire reads a resource and returns the whole response, encoded as
// mcphttp encodes it.
func readWire(ctx context.Context, inv *inventory.Inventory, caller *principal.Principal, uri string, env envelope) ([]byte, error) {
	contents, err := inv.Read(ctx, caller, uri)
	if err != nil {
		return nil, err
	}
	out := append(append([]byte(nil), env.Head...), `{"contents":[`...)
	for i, c := range contents {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"uri":`...)
		out = jsonstrict.AppendString(out, c.URI)
		out = optional(out, "mimeType", c.MIMEType)
		if c.Blob != nil {
			out = append(out, `,"blob":"`...)
			out = base64.StdEncoding.AppendEncode(out, c.Blob)
			out = append(out, '"')
		} else {
			out = append(out, `,"text":`...)
			out = jsonstrict.AppendString(out, c.Text)
		}
		out = append(out, '}')
	}
	out = env.close(append(out, ']'))
	if len(out) > env.limit() {
		return nil, errTooLarge
	}
	return out, nil
}
