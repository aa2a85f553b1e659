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
	gen     atomic.Uint32
	body    []byte
	page    budget.Page // the page's byte room, its trailer kept aside
	items   int
	statics *encodedStatics // the endpoint's
	fitItem func(*inventory.Item) bool
	fitTmpl func(*inventory.TemplateItem) bool
}

var respPool = sync.Pool{New: func() any {
	b := &respBuf{body: make([]byte, 0, 16<<10)}
	b.fitItem = b.addItem // method values made once per buffer, not per page
	b.fitTmpl = b.addTemplate
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
		buf.body = body[:0]
	}
	respPool.Put(buf)
}

// start begins a page: head ‖ {"member":[ in body, and the room the page's
// items may take, keeping reserve bytes for what follows them.
func (b *respBuf) start(head []byte, member string, limit, reserve int, statics *encodedStatics) {
	b.body = append(append(append(append(b.body[:0], head...), `{"`...), member...), `":[`...)
	b.page, b.items, b.statics = budget.NewPage(budget.MaxItems, limit, reserve), 0, statics
}

func (b *respBuf) addItem(it *inventory.Item) bool {
	mark := len(b.body)
	if b.items > 0 {
		b.body = append(b.body, ',')
	}
	switch {
	case b.statics != nil && it.Static > 0 && it.Static <= len(b.statics.ends):
		b.body = append(b.body, b.statics.item(it.Static)...) // encoded once, at construction
	case it.Plain && it.Title == "" && it.Description == "" && it.Annotations == nil && it.Size == 0:
		// A listed entry whose text the inventory found plain while
		// validating it: copied as it is, between quotes.
		b.body = append(b.body, `{"uri":"`...)
		b.body = append(b.body, it.URI...)
		b.body = append(b.body, `","name":"`...)
		b.body = append(b.body, it.Name...)
		if it.MIMEType != "" {
			b.body = append(b.body, `","mimeType":"`...)
			b.body = append(b.body, it.MIMEType...)
		}
		b.body = append(b.body, '"', '}')
	default:
		b.body = mcpwire.AppendItem(b.body, it)
	}
	return b.accept(mark)
}

// encodedStatics is the inventory's static resources encoded once, end to
// end in one buffer (no allocation of its own per static): a page copies
// them (inventory.Item.Static says which one an item is).
type encodedStatics struct {
	body    []byte
	ends    []int // ends[i]: where static i+1 ends in body
	longest int   // the longest item's bytes
}

// item returns the encoding of static n (Item.Static: 1 for the first).
func (s *encodedStatics) item(n int) []byte {
	start := 0
	if n > 1 {
		start = s.ends[n-2]
	}
	return s.body[start:s.ends[n-1]]
}

func (e *Endpoint) encodeStatics() {
	items := e.inv.StaticItems()
	s := &encodedStatics{ends: make([]int, len(items))}
	size := 0
	for i := range items {
		size += len(`{"uri":"","name":"","mimeType":""}`) + len(items[i].URI) + len(items[i].Name) + len(items[i].MIMEType)
	}
	s.body = make([]byte, 0, size)
	for i := range items { // in order: Item.Static is i+1
		start := len(s.body)
		s.body = mcpwire.AppendItem(s.body, &items[i])
		s.ends[i] = len(s.body)
		s.longest = max(s.longest, len(s.body)-start)
	}
	e.statics = s
}

func (b *respBuf) addTemplate(it *inventory.TemplateItem) bool {
	mark := len(b.body)
	if b.items > 0 {
		b.body = append(b.body, ',')
	}
	b.body = mcpwire.AppendTemplateItem(b.body, it)
	return b.accept(mark)
}

// accept keeps the item just encoded when the body is still within its
// room, or drops it.
func (b *respBuf) accept(mark int) bool {
	if b.page.Add(len(b.body)) != nil {
		b.body = b.body[:mark]
		return false
	}
	b.items++
	return true
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
	item = max(item, e.statics.longest) // encodeStatics ran
	for _, it := range e.inv.TemplateItems() {
		item = max(item, len(mcpwire.AppendTemplateItem(nil, &it)))
	}
	head := len(`{"jsonrpc":"2.0","id":,"result":`) + max(e.limits.MaxIDBytes, jsonrpc.DefaultMaxIDBytes)
	return head + len(`{"resourceTemplates":[`) + item + e.pageReserve(e.metaPrivate)
}
