package budget

import (
	"errors"
	"fmt"
)

// ErrFull is returned by Add when the item would break a limit of a page
// that already holds items. The item belongs on the next page.
var ErrFull = errors.New("budget: page full")

// ErrTooSmall is returned by New when even an empty page with a full
// trailer does not fit in MaxBytes.
var ErrTooSmall = errors.New("budget: byte limit too small for an empty page")

// ItemTooLargeError is returned by Add for an item that does not fit even in
// an empty page.
type ItemTooLargeError struct {
	Size int // bytes of the item
	Room int // bytes an item may take in an empty page
}

func (e *ItemTooLargeError) Error() string {
	return fmt.Sprintf("budget: item of %d bytes cannot fit in a page with room for %d", e.Size, e.Room)
}

// Limits bounds a page.
type Limits struct {
	// MaxItems is the largest number of items. It must be at least 1.
	MaxItems int
	// MaxBytes is the largest size of the whole page in bytes: head, array,
	// trailer and tail. It must be at least 1.
	MaxBytes int
	// Reserve is the number of bytes kept for the trailer given to Finish.
	Reserve int
}

// initialSize is the capacity New starts with: a typical 50-entry page
// fits without growing.
const initialSize = 16 << 10

// Page assembles one page. It is not safe for concurrent use.
type Page struct {
	buf   []byte // head ‖ "[" ‖ items so far
	tail  []byte
	n     int
	lim   Limits
	fixed int // bytes of everything but the items: head, brackets, reserve, tail
}

// New starts a page with the given head and tail. It copies head but keeps
// tail until Finish; the caller must not change tail meanwhile. It returns
// ErrTooSmall if an empty page with a full trailer does not fit, and an
// error for limits out of range.
func New(head, tail []byte, lim Limits) (*Page, error) {
	return NewInto(nil, head, tail, lim)
}

// NewInto is like New but assembles the page in dst's storage (from
// dst[:0]), so a caller can recycle page buffers, for example with a
// sync.Pool. Finish returns a slice of that storage when it was large
// enough.
func NewInto(dst, head, tail []byte, lim Limits) (*Page, error) {
	p := new(Page)
	if err := p.Reset(dst, head, tail, lim); err != nil {
		return nil, err
	}
	return p, nil
}

// Reset starts a new page in p, as NewInto does, so that a caller can keep
// one Page value (in a pooled scratch struct, say) for many pages. On error
// p is left empty and unusable until the next successful Reset.
func (p *Page) Reset(dst, head, tail []byte, lim Limits) error {
	*p = Page{}
	if lim.MaxItems < 1 || lim.MaxBytes < 1 || lim.Reserve < 0 {
		return fmt.Errorf("budget: invalid limits %+v", lim)
	}
	fixed := len(head) + len("[]") + lim.Reserve + len(tail)
	if fixed > lim.MaxBytes {
		return ErrTooSmall
	}
	buf := dst[:0]
	if cap(buf) == 0 {
		buf = make([]byte, 0, min(lim.MaxBytes, initialSize))
	}
	buf = append(buf, head...)
	buf = append(buf, '[')
	*p = Page{buf: buf, tail: tail, lim: lim, fixed: fixed}
	return nil
}

// Add appends an encoded item if it fits under both limits. It returns
// ErrFull if the page already holds items and this one would break a limit,
// and an *ItemTooLargeError if the page is empty and the item cannot fit at
// all. On error the page is unchanged.
func (p *Page) Add(item []byte) error {
	if p.n == p.lim.MaxItems {
		return ErrFull
	}
	need := len(item)
	if p.n > 0 {
		need++ // the comma
	}
	if p.Size(p.lim.Reserve)+need > p.lim.MaxBytes {
		if p.n == 0 {
			return &ItemTooLargeError{Size: len(item), Room: p.lim.MaxBytes - p.fixed}
		}
		return ErrFull
	}
	if p.n > 0 {
		p.buf = append(p.buf, ',')
	}
	p.buf = append(p.buf, item...)
	p.n++
	return nil
}

// Len returns the number of items in the page.
func (p *Page) Len() int { return p.n }

// Room returns how many more items the item limit allows.
func (p *Page) Room() int { return p.lim.MaxItems - p.n }

// Size returns the exact length Finish will produce with a trailer of
// trailerLen bytes.
func (p *Page) Size(trailerLen int) int {
	return len(p.buf) + len("]") + trailerLen + len(p.tail)
}

// Finish closes the array, appends trailer and tail, and returns the page.
// The trailer must not be longer than Limits.Reserve. The Page must not be
// used afterwards.
func (p *Page) Finish(trailer []byte) ([]byte, error) {
	if len(trailer) > p.lim.Reserve {
		return nil, fmt.Errorf("budget: trailer of %d bytes exceeds the reserve of %d", len(trailer), p.lim.Reserve)
	}
	out := append(p.buf, ']')
	out = append(out, trailer...)
	out = append(out, p.tail...)
	p.buf = nil
	return out, nil
}
