package uritemplate

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Expand fills t with string values and returns the URI; it is
// inventory.Expand on a parsed template (see its documentation).
func (t *Template) Expand(values map[string]string) (string, error) {
	fail := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("inventory: uri template %q: %s", t.raw, fmt.Sprintf(format, args...))
	}
	for _, p := range t.parts {
		if p.expr == nil {
			continue
		}
		for _, v := range p.expr.vars {
			s, ok := values[v.name]
			switch {
			case p.expr.op.first == "" && s == "":
				return fail("variable %q needs a non-empty value", v.name)
			case !ok:
			case !utf8.ValidString(s):
				return fail("the value of variable %q is not valid UTF-8", v.name)
			case p.expr.op.reserved && holdsTriplet(s):
				return fail("the value of variable %q holds a percent-encoded triplet", v.name)
			}
		}
	}
	b, err := t.appendExpansion(nil, func(name string) value {
		if s, ok := values[name]; ok {
			return value{kind: vString, s: s}
		}
		return value{}
	}, true)
	if err != nil {
		return "", err
	}
	uri := string(b)
	if longer(uri, MaxLen) {
		return fail("the URI is longer than %d characters", MaxLen)
	}
	if !t.greedy && !t.readsBack(uri, values) {
		return fail("the URI %q would read back as other values", uri)
	}
	return uri, nil
}

// readsBack reports whether uri matches t with exactly the values (cut to
// their prefix modifiers) of the variables present in values.
func (t *Template) readsBack(uri string, values map[string]string) bool {
	got, ok := t.Params(uri)
	if !ok {
		return false
	}
	n := 0
	for _, p := range t.parts {
		if p.expr == nil {
			continue
		}
		for _, v := range p.expr.vars {
			want, ok := values[v.name]
			if !ok {
				continue
			}
			n++
			if g, ok := got[v.name]; !ok || g != cut(want, v.prefix) {
				return false
			}
		}
	}
	return n == len(got)
}

// holdsTriplet reports whether s holds '%' and two hexadecimal digits.
func holdsTriplet(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '%' && charClass[s[i+1]]&clHex != 0 && charClass[s[i+2]]&clHex != 0 {
			return true
		}
	}
	return false
}

// Kinds of value.
const (
	vUndef  = iota // undefined: no value, an empty list or an empty associative array
	vString        // s
	vList          // items
	vAssoc         // items: key, value, key, value, …
)

// value is an RFC 6570 variable value. The kit's values are strings; lists
// and associative arrays exist for the expansion tests of RFC 6570.
type value struct {
	kind  uint8
	s     string
	items []string
}

func (v value) defined() bool {
	return v.kind == vString || v.kind != vUndef && len(v.items) > 0
}

// expandRFC6570 expands the template s by RFC 6570 with the values
// (missing ones are undefined), without the kit's restrictions: for tests.
func expandRFC6570(s string, values map[string]value) (string, error) {
	parts, err := parseRFC6570(s)
	if err != nil {
		return "", err
	}
	t := &Template{raw: s, parts: parts}
	b, err := t.appendExpansion(nil, func(name string) value { return values[name] }, false)
	return string(b), err
}

// appendExpansion appends the expansion of t (RFC 6570 Appendix A) with the
// values lookup returns; with stops, it encodes the stop bytes of each
// variable (see varspec.stops).
func (t *Template) appendExpansion(b []byte, lookup func(string) value, stops bool) ([]byte, error) {
	for _, p := range t.parts {
		if p.expr == nil {
			b = append(b, p.lit...)
			continue
		}
		op, first := p.expr.op, true
		for _, v := range p.expr.vars {
			val := lookup(v.name)
			if !val.defined() {
				continue
			}
			if first {
				b = append(b, op.first...)
				first = false
			} else {
				b = append(b, op.sep)
			}
			stop := ""
			if stops {
				stop = v.stops
			}
			var err error
			if b, err = appendVar(b, op, &v, val, stop); err != nil {
				return nil, fmt.Errorf("uri template %q: variable %q: %w", t.raw, v.name, err)
			}
		}
	}
	return b, nil
}

// appendVar appends one defined variable of an expression.
func appendVar(b []byte, op *operator, v *varspec, val value, stop string) ([]byte, error) {
	named := func(b []byte, name string, empty bool) []byte {
		b = append(b, name...)
		if empty {
			return append(b, op.ifemp...)
		}
		return append(b, '=')
	}
	if val.kind == vString {
		if op.named {
			b = named(b, v.name, val.s == "")
		}
		return appendEncoded(b, cut(val.s, v.prefix), op.reserved, stop), nil
	}
	if v.prefix > 0 {
		return nil, errors.New("a prefix modifier applies to a string, not to a list or an associative array")
	}
	pairs := val.kind == vAssoc
	if pairs && len(val.items)%2 != 0 {
		return nil, errors.New("an associative array needs a value for each key")
	}
	if !v.explode {
		if op.named {
			b = named(b, v.name, false)
		}
		for i, item := range val.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendEncoded(b, item, op.reserved, stop)
		}
		return b, nil
	}
	step := 1
	if pairs {
		step = 2
	}
	for i := 0; i < len(val.items); i += step {
		if i > 0 {
			b = append(b, op.sep)
		}
		item := val.items[i]
		switch {
		case pairs && op.named:
			b = named(appendEncoded(b, item, op.reserved, stop), "", val.items[i+1] == "")
			b = appendEncoded(b, val.items[i+1], op.reserved, stop)
		case pairs:
			b = append(appendEncoded(b, item, op.reserved, stop), '=')
			b = appendEncoded(b, val.items[i+1], op.reserved, stop)
		case op.named:
			b = appendEncoded(named(b, v.name, item == ""), item, op.reserved, stop)
		default:
			b = appendEncoded(b, item, op.reserved, stop)
		}
	}
	return b, nil
}

// cut returns the first n characters of s (all of s for n = 0).
func cut(s string, n int) string {
	if n == 0 {
		return s
	}
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// appendEncoded appends s percent-encoding every byte outside the allowed
// set: unreserved characters (except those in stop), and for reserved
// expansion also reserved characters and pct-encoded triplets (RFC 6570
// §3.2.1).
func appendEncoded(b []byte, s string, reserved bool, stop string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch cl := charClass[c]; {
		case cl&clU != 0 && !inStop(stop, c), reserved && cl&clR != 0:
			b = append(b, c)
		case reserved && c == '%' && i+2 < len(s) && charClass[s[i+1]]&clHex != 0 && charClass[s[i+2]]&clHex != 0:
			b = append(b, s[i:i+3]...)
			i += 2
		default:
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return b
}

func inStop(stop string, c byte) bool {
	for i := 0; i < len(stop); i++ {
		if stop[i] == c {
			return true
		}
	}
	return false
}
