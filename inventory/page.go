package inventory

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

// filler fills a page: at most room items, each accepted by fit.
type filler[T any] struct {
	fit   func(*T) bool // nil: every item fits
	room  int           // items the page may still take
	items int           // items taken
}

// add offers an item: errFull when the page is full (by count, or fit
// refused it), errTooLarge when fit refused it on an empty page.
func (f *filler[T]) add(it *T) error {
	if f.room == 0 {
		return errFull
	}
	if f.fit != nil && !f.fit(it) {
		if f.items == 0 {
			return errTooLarge
		}
		return errFull
	}
	f.room--
	f.items++
	return nil
}
