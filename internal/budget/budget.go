// Package budget owns the budget of a list page: how many items it may
// hold and how many bytes its response may take. The inventory counts
// items; the transport counts bytes; both ask this package.
//
// A page holds at most its item budget (DefaultItems, at most MaxItems),
// static and listed entries together. Its whole response — the JSON-RPC
// envelope, the result's members, the longest next cursor and the
// result's metadata — stays within the tighter of two byte limits: the
// page limit (MaxPageBytes) and the limit of any result
// (MaxResultBytes). An item that cannot fit an empty page is an error
// (ErrTooLarge), never a page without items that would loop forever.
package budget

import (
	"errors"
	"fmt"
)

// Item budgets of a page.
const (
	// DefaultItems is the item budget of a page when none is set.
	DefaultItems = 50
	// MaxItems is the largest item budget of a page.
	MaxItems = 100
)

// Errors of Page.Add.
var (
	// ErrFull: the page has taken its last item; the item offered starts
	// the next page.
	ErrFull = errors.New("budget: page full")
	// ErrTooLarge: the item cannot fit an empty page, so no page can hold
	// it.
	ErrTooLarge = errors.New("budget: item cannot fit an empty page")
)

// Items returns the item budget n names: 0 means DefaultItems; an error
// for n outside 1..MaxItems.
func Items(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultItems, nil
	case n < 1 || n > MaxItems:
		return 0, fmt.Errorf("budget: a page holds 1..%d items, got %d", MaxItems, n)
	}
	return n, nil
}

// Bytes returns the byte limit of a page's whole response: the tighter
// of pageBytes (a page's limit) and resultBytes (any result's), a zero
// one meaning none; 0 when both are zero. It returns an error for a
// negative limit.
func Bytes(pageBytes, resultBytes int) (int, error) {
	if pageBytes < 0 || resultBytes < 0 {
		return 0, errors.New("budget: a byte limit must not be negative")
	}
	switch {
	case pageBytes == 0:
		return resultBytes, nil
	case resultBytes == 0:
		return pageBytes, nil
	}
	return min(pageBytes, resultBytes), nil
}

// Reserve returns the bytes a page's result keeps after its items: `]`,
// the longest `,"nextCursor":"…"` (cursors of at most maxCursor bytes,
// written as they are), the result's metadata (`,` and meta bytes, when
// meta > 0) and the two braces that close the result and the envelope.
func Reserve(maxCursor, meta int) int {
	n := len(`]`) + len(`,"nextCursor":""`) + max(maxCursor, 0) + len(`}}`)
	if meta > 0 {
		n += 1 + meta
	}
	return n
}

// Page is the budget of one page being filled. Its zero value takes no
// item; make one with NewPage.
type Page struct {
	room  int // items the page may still take
	items int // items taken
	end   int // the most bytes the response may have when its items end
}

// NewPage returns the budget of a page of at most items items whose
// response may take limit bytes, reserve of them kept for what follows
// the items (see Reserve). limit 0 means no byte limit.
func NewPage(items, limit, reserve int) Page {
	p := Page{room: max(items, 0), end: limit - reserve}
	if limit == 0 {
		p.end = int(^uint(0) >> 1)
	}
	return p
}

// Add offers an item after which the response would be end bytes long
// (end ≤ 0: the offer is about the count only): nil when the page takes
// it, ErrFull when the page is full (by count or bytes: the item starts
// the next page), ErrTooLarge when it does not fit the bytes of an empty
// page.
func (p *Page) Add(end int) error {
	if p.room == 0 {
		return ErrFull
	}
	if end > p.end {
		if p.items == 0 {
			return ErrTooLarge
		}
		return ErrFull
	}
	p.room--
	p.items++
	return nil
}

// Refuse offers an item that the byte budget, decided elsewhere (the
// transport's), refused: ErrTooLarge on an empty page, else ErrFull.
func (p *Page) Refuse() error {
	if p.room > 0 && p.items == 0 {
		return ErrTooLarge
	}
	return ErrFull
}

// Items returns how many items the page took.
func (p *Page) Items() int { return p.items }

// Room returns how many more items the page may take.
func (p *Page) Room() int { return p.room }
