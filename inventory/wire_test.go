package inventory_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/budget"
	"github.com/mcpkit/mcpkit/inventory"
)

// envelope is what a transport puts around a result object: the test
// helpers below assemble whole responses as mcphttp does, so that tests
// check the byte budget of the complete response.
//
//	Head ‖ {result members[,Meta]} ‖ Tail
type envelope struct {
	Head, Meta, Tail []byte
}

// reserve is the number of bytes the envelope adds to a result object.
func (env envelope) reserve() int {
	n := len(env.Head) + len(env.Tail)
	if len(env.Meta) > 0 {
		n += 1 + len(env.Meta)
	}
	return n
}

// close appends (`,` Meta) `}` Tail.
func (env envelope) close(dst []byte) []byte {
	if len(env.Meta) > 0 {
		dst = append(append(dst, ','), env.Meta...)
	}
	return append(append(dst, '}'), env.Tail...)
}

// listWire lists one page and returns the whole response.
func listWire(ctx context.Context, inv *inventory.Inventory, caller *principal.Principal, cursor string, env envelope) ([]byte, error) {
	var page inventory.ResourcePage
	if err := inv.List(ctx, caller, inventory.PageRequest{Cursor: cursor, Reserve: env.reserve()}, &page); err != nil {
		return nil, err
	}
	out := append(append([]byte(nil), env.Head...), `{"resources":[`...)
	start := len(out)
	for i, it := range page.Resources {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it.JSON...)
	}
	// Every page listed in the tests checks AppendJSON against the items.
	if joined := page.AppendJSON(nil); !bytes.Equal(joined, out[start:]) || page.JSONLen() != len(joined) {
		return nil, fmt.Errorf("AppendJSON gives %q (JSONLen %d), the items %q", joined, page.JSONLen(), out[start:])
	}
	out = append(out, ']')
	if page.NextCursor != "" {
		out = append(append(append(out, `,"nextCursor":"`...), page.NextCursor...), '"')
	}
	return env.close(out), nil
}

// templatesWire lists one page of templates and returns the whole response.
func templatesWire(ctx context.Context, inv *inventory.Inventory, caller *principal.Principal, cursor string, env envelope) ([]byte, error) {
	var page inventory.TemplatePage
	if err := inv.Templates(ctx, caller, inventory.PageRequest{Cursor: cursor, Reserve: env.reserve()}, &page); err != nil {
		return nil, err
	}
	out := append(append([]byte(nil), env.Head...), `{"resourceTemplates":[`...)
	start := len(out)
	for i, it := range page.Templates {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it.JSON...)
	}
	// As for resources: AppendJSON and JSONLen against the items.
	if joined := page.AppendJSON(nil); !bytes.Equal(joined, out[start:]) || page.JSONLen() != len(joined) {
		return nil, fmt.Errorf("AppendJSON gives %q (JSONLen %d), the items %q", joined, page.JSONLen(), out[start:])
	}
	out = append(out, ']')
	if page.NextCursor != "" {
		out = append(append(append(out, `,"nextCursor":"`...), page.NextCursor...), '"')
	}
	return env.close(out), nil
}

// errTooLarge reports a read response over the inventory's byte limit.
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
		out = budget.AppendString(out, c.URI)
		if c.MIMEType != "" {
			out = append(out, `,"mimeType":`...)
			out = budget.AppendString(out, c.MIMEType)
		}
		if c.Blob != nil {
			out = append(out, `,"blob":"`...)
			out = base64.StdEncoding.AppendEncode(out, c.Blob)
			out = append(out, '"')
		} else {
			out = append(out, `,"text":`...)
			out = budget.AppendString(out, c.Text)
		}
		out = append(out, '}')
	}
	out = env.close(append(out, ']'))
	if len(out) > inv.MaxBytes() {
		return nil, errTooLarge
	}
	return out, nil
}
