package uritemplate

import (
	"math/bits"
	"strings"
	"sync"
	"unicode/utf8"
)

// This file matches URIs against parsed templates: a left-to-right scan
// for greedy templates, and for the others a table over the template's
// nodes (see node) filled from the end of the URI, then read front to back
// in order of preference.

// Flags of a value unit.
const (
	fHex   = 1 << iota // the unit is a hexadecimal digit, raw or pct-encoded
	fPct25             // the unit is %25
)

// unitAt returns the length of the value unit at uri[i] (i < len(uri))
// for a value that may hold reserved characters raw or not, and its
// flags; 0 when no unit starts there. A unit is a raw byte of the value's
// class; the triplet of an ASCII byte (for {+x} and {#x}, not of a
// reserved character, which RFC 6570 would have left raw); or the
// triplets of one character of valid UTF-8 (RFC 6570 values are Unicode).
func unitAt(uri string, i int, reserved bool) (int, uint8) {
	c := uri[i]
	if c != '%' {
		if charClass[c]&valueClass(reserved) == 0 {
			return 0, 0
		}
		return 1, hexFlag(c)
	}
	b, ok := triplet(uri, i)
	switch {
	case !ok:
		return 0, 0
	case b < utf8.RuneSelf:
		switch {
		case reserved && charClass[b]&clR != 0:
			return 0, 0
		case b == '%':
			return 3, fPct25
		}
		return 3, hexFlag(b)
	}
	need, lo, hi := utf8Lead(b)
	if need == 0 {
		return 0, 0
	}
	for x := 1; x <= need; x++ {
		if c, ok := triplet(uri, i+3*x); !ok || c < lo || c > hi {
			return 0, 0
		}
		lo, hi = 0x80, 0xBF
	}
	return 3 * (need + 1), 0
}

func hexFlag(c byte) uint8 {
	if charClass[c]&clHex != 0 {
		return fHex
	}
	return 0
}

// utf8Lead returns, for the first byte b of a UTF-8 encoded character
// beyond ASCII, the number of continuation bytes that follow and the range
// of the first one (each further one is in 0x80–0xBF); need is 0 for a
// byte that starts no character. These are the sequences RFC 3629 allows:
// no overlong form, no surrogate, nothing beyond U+10FFFF.
func utf8Lead(b byte) (need int, lo, hi byte) {
	switch {
	case b >= 0xC2 && b <= 0xDF:
		return 1, 0x80, 0xBF
	case b == 0xE0:
		return 2, 0xA0, 0xBF
	case b == 0xED:
		return 2, 0x80, 0x9F
	case b >= 0xE1 && b <= 0xEF:
		return 2, 0x80, 0xBF
	case b == 0xF0:
		return 3, 0x90, 0xBF
	case b >= 0xF1 && b <= 0xF3:
		return 3, 0x80, 0xBF
	case b == 0xF4:
		return 3, 0x80, 0x8F
	}
	return 0, 0, 0
}

// triplet decodes the pct-encoded triplet at uri[i], if there is one.
func triplet(uri string, i int) (byte, bool) {
	if i+2 >= len(uri) || uri[i] != '%' {
		return 0, false
	}
	h, l := hexValue[uri[i+1]], hexValue[uri[i+2]]
	return h<<4 | l, h|l < 16
}

// hexValue is the value of each hexadecimal digit, 0xFF for other bytes.
var hexValue = func() (t [256]byte) {
	for c := range t {
		t[c] = 0xFF
		if charClass[c]&clHex != 0 {
			t[c] = unhex(byte(c))
		}
	}
	return t
}()

// scanValue returns the end of the longest value that starts at uri[i].
// In a value that may hold reserved characters raw, %25 followed by two
// hexadecimal digits ends the value before the second digit: RFC 6570
// would have copied such a "%XY" of the value as it is, so no value
// decodes to it and expands back.
func scanValue(uri string, i int, cls uint8) int {
	for i < len(uri) && charClass[uri[i]]&cls != 0 {
		i++
	}
	if i == len(uri) || uri[i] != '%' {
		return i
	}
	return scanEncoded(uri, i, cls)
}

// scanEncoded is scanValue from a '%' at uri[i].
//
// Complexity: the per-unit loop of value matching with its fast paths (ASCII and two-byte triplets) and the %25 rule inline: the hot loop of every match.
//
//gocyclo:ignore
func scanEncoded(uri string, i int, cls uint8) int {
	reserved := cls&clR != 0
	for {
		if i+2 >= len(uri) {
			return i
		}
		n, f := 0, uint8(0)
		h, l := hexValue[uri[i+1]], hexValue[uri[i+2]]
		switch {
		case h < 8 && l < 16 && !reserved:
			n = 3 // an ASCII character: any one may be encoded in {x}
		case (h == 0xC && l >= 2 || h == 0xD) && l < 16 && i+5 < len(uri) && uri[i+3] == '%' &&
			hexValue[uri[i+4]] >= 8 && hexValue[uri[i+4]] < 12 && hexValue[uri[i+5]] < 16:
			n = 6 // a character of two bytes (most accented letters)
		default:
			if n, f = unitAt(uri, i, reserved); n == 0 {
				return i
			}
		}
		i += n
		if reserved && f == fPct25 && i < len(uri) {
			if n1, f1 := unitAt(uri, i, true); n1 > 0 && f1 == fHex && i+n1 < len(uri) {
				if n2, f2 := unitAt(uri, i+n1, true); n2 > 0 && f2 == fHex {
					return i + n1
				}
			}
		}
		for i < len(uri) && charClass[uri[i]]&cls != 0 {
			i++
		}
		if i == len(uri) || uri[i] != '%' {
			return i
		}
	}
}

// matches reports whether uri matches t.
func (t *Template) Matches(uri string) bool {
	_, ok := t.match(uri, nil)
	return ok
}

// MatchesGeneral is Matches without the shortcut of simple templates (see
// Template.simple): the baseline of benchmarks and differential tests.
func (t *Template) MatchesGeneral(uri string) bool {
	if uri == "" || longer(uri, MaxLen) {
		return false
	}
	if t.greedy {
		return t.matchGreedy(uri, nil)
	}
	_, ok := t.matchDP(uri, nil)
	return ok
}

// match reports whether uri matches t. When vals is not nil, it stores
// the raw (still percent-encoded) value of variable k in vals[k], and
// present has bit k set for each variable the URI holds (an absent one is
// undefined: it left no trace). When a URI can be split several ways the
// choices are made left to right: each variable takes the shortest value
// that lets the rest match, a list takes its next variable rather than
// end, and named variables are tried in template order.
func (t *Template) match(uri string, vals []string) (present uint64, ok bool) {
	if uri == "" || longer(uri, MaxLen) {
		return 0, false
	}
	if t.simple {
		return 1, t.matchSimple(uri, vals)
	}
	if t.greedy {
		return 1<<len(t.vars) - 1, t.matchGreedy(uri, vals)
	}
	return t.matchDP(uri, vals)
}

// matchSimple matches a simple template (see Template.simple): the split
// is forced, the value being what lies between the two literals.
func (t *Template) matchSimple(uri string, vals []string) bool {
	start, end := len(t.sprefix), len(uri)-len(t.ssuffix)
	if end <= start || uri[:start] != t.sprefix || uri[end:] != t.ssuffix || scanValue(uri[:end], start, clU) != end {
		return false
	}
	if vals != nil {
		vals[0] = uri[start:end]
	}
	return true
}

func (t *Template) matchGreedy(uri string, vals []string) bool {
	if len(t.gparts) == 2 && t.gparts[0].cls == 0 {
		// The common shape, a literal and one expression ("docs://documents/{id}").
		lit := t.gparts[0].lit
		if len(uri) <= len(lit) || uri[:len(lit)] != lit || scanValue(uri, len(lit), t.gparts[1].cls) != len(uri) {
			return false
		}
		if vals != nil {
			vals[0] = uri[len(lit):]
		}
		return true
	}
	pos, k := 0, 0
	for i := range t.gparts {
		p := &t.gparts[i]
		if p.cls == 0 {
			if !strings.HasPrefix(uri[pos:], p.lit) {
				return false
			}
			pos += len(p.lit)
			continue
		}
		end := scanValue(uri, pos, p.cls)
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

// dpTables are the scratch tables of matchDP.
type dpTables struct {
	ok    []bool  // ok[s*w+j]: from node s at uri[j], the rest of the URI matches
	units []int32 // per position: see valRow
	near  []int32
	depth []int32
	lim   []int32
	flags []uint8
}

var dpPool = sync.Pool{New: func() any { return new(dpTables) }}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// matchDP decides the match with a table ok[s][j]: "from node s at
// uri[j], the rest matches", filled from node 0 (the end) up, then walks
// from the start node choosing the first alternative that still matches.
//
// Complexity: the table fill and the walk over the node kinds of the general matcher, kept together so that the table is read where it is written (FuzzURITemplate and FuzzSimpleShape check it).
//
//gocyclo:ignore
func (t *Template) matchDP(uri string, vals []string) (uint64, bool) {
	n := len(uri)
	w := n + 1
	tb := dpPool.Get().(*dpTables)
	defer dpPool.Put(tb)
	tb.ok = grow(tb.ok, len(t.nodes)*w)
	clear(tb.ok)
	ok := tb.ok
	pct25 := t.reservedVal && strings.Contains(uri, "%25")
	for s := range t.nodes {
		nd := &t.nodes[s]
		// Only positions with room for what comes before and after matter.
		lo, hi := int(nd.before), n-int(nd.after)
		if nd.kind != nVal && int(nd.latest) < hi {
			hi = int(nd.latest) // (a value's row is a chain: it needs every end)
		}
		if lo < 0 || lo > hi {
			continue
		}
		cur := ok[s*w : (s+1)*w]
		switch nd.kind {
		case nAccept:
			cur[n] = hi == n
		case nLit:
			next, l := ok[int(nd.next)*w:int(nd.next+1)*w], len(nd.lit)
			for j := lo; j <= hi; j++ {
				cur[j] = next[j+l] && uri[j:j+l] == nd.lit
			}
		case nMark:
			copy(cur[lo:hi+1], ok[int(nd.next)*w+lo:int(nd.next)*w+hi+1])
		case nSplit:
			for _, a := range nd.alts {
				alt := ok[int(a)*w : int(a+1)*w]
				for j := lo; j <= hi; j++ {
					cur[j] = cur[j] || alt[j]
				}
			}
		case nVal:
			next := ok[int(nd.next)*w : int(nd.next+1)*w]
			if nd.prefix == 0 && (!nd.reserved || !pct25) {
				valRowPlain(uri, nd, cur, next, lo, hi)
			} else {
				tb.valRow(uri, nd, cur, next, lo, hi)
			}
		}
	}
	if !ok[int(t.start)*w] {
		return 0, false
	}
	if vals == nil {
		return 0, true
	}
	var present uint64
	pos, s := 0, t.start
	for s != 0 {
		nd := &t.nodes[s]
		switch nd.kind {
		case nLit:
			pos += len(nd.lit)
			s = nd.next
		case nMark:
			present |= 1 << nd.v
			vals[nd.v] = ""
			s = nd.next
		case nSplit:
			for _, a := range nd.alts {
				if ok[int(a)*w+pos] {
					s = a
					break
				}
			}
		case nVal:
			// The first end valRow found: the shortest value.
			next, end := ok[int(nd.next)*w:int(nd.next+1)*w], pos
			if nd.nonEmpty || !next[end] {
				for {
					u, _ := unitAt(uri, end, nd.reserved)
					if end += u; next[end] {
						break
					}
				}
			}
			present |= 1 << nd.v
			vals[nd.v] = uri[pos:end]
			pos = end
			s = nd.next
		}
	}
	return present, true
}

// valRow fills cur[j] for a value node: from uri[j], a value that the
// rest (next) can follow. Units are scanned from the end: e[j], the first
// end in j's run of units (j itself included) where next holds, is also
// the shortest value; it must respect the %25 rule of scanValue (lim[j],
// the furthest end it allows from j) and the prefix modifier (depth[j],
// the units from j to the end of its run).
//
// Complexity: one row of the general matcher's table, scanned from the end with the %25 rule and prefix modifiers in the same pass.
//
//gocyclo:ignore
func (tb *dpTables) valRow(uri string, nd *node, cur, next []bool, lo, hi int) {
	n := len(uri)
	w := n + 1
	units, near := grow(tb.units, w), grow(tb.near, w)
	tb.units, tb.near = units, near
	var depth, lim []int32
	var flags []uint8
	if nd.prefix > 0 {
		depth = grow(tb.depth, w)
		tb.depth = depth
		depth[n] = 0
	}
	if nd.reserved {
		lim, flags = grow(tb.lim, w), grow(tb.flags, w)
		tb.lim, tb.flags = lim, flags
		lim[n], flags[n] = int32(n), 0
	}
	units[n] = 0
	near[n] = -1
	if next[n] {
		near[n] = int32(n)
	}
	if hi == n {
		cur[n] = !nd.nonEmpty && next[n]
	}
	for j := n - 1; j >= lo; j-- {
		u, f := unitAt(uri, j, nd.reserved)
		units[j] = int32(u)
		switch {
		case next[j]:
			near[j] = int32(j)
		case u > 0:
			near[j] = near[j+u]
		default:
			near[j] = -1
		}
		if u == 0 {
			cur[j] = !nd.nonEmpty && next[j]
			if lim != nil {
				lim[j], flags[j] = int32(n), 0
			}
			if depth != nil {
				depth[j] = 0
			}
			continue
		}
		e := near[j]
		if nd.nonEmpty && next[j] {
			e = near[j+u]
		}
		okEnd := e >= 0
		if lim != nil {
			flags[j] = f
			lim[j] = lim[j+u]
			if q2 := j + u; f == fPct25 && units[q2] > 0 && flags[q2] == fHex {
				if q3 := q2 + int(units[q2]); units[q3] > 0 && flags[q3] == fHex {
					lim[j] = min(lim[j], int32(q3))
				}
			}
			okEnd = okEnd && e <= lim[j]
		}
		if depth != nil {
			depth[j] = 1 + depth[j+u]
			okEnd = okEnd && depth[j]-depth[e] <= nd.prefix
		}
		if j <= hi {
			cur[j] = okEnd
		}
	}
}

// valRowPlain is valRow for a value without a prefix modifier, where the
// %25 rule does not apply: cur[j] holds when the rest follows at j (an
// empty value, if allowed), or a unit starts at j and the rest or more of
// the value can follow it. (Rows are false beyond hi: the rest has no room
// there.)
func valRowPlain(uri string, nd *node, cur, next []bool, lo, hi int) {
	n, cls, reserved := len(uri), valueClass(nd.reserved), nd.reserved
	if hi == n {
		cur[n] = !nd.nonEmpty && next[n]
		hi--
	}
	for j := hi; j >= lo; j-- {
		u := 0
		if c := uri[j]; charClass[c]&cls != 0 {
			u = 1
		} else if c == '%' {
			u, _ = unitAt(uri, j, reserved)
		}
		if nd.nonEmpty {
			cur[j] = u > 0 && (next[j+u] || cur[j+u])
		} else {
			cur[j] = next[j] || u > 0 && cur[j+u]
		}
	}
}

// params matches uri and returns the percent-decoded variables the URI
// holds (an absent variable has no entry).
func (t *Template) Params(uri string) (map[string]string, bool) {
	var stack [8]string
	vals := stack[:0]
	if len(t.vars) > len(stack) {
		vals = make([]string, len(t.vars))
	}
	vals = vals[:len(t.vars)]
	present, ok := t.match(uri, vals)
	if !ok {
		return nil, false
	}
	m := make(map[string]string, bits.OnesCount64(present))
	for k, name := range t.vars {
		if present&(1<<k) != 0 {
			m[name] = pctDecode(vals[k])
		}
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
