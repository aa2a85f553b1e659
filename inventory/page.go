package inventory

// PageRequest asks for one page of a paginated method ([Inventory.List],
// [Inventory.Templates]).
type PageRequest struct {
	// Cursor is "" for the first page, else the NextCursor of an earlier
	// page of the same method, given to the same caller.
	Cursor string

	// Reserve is the number of bytes the transport adds to the result
	// object: the JSON-RPC envelope around it, and result members of its
	// own (such as _meta) with their separating comma. The page is filled
	// so that the result object plus Reserve stays within the inventory's
	// byte limit (Options.MaxPageBytes and MaxResultBytes). Zero suits a
	// caller that uses the page as a Go value.
	Reserve int
}

// Item is one resource of a resources/list page: the metadata a client
// sees, and its encoding as an MCP Resource object.
type Item struct {
	// URI, Name and MIMEType are the resource's metadata; MIMEType is the
	// entry's own or, when it left it empty, its template's.
	URI, Name, MIMEType string

	// JSON is the MCP Resource object as the client receives it (static
	// resources also carry their title, description, annotations and
	// size). It aliases the page's or the registry's storage: copy it to
	// keep it beyond the next use of the page.
	JSON []byte
}

// ResourcePage is one page of resources/list. The zero value is an empty
// page; [Inventory.List] fills it, reusing its storage, so that a
// transport can recycle pages.
type ResourcePage struct {
	// Resources are the items in listing order.
	Resources []Item
	// NextCursor continues the traversal; "" on the last page.
	NextCursor string

	buf   []byte // encoded entries, back to back, comma-separated
	spans []span // for each listed entry, its item and its bytes in buf

	// runs are the items' JSON in order, as runs of bytes that are
	// contiguous, commas included: consecutive statics in statics (the
	// registry's staticsJSON), consecutive entries in buf.
	runs    []run
	statics []byte
}

// run is a contiguous run of items: bytes start:end of the page's statics
// (static) or of its buf.
type run struct {
	static     bool
	start, end int
}

// JSONLen returns the length of what AppendJSON appends.
func (p *ResourcePage) JSONLen() int {
	n := max(len(p.runs)-1, 0)
	for _, r := range p.runs {
		n += r.end - r.start
	}
	return n
}

// AppendJSON appends the items of the page as Inventory.List filled it,
// comma-separated (the elements of a JSON array, without the brackets),
// to dst and returns the extended slice: the same bytes as the items'
// JSON joined by commas, copied in as few runs as possible. It does not
// see changes made to Resources after List.
func (p *ResourcePage) AppendJSON(dst []byte) []byte {
	for i, r := range p.runs {
		if i > 0 {
			dst = append(dst, ',')
		}
		if r.static {
			dst = append(dst, p.statics[r.start:r.end]...)
		} else {
			dst = append(dst, p.buf[r.start:r.end]...)
		}
	}
	return dst
}

// TemplateItem is one template of a resources/templates/list page.
type TemplateItem struct {
	Name, URITemplate string
	// JSON is the MCP ResourceTemplate object; it aliases the registry's
	// storage and must not be modified.
	JSON []byte
}

// TemplatePage is one page of resources/templates/list. The zero value is
// an empty page; [Inventory.Templates] fills it, reusing its storage.
type TemplatePage struct {
	Templates  []TemplateItem
	NextCursor string
}

// JSONLen returns the length of what AppendJSON appends.
func (p *TemplatePage) JSONLen() int {
	n := max(len(p.Templates)-1, 0)
	for i := range p.Templates {
		n += len(p.Templates[i].JSON)
	}
	return n
}

// AppendJSON appends the templates' JSON, comma-separated (the elements
// of a JSON array, without the brackets), to dst and returns the extended
// slice, as ResourcePage.AppendJSON does for resources.
func (p *TemplatePage) AppendJSON(dst []byte) []byte {
	for i := range p.Templates {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, p.Templates[i].JSON...)
	}
	return dst
}

type span struct{ item, start, end int }

// reset empties the page, keeping its storage.
func (p *ResourcePage) reset() {
	clear(p.Resources) // drop references to the previous page's strings
	p.Resources, p.NextCursor = p.Resources[:0], ""
	p.buf, p.spans, p.runs, p.statics = p.buf[:0], p.spans[:0], p.runs[:0], nil
}

// filler fills a ResourcePage under the item and byte limits, counting the
// exact size of the result object as the transport will send it.
type filler struct {
	page  *ResourcePage
	max   int // bytes the result object may take, cursor reserve included
	size  int // bytes of the result object so far, with the cursor reserve
	room  int // items the page may still take
	items int // items taken, pending statics included

	pendStart, pendEnd int // statics taken but not yet appended (flushStatics)
}

func (inv *Inventory) newFiller(page *ResourcePage, reserve int) (filler, bool) {
	f := filler{
		page: page,
		max:  inv.maxBytes - reserve,
		size: len(`{"resources":[]}`) + inv.listReserve,
		room: inv.pageSize,
	}
	return f, reserve >= 0 && f.size <= f.max
}

// addStatic adds static i of inv, whose item and encoding live in the
// registry. Consecutive statics are appended to the page together, by
// flushStatics, which must run before anything else is added.
func (f *filler) addStatic(inv *Inventory, i int) error {
	if err := f.fit(len(inv.statics[i].enc)); err != nil {
		return err
	}
	if f.pendEnd != i || f.pendEnd == f.pendStart {
		f.flushStatics(inv)
		f.pendStart = i
	}
	f.pendEnd = i + 1
	return nil
}

// flushStatics appends the pending statics to the page: their items, and
// one run of their joined encodings.
func (f *filler) flushStatics(inv *Inventory) {
	if f.pendEnd == f.pendStart {
		return
	}
	p := f.page
	p.Resources = append(p.Resources, inv.staticItems[f.pendStart:f.pendEnd]...)
	first, last := &inv.statics[f.pendStart], &inv.statics[f.pendEnd-1]
	p.statics = inv.staticsJSON
	p.runs = append(p.runs, run{static: true, start: first.start, end: last.start + len(last.enc)})
	f.pendStart = f.pendEnd
}

// addEntry encodes an entry of source src, validated against its
// template, into the page and adds it; plainName says its name is
// jsonPlain.
func (f *filler) addEntry(e *Entry, src *registered, plainName bool) error {
	p := f.page
	before := len(p.buf)
	n := len(p.runs)
	extend := n > 0 && !p.runs[n-1].static // entries so far end the page: one run
	if extend {
		p.buf = append(p.buf, ',')
	}
	start := len(p.buf)
	mime := src.tmpl.MIMEType
	if e.MIMEType != "" {
		mime = e.MIMEType
	}
	p.buf = appendEntry(p.buf, e, src, plainName)
	if err := f.fit(len(p.buf) - start); err != nil {
		p.buf = p.buf[:before]
		return err
	}
	p.spans = append(p.spans, span{len(p.Resources), start, len(p.buf)})
	p.Resources = append(p.Resources, Item{URI: e.URI, Name: e.Name, MIMEType: mime})
	if extend {
		p.runs[n-1].end = len(p.buf)
	} else {
		p.runs = append(p.runs, run{start: start, end: len(p.buf)})
	}
	return nil
}

// fit accounts for an item of n bytes: errFull when the page holds items
// and this one would break a limit, errTooLarge when it cannot fit even in
// an empty page.
func (f *filler) fit(n int) error {
	if f.room == 0 {
		return errFull
	}
	need := n
	if f.items > 0 {
		need++ // the comma
	}
	if f.size+need > f.max {
		if f.items == 0 {
			return errTooLarge
		}
		return errFull
	}
	f.size += need
	f.room--
	f.items++
	return nil
}

// finish points every entry's JSON at its final bytes (buf may have moved
// while it grew).
func (f *filler) finish() {
	p := f.page
	for _, s := range p.spans {
		p.Resources[s.item].JSON = p.buf[s.start:s.end:s.end]
	}
}
