package inventory

import "github.com/mcpkit/mcpkit/internal/budget"

// Item is one resource of a resources/list page, in Go values: what a
// client is told about it. A listed entry has URI, Name and MIMEType (its
// own, or its template's); a static resource has every field it was
// registered with. The transport encodes it.
type Item struct {
	URI, Name, Title, Description, MIMEType string
	// Size is the size of the raw contents in bytes; 0 when unknown.
	Size        int64
	Annotations *Annotations
	// Plain reports that URI, Name and MIMEType are printable ASCII without
	// a quote or a backslash, as validating the item found: text a
	// transport may copy as it is, without a scan of its own.
	Plain bool
	// Static is, for a static resource, its position among the resources
	// given to New, plus one; 0 for a listed entry. The item of a static
	// resource is the same on every page, so a transport may keep what it
	// derives from it (its encoding) by this number.
	Static int
}

// TemplateItem is one template of a resources/templates/list page.
type TemplateItem struct {
	Name, Title, Description, URITemplate, MIMEType string
}

// filler fills a page: at most its item budget, each item accepted by fit
// (the transport's byte budget).
type filler[T any] struct {
	fit  func(*T) bool // nil: every item fits
	page budget.Page   // the item count; the bytes are fit's
}

func newFiller[T any](fit func(*T) bool, items int) filler[T] {
	return filler[T]{fit: fit, page: budget.NewPage(items, 0, 0)}
}

// room returns how many more items the page may take.
func (f *filler[T]) room() int { return f.page.Room() }

// add offers an item: errFull when the page is full (by count, or fit
// refused it), errTooLarge when fit refused it on an empty page.
func (f *filler[T]) add(it *T) error {
	if f.page.Room() == 0 {
		return errFull
	}
	if f.fit != nil && !f.fit(it) {
		return f.page.Refuse()
	}
	return f.page.Add(0)
}
