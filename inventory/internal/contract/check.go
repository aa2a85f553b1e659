// Package contract checks what list callbacks return against the list
// contract (inventory's package documentation): keys, URIs, names, MIME
// types and whole pages, with lengths counted in UTF-16 code units.
//
// The package is internal: inventory is its one user. It names the rules
// a value breaks by [Rule]; inventory maps them to its public Rule
// strings.
package contract

import (
	"hash/maphash"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/ascii"
	"github.com/mcpkit/mcpkit/internal/budget"
	"github.com/mcpkit/mcpkit/internal/display"
	"github.com/mcpkit/mcpkit/internal/httpheader"
	"github.com/mcpkit/mcpkit/inventory/internal/uritemplate"
)

// Rule is a rule of the list contract a value breaks; OK is none.
type Rule uint8

// The rules, as inventory's Rule constants name them.
const (
	OK             Rule = iota
	TooManyEntries      // more than Limit entries
	HasMoreEmpty        // HasMore with no entry
	KeyLength           // key empty or over MaxKeyBytes
	KeyCharset          // key byte outside 0x21–0x7E
	KeyOrder            // key not greater than the previous one
	KeyAfter            // first key not greater than After
	URIEmpty            // empty URI
	URILength           // URI over MaxURILen
	URIMatch            // URI does not match the template
	URIDuplicate        // URI twice in one page
	NameEmpty           // empty name
	NameLength          // name over MaxNameLen
	NameInvalid         // name not UTF-8, or with a character of the name rule
	MIMELength          // MIME type over MaxMIMELen
	MIMESyntax          // MIME type not type/subtype[; params]
	NumRules            // the number of rules, OK included
)

// maxLimit is the largest page a list callback is asked for.
const maxLimit = budget.MaxItems

// Key returns the rule a key breaks, or OK.
func Key(k string) Rule {
	if len(k) == 0 || len(k) > MaxKeyBytes {
		return KeyLength
	}
	if !ascii.KeyChars(k) {
		return KeyCharset
	}
	return OK
}

// EntryURI returns the rule a listed URI breaks, or OK: with a nil t, the
// URI is only checked for length and characters (PlainURI), not matched.
// general: with the general matcher only (the benchmark's baseline).
func EntryURI(t *uritemplate.Template, u string, general bool) Rule {
	switch {
	case u == "":
		return URIEmpty
	case Longer(u, MaxURILen):
		return URILength
	case t != nil && !general && !t.Matches(u), t != nil && general && !t.MatchesGeneral(u):
		return URIMatch
	case t == nil && !PlainURI(u):
		return URIMatch
	}
	return OK
}

// PlainURI reports whether u has no space, control character or invalid
// UTF-8: the least a URI (or IRI) needs.
func PlainURI(u string) bool {
	for i := 0; i < len(u); i++ {
		if c := u[i]; c <= 0x20 || c == 0x7f {
			return false
		}
	}
	return utf8.ValidString(u)
}

// EscapeName returns the rule the name *s breaks, or OK. With escape, a
// name whose characters alone break the rule is replaced by its escaped
// form first (display.Defuse: U+FFFD for each refused character or byte
// that is not UTF-8), so that a stored title never makes a list fail.
func EscapeName(s *string, escape bool) Rule {
	rule := Name(*s)
	if rule == NameInvalid && escape {
		*s = display.Defuse(*s)
		rule = Name(*s)
	}
	return rule
}

// Name returns the rule a name breaks, or OK.
func Name(s string) Rule {
	switch {
	case s == "":
		return NameEmpty
	case Longer(s, MaxNameLen):
		return NameLength
	case !display.Name(s):
		return NameInvalid
	}
	return OK
}

// MIME returns the rule a MIME type breaks, or OK. Empty is allowed.
func MIME(s string) Rule {
	switch {
	case s == "":
		return OK
	case Longer(s, MaxMIMELen):
		return MIMELength
	case !httpheader.ValidMediaType(s):
		return MIMESyntax
	}
	return OK
}

// Page checks a callback's page against the contract: the page as a
// whole (Start), then each entry in order (Entry), so that an entry is
// validated just before it is added to the page. A duplicate URI is found
// as soon as it appears: while the URIs come in strictly increasing order
// (as they do when they are made from the keys, or from ids in key
// order), each is compared with the one before only, which no earlier
// URI can equal; from the first URI out of order on, the URIs are kept in
// a small open-addressing set (up to maxLimit entries; a larger page,
// which Start refuses for the inventory's own requests, only reaches
// ValidatePage), filled with the URIs before it.
//
// The zero Page is ready for Start, and a Page allocates nothing but the
// set of a page over maxLimit entries.
type Page struct {
	// Escape: a name that breaks only the character rule (display.Name)
	// is escaped into Name rather than failing the page (the runtime's
	// check; ValidatePage reports it).
	Escape bool
	// General: use the general paths only (the benchmark's baseline).
	General bool

	// Name is the last entry's name to show; Plain says the entry is
	// plain (see inventory's Item.Plain), the empty MIME type counting as
	// plain.
	Name  string
	Plain bool

	t      *uritemplate.Template
	n      int    // entries of the page
	prev   string // the last key
	okMIME string // the last MIME type found valid: pages mostly repeat one
	// okMIMEPlain says okMIME is plain.
	okMIMEPlain bool
	skip        int // the template's leading literal: equal in every URI
	// sorted: the URIs so far are strictly increasing (after skip), the
	// last being last: the set is empty.
	sorted bool
	last   string

	slots  [dupSlots]uint8 // entry index + 1; 0 = empty
	hashes [maxLimit]uint64
	big    map[string]struct{} // pages over maxLimit entries
}

const dupSlots = 256 // > 2 × maxLimit: short probe sequences

// uriSeed keys the hashes of the duplicate check.
var uriSeed = maphash.MakeSeed()

// Start checks a page of entries entries against limit (ListRequest.Limit)
// and hasMore, and prepares the entry checks: keys after after, URIs of t.
func (c *Page) Start(t *uritemplate.Template, after string, limit, entries int, hasMore bool) Rule {
	c.t, c.n, c.prev, c.okMIME, c.okMIMEPlain = t, entries, after, "", true
	c.skip = t.Prefix()
	c.slots = [dupSlots]uint8{}
	c.big = nil
	c.sorted, c.last = !c.General, ""
	switch {
	case entries > limit:
		return TooManyEntries
	case hasMore && entries == 0:
		return HasMoreEmpty
	}
	return OK
}

// Entry is a listed entry, as inventory.Entry (the same fields, so that a
// pointer to one converts to a pointer to the other).
type Entry struct {
	Key, URI, Name, MIMEType string
}

// Entry checks entry i (0, 1, … in order) of the page, e, after the
// entries before it, and sets Name and Plain. uriAt(j) is the URI of
// entry j ≤ i (the duplicate check reads earlier ones).
func (c *Page) Entry(i int, e *Entry, uriAt func(j int) string) Rule {
	key, uri, name, mime := e.Key, e.URI, e.Name, e.MIMEType
	if rule := Key(key); rule != OK {
		return rule
	}
	if key <= c.prev {
		if i == 0 {
			return KeyAfter
		}
		return KeyOrder
	}
	c.prev = key
	if rule := EntryURI(c.t, uri, c.General); rule != OK {
		return rule
	}
	c.Plain = c.t != nil && c.t.Plain() // a URI that matched such a template is made of URI characters
	c.Name = name
	if name != "" && len(name) <= MaxNameLen && ascii.JSONPlain(name) { // plain ASCII within the limit: valid
	} else if rule := EscapeName(&c.Name, c.Escape); rule != OK {
		return rule
	} else {
		c.Plain = false
	}
	if mime != c.okMIME {
		if rule := MIME(mime); rule != OK {
			return rule
		}
		c.okMIME, c.okMIMEPlain = mime, ascii.JSONPlain(mime)
	}
	c.Plain = c.Plain && c.okMIMEPlain
	if c.Seen(i, uri, uriAt) {
		return URIDuplicate
	}
	return OK
}

// Seen reports whether an earlier entry had entry i's URI, uri (asked
// for entries 0..i-1 before; uriAt(j) is entry j's URI, read only once
// the URIs come out of order). Every URI starts with skip bytes that are
// the same in all (the template's leading literal, which they matched):
// only the rest is compared.
func (c *Page) Seen(i int, uri string, uriAt func(j int) string) bool {
	if !c.sorted {
		return c.add(i, uriAt)
	}
	u := uri
	if c.skip <= len(u) {
		u = u[c.skip:]
	}
	switch {
	case i == 0 || u > c.last:
		c.last = u // greater than every URI before it
		return false
	case u == c.last:
		return true
	}
	// Out of order: the set takes over, with the URIs before i (distinct).
	c.sorted = false
	for j := range i {
		c.add(j, uriAt)
	}
	return c.add(i, uriAt)
}

// add adds entry i's URI to the set, and reports whether it was there.
func (c *Page) add(i int, uriAt func(j int) string) bool {
	if c.n > maxLimit {
		if c.big == nil {
			c.big = make(map[string]struct{}, c.n)
		}
		u := uriAt(i)
		if _, dup := c.big[u]; dup {
			return true
		}
		c.big[u] = struct{}{}
		return false
	}
	u := uriAt(i)
	if c.skip <= len(u) { // always, for a URI that matched the template
		u = u[c.skip:]
	}
	h := maphash.String(uriSeed, u)
	c.hashes[i] = h
	for j := h % dupSlots; ; j = (j + 1) % dupSlots {
		k := int(c.slots[j])
		if k == 0 {
			c.slots[j] = uint8(i + 1)
			return false
		}
		if c.hashes[k-1] == h {
			if prev := uriAt(k - 1); len(prev) >= c.skip && prev[c.skip:] == u {
				return true
			}
		}
	}
}
