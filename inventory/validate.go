package inventory

import (
	"fmt"
	"hash/maphash"
	"sync"
	"unicode/utf8"
)

// Limits of the list contract.
const (
	maxKeyBytes = 256 // longest entry key (ASCII)
	MaxLimit    = 100 // largest page size and ListRequest.Limit
)

// ValidatePage checks one page a list callback returned for req against
// the contract, and returns a [*ContractError] naming the first broken
// rule, or nil. With a nil tmpl the URIs are only checked for length and
// characters, not matched. Inventory runs the same checks on every page;
// inventorytest runs them on whole traversals.
func ValidatePage(tmpl *Template, req ListRequest, p Page) error {
	var t *uriTemplate
	name := ""
	if tmpl != nil {
		name = tmpl.Name
		var err error
		if t, err = parseTemplate(tmpl.URITemplate); err != nil {
			return fmt.Errorf("inventory: template %q: %w", tmpl.Name, err)
		}
	}
	if ce := validatePage(name, t, req, p, nil); ce != nil {
		return ce
	}
	return nil
}

// plainNames records, for each entry of a page, whether its name is
// jsonPlain: validated and encoded as it is.
type plainNames [(MaxLimit + 63) / 64]uint64

func (b *plainNames) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b *plainNames) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

// seenPool recycles the URI sets of validatePage.
var seenPool = sync.Pool{New: func() any { return make(map[string]struct{}, MaxLimit) }}

// validatePage checks p against the contract (see ValidatePage). When
// plain is not nil, it records the entries whose names are jsonPlain.
func validatePage(source string, t *uriTemplate, req ListRequest, p Page, plain *plainNames) *ContractError {
	fail := func(rule Rule, entry int) *ContractError {
		return &ContractError{Source: source, Rule: rule, Entry: entry}
	}
	if len(p.Entries) > req.Limit {
		return fail(RuleTooManyEntries, -1)
	}
	if p.HasMore && len(p.Entries) == 0 {
		return fail(RuleHasMoreEmpty, -1)
	}
	prev := req.After
	okMIME := "" // the last MIME type found valid: pages mostly repeat one
	for i := range p.Entries {
		e := &p.Entries[i]
		if rule := checkKey(e.Key); rule != "" {
			return fail(rule, i)
		}
		if e.Key <= prev {
			if i == 0 {
				return fail(RuleKeyAfter, i)
			}
			return fail(RuleKeyOrder, i)
		}
		prev = e.Key
		if rule := checkEntryURI(t, e.URI); rule != "" {
			return fail(rule, i)
		}
		if e.Name != "" && len(e.Name) <= maxNameLen && jsonPlain(e.Name) {
			if plain != nil { // validated: ASCII within the limit, no control character
				plain.set(i)
			}
		} else if rule := checkName(e.Name); rule != "" {
			return fail(rule, i)
		}
		if e.MIMEType != okMIME {
			if rule := checkMIME(e.MIMEType); rule != "" {
				return fail(rule, i)
			}
			okMIME = e.MIMEType
		}
	}
	if i := duplicateURI(p.Entries, t.prefix()); i >= 0 {
		return fail(RuleURIDuplicate, i)
	}
	return nil
}

// uriSeed keys the hashes of duplicateURI.
var uriSeed = maphash.MakeSeed()

// duplicateURI returns the index of the first entry whose URI an earlier
// entry has, or -1. Every URI starts with skip bytes that are the same in
// all (the template's leading literal, which they matched): only the rest
// is hashed and compared. Up to MaxLimit entries it uses a small
// open-addressing set on the stack; beyond, a pooled map.
func duplicateURI(es []Entry, skip int) int {
	if len(es) < 2 {
		return -1
	}
	if len(es) > MaxLimit {
		seen := seenPool.Get().(map[string]struct{})
		defer func() { clear(seen); seenPool.Put(seen) }()
		for i := range es {
			if _, dup := seen[es[i].URI]; dup {
				return i
			}
			seen[es[i].URI] = struct{}{}
		}
		return -1
	}
	const size = 256      // > 2 × MaxLimit: short probe sequences
	var slots [size]uint8 // entry index + 1; 0 = empty
	var hashes [MaxLimit]uint64
	for i := range es {
		u := es[i].URI[skip:]
		h := maphash.String(uriSeed, u)
		hashes[i] = h
		for j := h % size; ; j = (j + 1) % size {
			k := slots[j]
			if k == 0 {
				slots[j] = uint8(i + 1)
				break
			}
			if hashes[k-1] == h && es[k-1].URI[skip:] == u {
				return i
			}
		}
	}
	return -1
}

// checkKey returns the rule a key breaks, or "".
func checkKey(k string) Rule {
	if len(k) == 0 || len(k) > maxKeyBytes {
		return RuleKeyLength
	}
	if !keyChars(k) {
		return RuleKeyCharset
	}
	return ""
}

// checkEntryURI returns the rule a listed URI breaks, or "".
func checkEntryURI(t *uriTemplate, u string) Rule {
	switch {
	case u == "":
		return RuleURIEmpty
	case longer(u, maxURILen):
		return RuleURILength
	case t != nil && !t.matches(u):
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

// checkName returns the rule a name breaks, or "".
func checkName(s string) Rule {
	switch {
	case s == "":
		return RuleNameEmpty
	case longer(s, maxNameLen):
		return RuleNameLength
	case !printable(s):
		return RuleNameInvalid
	}
	return ""
}

// printable reports whether s is valid UTF-8 without control characters
// (C0, DEL, C1).
func printable(s string) bool {
	// Printable ASCII, eight bytes at a time; the rest rune by rune.
	for i := asciiRun(s, 0x20, 0x7e); i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r >= 0x80 && r <= 0x9f {
			return false
		}
		i += size
	}
	return true
}

// checkMIME returns the rule a MIME type breaks, or "". Empty is allowed.
func checkMIME(s string) Rule {
	switch {
	case s == "":
		return ""
	case longer(s, maxMIMELen):
		return RuleMIMELength
	case !validMIME(s):
		return RuleMIMESyntax
	}
	return ""
}

// validMIME accepts type "/" subtype, both RFC 6838 restricted-names,
// optionally followed by parameters: *( *SP ";" *SP token "=" ( token /
// quoted-string ) ), with no control characters anywhere.
func validMIME(s string) bool {
	i := restrictedName(s, 0)
	if i == 0 || i >= len(s) || s[i] != '/' {
		return false
	}
	j := restrictedName(s, i+1)
	if j == i+1 {
		return false
	}
	for j < len(s) {
		j = skipSpaces(s, j)
		if j >= len(s) || s[j] != ';' {
			return false
		}
		j = skipSpaces(s, j+1)
		k := j
		for k < len(s) && isTchar(s[k]) {
			k++
		}
		if k == j || k >= len(s) || s[k] != '=' {
			return false
		}
		j = k + 1
		if j < len(s) && s[j] == '"' {
			j++
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				if j >= len(s) || s[j] < 0x20 || s[j] == 0x7f {
					return false
				}
				j++
			}
			if j >= len(s) {
				return false
			}
			j++
			continue
		}
		k = j
		for k < len(s) && isTchar(s[k]) {
			k++
		}
		if k == j {
			return false
		}
		j = k
	}
	return true
}

func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// restrictedName returns the end of an RFC 6838 restricted-name starting
// at i, or i when there is none.
func restrictedName(s string, i int) int {
	start := i
	for i < len(s) && i-start < 127 {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == start || !isRestrictedChar(c)) {
			break
		}
		i++
	}
	return i
}

func isRestrictedChar(c byte) bool {
	switch c {
	case '!', '#', '$', '&', '-', '^', '_', '.', '+':
		return true
	}
	return false
}

// isTchar reports an RFC 9110 token character.
func isTchar(c byte) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
