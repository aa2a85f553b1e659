package mcphttp

import (
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/internal/budget"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
)

// The wire: the one encoder of the kit's results. The inventory decides
// in Go values; what clients receive is encoded here, in pooled storage,
// under the endpoint's byte limit.

// respBuf is the storage of one response, recycled through respPool. Its
// fit methods are the inventory's fit functions: each encodes the item
// offered into body and says whether the response still fits.
type respBuf struct {
	// gen counts the buffer's releases: a Result made from it before the
	// last release is stale (a middleware that kept a Result and returned
	// it again; see Result.stale).
	gen atomic.Uint32
	mcpwire.Page
	fitItem func(*inventory.Item) bool
	fitTmpl func(*inventory.TemplateItem) bool
}

var respPool = sync.Pool{New: func() any {
	b := &respBuf{Page: mcpwire.Page{Body: make([]byte, 0, 16<<10)}}
	b.fitItem = b.AddItem // method values made once per buffer, not per page
	b.fitTmpl = b.AddTemplate
	return b
}}

func getResp() *respBuf { return respPool.Get().(*respBuf) }

// result returns the answer whose body is body, in b's storage.
func (b *respBuf) result(body []byte) Result {
	return Result{body: body, pooled: b, gen: b.gen.Load()}
}

// discard returns storage no Result was made of to the pool.
func (b *respBuf) discard() { release(b, b.gen.Load(), nil) }

// release returns a response's storage to the pool, once: a buffer whose
// generation moved on since gen was released already. Huge responses are
// not kept alive.
func release(buf *respBuf, gen uint32, body []byte) {
	if buf == nil || !buf.gen.CompareAndSwap(gen, gen+1) {
		return
	}
	if body != nil {
		if cap(body) > 256<<10 {
			return
		}
		buf.Body = body[:0]
	}
	respPool.Put(buf)
}

// pageReserve is what a page's result takes after its items: `]`, the
// longest `,"nextCursor":"…"`, (`,` meta) and the two closing braces.
func (e *Endpoint) pageReserve(meta []byte) int {
	return budget.Reserve(e.inv.MaxCursorLen(), len(meta))
}

// endPage closes a page: `]`, the cursor, (`,` meta) `}}`.
func endPage(body []byte, next string, meta []byte) []byte {
	body = append(body, ']')
	if next != "" {
		body = append(append(append(body, `,"nextCursor":"`...), next...), '"')
	}
	return closeResult(body, meta, true)
}

// minResultBytes is the smallest byte limit that holds a list page with
// one item of the largest size the inventory allows (a listed entry with
// its URI, name and MIME type all at their limits and escaped as much as
// the characters they may hold need, or the largest static resource or
// template), the longest cursor, the longest id and the modern members:
// smaller limits would fail pages.
func (e *Endpoint) minResultBytes() int {
	const (
		maxURI  = 2048 * 6 // UTF-16 units, each at most a \uXXXX escape
		maxName = 512 * 6
		maxMIME = 128 * 2 // a quoted parameter may hold '"'
	)
	item := len(`{"uri":"","name":"","mimeType":""}`) + maxURI + maxName + maxMIME
	item = max(item, e.statics.Longest) // the statics are encoded
	for _, it := range e.inv.TemplateItems() {
		item = max(item, len(mcpwire.AppendTemplateItem(nil, &it)))
	}
	head := len(`{"jsonrpc":"2.0","id":,"result":`) + max(e.limits.MaxIDBytes, jsonrpc.DefaultMaxIDBytes)
	return head + len(`{"resourceTemplates":[`) + item + e.pageReserve(e.metaPrivate)
}
