package mcpwire

import (
	"github.com/mcpkit/mcpkit/internal/budget"
	"github.com/mcpkit/mcpkit/inventory"
)

// Page is a list page being encoded: Body holds the response so far, and
// each item offered is encoded into it while the page's room allows
// (AddItem and AddTemplate are the inventory's fit functions).
type Page struct {
	Body    []byte
	Items   int         // the items encoded
	room    budget.Page // the page's byte room, its trailer kept aside
	statics *Statics
}

// Start begins a page: head ‖ {"member":[ in body, and the room the page's
// items may take, keeping reserve bytes for what follows them.
func (p *Page) Start(head []byte, member string, limit, reserve int, statics *Statics) {
	p.Body = append(append(append(append(p.Body[:0], head...), `{"`...), member...), `":[`...)
	p.room, p.Items, p.statics = budget.NewPage(budget.MaxItems, limit, reserve), 0, statics
}

// AddItem encodes it into the page when it still fits (the inventory's
// fit function for resources).
func (p *Page) AddItem(it *inventory.Item) bool {
	mark := len(p.Body)
	if p.Items > 0 {
		p.Body = append(p.Body, ',')
	}
	switch {
	case p.statics != nil && it.Static > 0 && it.Static <= len(p.statics.ends):
		p.Body = append(p.Body, p.statics.item(it.Static)...) // encoded once, at construction
	case it.Plain && it.Title == "" && it.Description == "" && it.Annotations == nil && it.Size == 0:
		// A listed entry whose text the inventory found plain while
		// validating it: copied as it is, between quotes.
		p.Body = append(p.Body, `{"uri":"`...)
		p.Body = append(p.Body, it.URI...)
		p.Body = append(p.Body, `","name":"`...)
		p.Body = append(p.Body, it.Name...)
		if it.MIMEType != "" {
			p.Body = append(p.Body, `","mimeType":"`...)
			p.Body = append(p.Body, it.MIMEType...)
		}
		p.Body = append(p.Body, '"', '}')
	default:
		p.Body = AppendItem(p.Body, it)
	}
	return p.accept(mark)
}

// AddTemplate encodes it into the page when it still fits.
func (p *Page) AddTemplate(it *inventory.TemplateItem) bool {
	mark := len(p.Body)
	if p.Items > 0 {
		p.Body = append(p.Body, ',')
	}
	p.Body = AppendTemplateItem(p.Body, it)
	return p.accept(mark)
}

// accept keeps the item just encoded when the body is still within its
// room, or drops it.
func (p *Page) accept(mark int) bool {
	if p.room.Add(len(p.Body)) != nil {
		p.Body = p.Body[:mark]
		return false
	}
	p.Items++
	return true
}

// Statics is the inventory's static resources encoded once, end to
// end in one buffer (no allocation of its own per static): a page copies
// them (inventory.Item.Static says which one an item is).
type Statics struct {
	body    []byte
	ends    []int // ends[i]: where static i+1 ends in body
	Longest int   // the longest item's bytes
}

// item returns the encoding of static n (Item.Static: 1 for the first).
func (s *Statics) item(n int) []byte {
	start := 0
	if n > 1 {
		start = s.ends[n-2]
	}
	return s.body[start:s.ends[n-1]]
}

// EncodeStatics encodes the inventory's static resources (StaticItems).
func EncodeStatics(items []inventory.Item) *Statics {
	s := &Statics{ends: make([]int, len(items))}
	size := 0
	for i := range items {
		size += len(`{"uri":"","name":"","mimeType":""}`) + len(items[i].URI) + len(items[i].Name) + len(items[i].MIMEType)
	}
	s.body = make([]byte, 0, size)
	for i := range items { // in order: Item.Static is i+1
		start := len(s.body)
		s.body = AppendItem(s.body, &items[i])
		s.ends[i] = len(s.body)
		s.Longest = max(s.Longest, len(s.body)-start)
	}
	return s
}
