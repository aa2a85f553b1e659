package inventory

import (
	"fmt"
	"hash/maphash"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/ascii"
	"github.com/mcpkit/mcpkit/internal/budget"
	"github.com/mcpkit/mcpkit/internal/display"
	"github.com/mcpkit/mcpkit/internal/httpheader"
	"github.com/mcpkit/mcpkit/inventory/internal/uritemplate"
)

// Limits of the list contract.
const (
	maxKeyBytes = 256             // longest entry key (ASCII)
	MaxLimit    = budget.MaxItems // largest page size and ListRequest.Limit
)

// ValidatePage checks one page a list callback returned for req against
// the contract, and returns a [*ContractError] naming the first broken
// rule, or nil. With a nil tmpl the URIs are only checked for length and
// characters, not matched. Inventory runs the same checks on every page
// (entry by entry, as it adds them to the page); inventorytest runs them
// on whole traversals.
func ValidatePage(tmpl *Template, req ListRequest, p Page) error {
	var t *uritemplate.Template
	name := ""
	if tmpl != nil {
		name = tmpl.Name
		var err error
		if t, err = uritemplate.Parse(tmpl.URITemplate); err != nil {
			return fmt.Errorf("inventory: template %q: %w", tmpl.Name, err)
		}
	}
	var c pageCheck
	if ce := c.start(name, t, req, p); ce != nil {
		return ce
	}
	for i := range p.Entries {
		if ce := c.entry(i); ce != nil {
			return ce
		}
	}
	return nil
}

// pageCheck checks a callback's page against the contract: the page as a
// whole (start), then each entry in order (entry), so that an entry is
// validated just before it is added to the page. A duplicate URI is found
// as soon as it appears: while the URIs come in strictly increasing order
// (as they do when they are made from the keys, or from ids in key
// order), each is compared with the one before only, which no earlier
// URI can equal; from the first URI out of order on, the URIs are kept in
// a small open-addressing set (up to MaxLimit entries; a larger page,
// which start refuses for the inventory's own requests, only reaches
// ValidatePage), filled with the URIs before it.
type pageCheck struct {
	source  string
	t       *uritemplate.Template
	entries []Entry
	prev    string // the last key
	okMIME  string // the last MIME type found valid: pages mostly repeat one
	// okMIMEPlain says okMIME is plain; plain, that the entry just checked
	// is (see Item.Plain), the empty MIME type counting as plain.
	okMIMEPlain, plain bool
	// escape: a name that breaks only the character rule (display.Name)
	// is escaped into name rather than failing the page (the runtime's
	// check; ValidatePage reports it). name: the entry's name to show.
	escape  bool
	name    string
	skip    int  // the template's leading literal: equal in every URI
	general bool // use the general paths only (the benchmark's baseline)
	// sorted: the URIs so far are strictly increasing (after skip), the
	// last being last: the set is empty.
	sorted bool
	last   string

	slots  [dupSlots]uint8 // entry index + 1; 0 = empty
	hashes [MaxLimit]uint64
	big    map[string]struct{} // pages over MaxLimit entries
}

const dupSlots = 256 // > 2 × MaxLimit: short probe sequences

// uriSeed keys the hashes of the duplicate check.
var uriSeed = maphash.MakeSeed()

// start checks the page as a whole and prepares the entry checks.
func (c *pageCheck) start(source string, t *uritemplate.Template, req ListRequest, p Page) *ContractError {
	c.source, c.t, c.entries, c.prev, c.okMIME, c.okMIMEPlain = source, t, p.Entries, req.After, "", true
	c.skip = t.Prefix()
	c.slots = [dupSlots]uint8{}
	c.big = nil
	c.sorted, c.last = !c.general, ""
	switch {
	case len(p.Entries) > req.Limit:
		return c.fail(RuleTooManyEntries, -1)
	case p.HasMore && len(p.Entries) == 0:
		return c.fail(RuleHasMoreEmpty, -1)
	}
	return nil
}

func (c *pageCheck) fail(rule Rule, entry int) *ContractError {
	return &ContractError{Source: c.source, Rule: rule, Entry: entry}
}

// entry checks entry i, after the entries before it.
func (c *pageCheck) entry(i int) *ContractError {
	e := &c.entries[i]
	if rule := checkKey(e.Key); rule != "" {
		return c.fail(rule, i)
	}
	if e.Key <= c.prev {
		if i == 0 {
			return c.fail(RuleKeyAfter, i)
		}
		return c.fail(RuleKeyOrder, i)
	}
	c.prev = e.Key
	if rule := checkEntryURI(c.t, e.URI, c.general); rule != "" {
		return c.fail(rule, i)
	}
	c.plain = c.t != nil && c.t.Plain() // a URI that matched such a template is made of URI characters
	c.name = e.Name
	if e.Name != "" && len(e.Name) <= maxNameLen && ascii.JSONPlain(e.Name) { // plain ASCII within the limit: valid
	} else if rule := c.checkName(&c.name); rule != "" {
		return c.fail(rule, i)
	} else {
		c.plain = false
	}
	if e.MIMEType != c.okMIME {
		if rule := checkMIME(e.MIMEType); rule != "" {
			return c.fail(rule, i)
		}
		c.okMIME, c.okMIMEPlain = e.MIMEType, ascii.JSONPlain(e.MIMEType)
	}
	c.plain = c.plain && c.okMIMEPlain
	if c.seen(i) {
		return c.fail(RuleURIDuplicate, i)
	}
	return nil
}

// seen reports whether an earlier entry had entry i's URI. Every URI
// starts with skip bytes that are the same in all (the template's leading
// literal, which they matched): only the rest is compared.
func (c *pageCheck) seen(i int) bool {
	if !c.sorted {
		return c.add(i)
	}
	u := c.entries[i].URI
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
		c.add(j)
	}
	return c.add(i)
}

// add adds entry i's URI to the set, and reports whether it was there.
func (c *pageCheck) add(i int) bool {
	if len(c.entries) > MaxLimit {
		if c.big == nil {
			c.big = make(map[string]struct{}, len(c.entries))
		}
		u := c.entries[i].URI
		if _, dup := c.big[u]; dup {
			return true
		}
		c.big[u] = struct{}{}
		return false
	}
	es := c.entries
	u := es[i].URI
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
			if prev := es[k-1].URI; len(prev) >= c.skip && prev[c.skip:] == u {
				return true
			}
		}
	}
}

// checkKey returns the rule a key breaks, or "".
func checkKey(k string) Rule {
	if len(k) == 0 || len(k) > maxKeyBytes {
		return RuleKeyLength
	}
	if !ascii.KeyChars(k) {
		return RuleKeyCharset
	}
	return ""
}

// checkEntryURI returns the rule a listed URI breaks, or "".
// general: with the general matcher only (the benchmark's baseline).
func checkEntryURI(t *uritemplate.Template, u string, general bool) Rule {
	switch {
	case u == "":
		return RuleURIEmpty
	case longer(u, maxURILen):
		return RuleURILength
	case t != nil && !general && !t.Matches(u), t != nil && general && !t.MatchesGeneral(u):
		return RuleURIMatch
	case t == nil && !plainURI(u):
		return RuleURIMatch
	}
	return ""
}

// plainURI reports whether u has no space, control character or invalid
// UTF-8: the least a URI (or IRI) needs.
func plainURI(u string) bool {
	for i := 0; i < len(u); i++ {
		if c := u[i]; c <= 0x20 || c == 0x7f {
			return false
		}
	}
	return utf8.ValidString(u)
}

// checkName returns the rule the name *s breaks, or "". With c.escape,
// a name whose characters alone break the rule is replaced by its
// escaped form (display.Defuse: U+FFFD for each refused character or
// byte that is not UTF-8), so that a stored title never makes a list
// fail.
func (c *pageCheck) checkName(s *string) Rule { return escapeName(s, c.escape) }

// escapeName is checkName of *s, which, with escape, it escapes first
// when only its characters break the rule.
func escapeName(s *string, escape bool) Rule {
	rule := checkName(*s)
	if rule == RuleNameInvalid && escape {
		*s = display.Defuse(*s)
		rule = checkName(*s)
	}
	return rule
}

// checkName returns the rule a name breaks, or "".
func checkName(s string) Rule {
	switch {
	case s == "":
		return RuleNameEmpty
	case longer(s, maxNameLen):
		return RuleNameLength
	case !display.Name(s):
		return RuleNameInvalid
	}
	return ""
}

// checkMIME returns the rule a MIME type breaks, or "". Empty is allowed.
func checkMIME(s string) Rule {
	switch {
	case s == "":
		return ""
	case longer(s, maxMIMELen):
		return RuleMIMELength
	case !httpheader.ValidMediaType(s):
		return RuleMIMESyntax
	}
	return ""
}
