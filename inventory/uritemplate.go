package inventory

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// maxTemplateVars bounds the variables of one template.
const maxTemplateVars = 32

// Character classes of URI bytes, as bits of charClass.
const (
	clVar        = 1 << iota // may appear raw in a {var} value: unreserved, sub-delims, ':', '@'
	clReserved               // may appear raw in a {+var} value: clVar plus '/'
	clHex                    // hexadecimal digit
	clLiteral                // may appear raw in a template literal (RFC 6570 §2.1, ASCII part)
	clUnreserved             // RFC 3986 unreserved
)

var charClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		unreserved := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte("-._~", b) >= 0
		subDelim := strings.IndexByte("!$&'()*+,;=", b) >= 0
		if unreserved {
			t[c] |= clUnreserved
		}
		if unreserved || subDelim || b == ':' || b == '@' {
			t[c] |= clVar | clReserved
		}
		if b == '/' {
			t[c] |= clReserved
		}
		if '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F' {
			t[c] |= clHex
		}
		if b > 0x20 && b < 0x7f && strings.IndexByte("\"'%<>\\^`{|}", b) < 0 {
			t[c] |= clLiteral
		}
	}
	return t
}()

// part is a literal or a variable expression of a parsed template.
type part struct {
	lit      string // the literal text when name == ""
	name     string // the variable name of an expression
	reserved bool   // {+name}
	class    uint8  // an expression's value bytes: clVar, or clReserved for {+name}; 0 for a literal
}

// uriTemplate is a parsed URI template.
type uriTemplate struct {
	raw   string
	parts []part
	vars  []string // variable names in order of appearance
	// greedy: every expression is followed by the end or by a literal
	// whose first byte the expression cannot hold, so matching is one
	// left-to-right scan where each variable takes the longest run.
	greedy bool
	// plain: every literal is ASCII, so a URI that matches is made of
	// printable ASCII without '"' or '\\' (literal bytes, value bytes of
	// clVar or clReserved, and %XX triplets): its JSON string is the URI
	// between quotes, with nothing to escape.
	plain bool
}

// parseTemplate parses the supported subset of RFC 6570: literals, {var}
// and {+var}.
func parseTemplate(s string) (*uriTemplate, error) {
	fail := func(format string, args ...any) (*uriTemplate, error) {
		return nil, fmt.Errorf("uri template %q: %s", s, fmt.Sprintf(format, args...))
	}
	if s == "" {
		return fail("empty")
	}
	if longer(s, maxURILen) {
		return fail("longer than %d characters", maxURILen)
	}
	t := &uriTemplate{raw: s, greedy: true, plain: true}
	for i := 0; i < len(s); {
		switch s[i] {
		case '}':
			return fail("'}' at byte %d without '{'", i)
		case '{':
			end := strings.IndexByte(s[i+1:], '}')
			if end < 0 {
				return fail("'{' at byte %d is not closed", i)
			}
			expr := s[i+1 : i+1+end]
			p, err := parseExpression(expr)
			if err != nil {
				return fail("expression at byte %d: %v", i, err)
			}
			if n := len(t.parts); n > 0 && t.parts[n-1].name != "" {
				return fail("expression at byte %d directly follows another expression", i)
			}
			for _, v := range t.vars {
				if v == p.name {
					return fail("variable %q appears twice", p.name)
				}
			}
			if len(t.vars) == maxTemplateVars {
				return fail("more than %d variables", maxTemplateVars)
			}
			t.parts = append(t.parts, p)
			t.vars = append(t.vars, p.name)
			i += end + 2
		default:
			j := i
			for j < len(s) && s[j] != '{' && s[j] != '}' {
				j++
			}
			lit := s[i:j]
			if err := checkLiteral(lit); err != nil {
				return fail("literal at byte %d: %v", i, err)
			}
			if n := len(t.parts); n > 0 {
				if lit[0] == '%' {
					return fail("literal at byte %d right after an expression starts with a percent-encoded triplet", i)
				}
				prev := t.parts[n-1]
				if charClass[lit[0]]&varClass(prev.reserved) != 0 {
					t.greedy = false
				}
			}
			for k := 0; k < len(lit); k++ {
				if lit[k] >= utf8.RuneSelf {
					t.plain = false
				}
			}
			t.parts = append(t.parts, part{lit: lit})
			i = j
		}
	}
	return t, nil
}

func varClass(reserved bool) uint8 {
	if reserved {
		return clReserved
	}
	return clVar
}

// parseExpression parses the text between '{' and '}'.
func parseExpression(expr string) (part, error) {
	var p part
	if strings.HasPrefix(expr, "+") {
		p.reserved = true
		expr = expr[1:]
	}
	switch {
	case expr == "":
		return p, errors.New("empty")
	case strings.ContainsRune("#./;?&=,!@|+", rune(expr[0])):
		return p, fmt.Errorf("operator %q is not supported (only {var} and {+var})", expr[0])
	case strings.ContainsAny(expr, ","):
		return p, errors.New("several variables in one expression are not supported")
	case strings.ContainsAny(expr, "*:"):
		return p, errors.New("modifiers (* and :n) are not supported")
	}
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return p, errors.New("variable names are made of A-Z, a-z, 0-9 and _")
		}
	}
	p.name = expr
	p.class = varClass(p.reserved)
	return p, nil
}

// checkLiteral accepts the literals of RFC 6570 §2.1: printable ASCII
// except " ' % < > \ ^ ` { | }, percent-encoded triplets, and valid UTF-8
// beyond ASCII.
func checkLiteral(lit string) error {
	for i := 0; i < len(lit); {
		c := lit[i]
		switch {
		case c == '%':
			if i+2 >= len(lit) || charClass[lit[i+1]]&clHex == 0 || charClass[lit[i+2]]&clHex == 0 {
				return errors.New("'%' not followed by two hexadecimal digits")
			}
			i += 3
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(lit[i:])
			if r == utf8.RuneError || r <= 0x9f {
				return errors.New("invalid UTF-8 or control character")
			}
			i += size
		case charClass[c]&clLiteral == 0:
			return fmt.Errorf("character %q is not allowed", c)
		default:
			i++
		}
	}
	return nil
}

// unit returns the length of the value unit at uri[i]: 1 for a byte of the
// class, 3 for a percent-encoded triplet, 0 when no unit starts there.
func unit(uri string, i int, class uint8) int {
	c := uri[i]
	if charClass[c]&class != 0 {
		return 1
	}
	if c == '%' && i+2 < len(uri) && charClass[uri[i+1]]&clHex != 0 && charClass[uri[i+2]]&clHex != 0 {
		return 3
	}
	return 0
}

// scanVar returns the end of the longest run of value units from i.
func scanVar(uri string, i int, class uint8) int {
	for {
		for i < len(uri) && charClass[uri[i]]&class != 0 {
			i++
		}
		if i == len(uri) {
			return i
		}
		u := unit(uri, i, class) // a percent-encoded triplet, or the end
		if u == 0 {
			return i
		}
		i += u
	}
}

// prefix returns the length of t's leading literal, which every URI that
// matches t starts with; 0 for a nil t or a template that starts with an
// expression.
func (t *uriTemplate) prefix() int {
	if t == nil || len(t.parts) == 0 || t.parts[0].class != 0 {
		return 0
	}
	return len(t.parts[0].lit)
}

// matches reports whether uri matches t.
func (t *uriTemplate) matches(uri string) bool {
	return t.match(uri, nil)
}

// match reports whether uri matches t and, when vals is not nil, stores
// the raw (still percent-encoded) value of variable k in vals[k]. When a
// URI can be split several ways, each variable takes the shortest value
// that lets the rest match.
func (t *uriTemplate) match(uri string, vals []string) bool {
	if uri == "" || longer(uri, maxURILen) {
		return false
	}
	if t.greedy {
		return t.matchGreedy(uri, vals)
	}
	return t.matchDP(uri, vals)
}

func (t *uriTemplate) matchGreedy(uri string, vals []string) bool {
	if len(t.parts) == 2 && t.parts[0].class == 0 {
		// The common shape, a literal and one expression ("docs://documents/{id}").
		lit := t.parts[0].lit
		if len(uri) <= len(lit) || uri[:len(lit)] != lit || scanVar(uri, len(lit), t.parts[1].class) != len(uri) {
			return false
		}
		if vals != nil {
			vals[0] = uri[len(lit):]
		}
		return true
	}
	pos, k := 0, 0
	for i := range t.parts {
		p := &t.parts[i]
		if p.class == 0 {
			if !strings.HasPrefix(uri[pos:], p.lit) {
				return false
			}
			pos += len(p.lit)
			continue
		}
		end := scanVar(uri, pos, p.class)
		if end == pos {
			return false
		}
		if vals != nil {
			vals[k] = uri[pos:end]
		}
		k++
		pos = end
	}
	return pos == len(uri)
}

// dpPool recycles the tables of matchDP.
var dpPool = sync.Pool{New: func() any { b := make([]bool, 0, 1024); return &b }}

// matchDP decides the match with a table ok[k][j]: "parts k… match
// uri[j:]", filled from the end, then reads the values front to back
// taking the shortest choice for each variable.
func (t *uriTemplate) matchDP(uri string, vals []string) bool {
	n, np := len(uri), len(t.parts)
	w := n + 1
	buf := dpPool.Get().(*[]bool)
	defer dpPool.Put(buf)
	size := (np + 1) * w
	if cap(*buf) < size {
		*buf = make([]bool, size)
	}
	ok := (*buf)[:size]
	clear(ok)
	ok[np*w+n] = true
	for k := np - 1; k >= 0; k-- {
		p, row, next := t.parts[k], ok[k*w:(k+1)*w], ok[(k+1)*w:(k+2)*w]
		if p.name == "" {
			for j := 0; j+len(p.lit) <= n; j++ {
				row[j] = next[j+len(p.lit)] && uri[j:j+len(p.lit)] == p.lit
			}
			continue
		}
		class := varClass(p.reserved)
		for j := n - 1; j >= 0; j-- {
			if u := unit(uri, j, class); u > 0 {
				row[j] = next[j+u] || row[j+u]
			}
		}
	}
	if !ok[0] {
		return false
	}
	if vals != nil {
		pos, k := 0, 0
		for i, p := range t.parts {
			if p.name == "" {
				pos += len(p.lit)
				continue
			}
			next, class := ok[(i+1)*w:(i+2)*w], varClass(p.reserved)
			end := pos + unit(uri, pos, class)
			for !next[end] {
				end += unit(uri, end, class)
			}
			vals[k] = uri[pos:end]
			k++
			pos = end
		}
	}
	return true
}

// params matches uri and returns the percent-decoded variables.
func (t *uriTemplate) params(uri string) (map[string]string, bool) {
	var stack [8]string
	vals := stack[:0]
	if len(t.vars) > len(stack) {
		vals = make([]string, len(t.vars))
	}
	vals = vals[:len(t.vars)]
	if !t.match(uri, vals) {
		return nil, false
	}
	m := make(map[string]string, len(t.vars))
	for k, name := range t.vars {
		m[name] = pctDecode(vals[k])
	}
	return m, true
}

// pctDecode decodes the triplets of a matched value; a matched value holds
// only well-formed ones.
func pctDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// Expand fills a URI template with values and returns the URI. It supports
// what the kit matches: {var} percent-encodes every byte outside RFC 3986
// unreserved; {+var} also keeps '/', ':', '@' and the sub-delims raw. Any
// byte that starts the literal following an expression is also encoded, so
// matching the URI gives back exactly the values expanded. Every variable
// needs a non-empty value.
func Expand(uriTemplate string, values map[string]string) (string, error) {
	t, err := parseTemplate(uriTemplate)
	if err != nil {
		return "", fmt.Errorf("inventory: %w", err)
	}
	return t.expand(values)
}

func (t *uriTemplate) expand(values map[string]string) (string, error) {
	var b strings.Builder
	for i, p := range t.parts {
		if p.name == "" {
			b.WriteString(p.lit)
			continue
		}
		v, ok := values[p.name]
		if !ok || v == "" {
			return "", fmt.Errorf("inventory: uri template %q: variable %q needs a non-empty value", t.raw, p.name)
		}
		keep := uint8(clUnreserved)
		if p.reserved {
			keep = clReserved
		}
		var stop byte // the first byte of the following literal, if any
		hasStop := i+1 < len(t.parts)
		if hasStop {
			stop = t.parts[i+1].lit[0]
		}
		for j := 0; j < len(v); j++ {
			c := v[j]
			if charClass[c]&keep != 0 && !(hasStop && c == stop) {
				b.WriteByte(c)
				continue
			}
			b.WriteByte('%')
			b.WriteByte("0123456789ABCDEF"[c>>4])
			b.WriteByte("0123456789ABCDEF"[c&15])
		}
	}
	return b.String(), nil
}
