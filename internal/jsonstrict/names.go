package jsonstrict

import (
	"cmp"
	"math/bits"
	"slices"
	"unicode"
	"unicode/utf8"
)

// Duplicate member names.
//
// Two names are the same when they are equal after unescaping and case
// folding with the rule encoding/json uses to match struct fields (see
// [AppendFold]).
//
// Each name gets a 64-bit hash of its folded form; the hashes of the open
// objects are kept on a stack (8 bytes per name, nothing else). The first
// linearNames names of an object are compared with each other as they come;
// the hashes of a larger object are sorted when it closes. Only when two
// hashes are equal (a duplicate, or a collision) are the names themselves
// read again from the object's bytes and compared, so collisions, even
// crafted ones, cost time (O(n log n)) but never correctness.

// linearNames is how many names of one object are checked one by one.
const linearNames = 16

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// addName records the name data[start:end] of the object at data[obj],
// whose hashes begin at keys()[base], and reports whether it repeats an
// earlier name (among the first linearNames; closeNames checks the rest).
func (s *scanner) addName(base, obj, start, end int) (dup bool) {
	h := foldHash(s.data[start:end])
	if s.nkeys-base < linearNames {
		for _, k := range s.keys()[base:] {
			if k == h {
				dup = s.repeats(obj, start, end)
				break
			}
		}
	}
	s.pushKey(h)
	return dup
}

// keys returns the name hashes of the open objects.
func (s *scanner) keys() []uint64 {
	if s.big != nil {
		return s.big[:s.nkeys]
	}
	return s.small[:s.nkeys]
}

func (s *scanner) pushKey(h uint64) {
	if s.big == nil {
		if s.nkeys < len(s.small) {
			s.small[s.nkeys] = h
			s.nkeys++
			return
		}
		s.big = make([]uint64, s.nkeys, 4*s.nkeys)
		copy(s.big, s.small[:])
	}
	if s.nkeys == cap(s.big) { // double: append grows large slices by only 1.25
		s.big = append(make([]uint64, 0, 2*cap(s.big)), s.big...)
	}
	s.big = append(s.big[:s.nkeys], h)
	s.nkeys++
}

// closeNames finishes the object at data[obj] whose name hashes begin at
// keys()[base].
func (s *scanner) closeNames(base, obj int) {
	if hs := s.keys()[base:]; len(hs) > linearNames && s.dup == nil {
		slices.Sort(hs) // they are dropped next
		for j := 1; j < len(hs); j++ {
			if hs[j] == hs[j-1] {
				s.sortedDuplicates(obj)
				break
			}
		}
	}
	s.nkeys = base
}

// repeats reports whether an earlier name of the object at data[obj] equals
// data[start:end].
func (s *scanner) repeats(obj, start, end int) bool {
	d, name := s.data, s.data[start:end]
	for i := range memberNames(d, obj) {
		if i.start == start {
			return false
		}
		if foldCompare(d[i.start:i.end], name) == 0 {
			return true
		}
	}
	return false
}

type span struct{ start, end int }

type nameEnt struct {
	h          uint64
	start, end int
}

// sortedDuplicates finds the repeated names of the complete object at
// data[obj] by sorting them by (hash, folded text).
func (s *scanner) sortedDuplicates(obj int) {
	d := s.data
	var ns []nameEnt
	for sp := range memberNames(d, obj) {
		ns = append(ns, nameEnt{foldHash(d[sp.start:sp.end]), sp.start, sp.end})
	}
	slices.SortFunc(ns, func(a, b nameEnt) int {
		if a.h != b.h {
			return cmp.Compare(a.h, b.h)
		}
		return foldCompare(d[a.start:a.end], d[b.start:b.end])
	})
	for j := 1; j < len(ns); j++ {
		a, b := d[ns[j-1].start:ns[j-1].end], d[ns[j].start:ns[j].end]
		if ns[j].h == ns[j-1].h && foldCompare(a, b) == 0 {
			s.dup = errDup
			return
		}
	}
}

// memberNames yields the spans of the member names (between the quotes) of
// the object at d[obj], which the scanner has already validated up to the
// last name it asks for.
func memberNames(d []byte, obj int) func(yield func(span) bool) {
	return func(yield func(span) bool) {
		i := skipWS(d, obj+1)
		for i < len(d) && d[i] == '"' {
			end := skipString(d, i)
			if !yield(span{i + 1, end - 1}) {
				return
			}
			i = skipWS(d, end)
			i = skipWS(d, i+1) // ':'
			i = skipWS(d, skipValue(d, i))
			if i >= len(d) || d[i] != ',' {
				return
			}
			i = skipWS(d, i+1)
		}
	}
}

func skipWS(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the validated string at d[i]
// (never more than len(d)), looking at eight bytes at a time.
func skipString(d []byte, i int) int {
	for i++; i < len(d); i++ {
		for ; i+8 <= len(d); i += 8 {
			t := d[i : i+8]
			w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
				uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
			if m := quoteOrBackslash(w); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
		}
		if i >= len(d) {
			break
		}
		switch d[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(d)
}

// skipValue returns the index after the validated value at d[i].
func skipValue(d []byte, i int) int {
	if i >= len(d) {
		return i
	}
	switch d[i] {
	case '"':
		return skipString(d, i)
	case '{', '[':
		depth := 0
		for i < len(d) {
			switch d[i] {
			case '"':
				i = skipString(d, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(d) && d[i] != ',' && d[i] != '}' && d[i] != ']' && d[i] != ' ' && d[i] != '\t' && d[i] != '\n' && d[i] != '\r' {
		i++
	}
	return i
}

// foldHash is FNV-1a over the folded runes of a validated string body.
func foldHash(raw []byte) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(raw); {
		c := raw[i]
		if c < utf8.RuneSelf && c != '\\' {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			h = (h ^ uint64(c)) * fnvPrime
			i++
			continue
		}
		var r rune
		r, i = nextRune(raw, i)
		h = (h ^ uint64(foldRune(r))) * fnvPrime
	}
	return h
}

// foldCompare orders two validated string bodies by their folded runes.
func foldCompare(a, b []byte) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		var ra, rb rune
		ra, i = nextRune(a, i)
		rb, j = nextRune(b, j)
		if c := cmp.Compare(foldRune(ra), foldRune(rb)); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a)-i, len(b)-j)
}

// foldRune folds one rune the way encoding/json matches names: to the
// smallest rune of its simple-fold orbit (for ASCII letters, upper case).
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			r -= 'a' - 'A'
		}
		return r
	}
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// AppendFold appends the folded form of name, an unescaped member name
// such as [Members] passes, to dst. Two names are duplicates under this
// package's rule exactly when their folded forms are equal, and
// encoding/json (v1) matches a member to a struct field exactly when their
// folded forms are equal: ASCII letters fold to upper case and every other
// rune to the smallest rune of its simple-fold orbit ("uri", "URI" and
// "Uri" all fold to "URI"; "\u212aind", with a KELVIN SIGN, folds to
// "KIND"). Invalid UTF-8 in name folds to U+FFFD, as in encoding/json.
func AppendFold(dst, name []byte) []byte {
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(name[i:])
		dst = utf8.AppendRune(dst, foldRune(r))
		i += n
	}
	return dst
}

// nextRune decodes the rune at raw[i] of a validated string body (escapes
// included) and returns it with the index of the next one. On bytes that
// are not a validated body it returns U+FFFD and moves on, never past the
// end.
func nextRune(raw []byte, i int) (rune, int) {
	c := raw[i]
	if c >= utf8.RuneSelf {
		r, n := utf8.DecodeRune(raw[i:])
		return r, i + n
	}
	if c != '\\' {
		return rune(c), i + 1
	}
	if i+1 >= len(raw) {
		return utf8.RuneError, len(raw)
	}
	switch raw[i+1] {
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	case 'u':
		r, ok := hex4(raw, i+2)
		switch {
		case !ok:
			return utf8.RuneError, len(raw)
		case r < 0xD800 || r >= 0xE000:
			return r, i + 6
		}
		r2, ok := hex4(raw, i+8)
		if !ok || r >= 0xDC00 || r2 < 0xDC00 || r2 >= 0xE000 {
			return utf8.RuneError, min(i+6, len(raw))
		}
		return (r-0xD800)<<10 | (r2 - 0xDC00) + 0x10000, i + 12
	}
	return rune(raw[i+1]), i + 2 // " \ /
}

// appendUnescaped appends the text of a validated string body.
func appendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			dst = append(dst, raw[i:j]...)
			i = j
			continue
		}
		var r rune
		r, i = nextRune(raw, i)
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// unescapeNext writes the next piece of the validated string body raw at
// i into buf (at least 4 bytes): one byte as is, or the UTF-8 of one
// escape. It returns the piece's length and the index after it.
func unescapeNext(buf []byte, raw []byte, i int) (n, next int) {
	if raw[i] != '\\' {
		buf[0] = raw[i]
		return 1, i + 1
	}
	r, next := nextRune(raw, i)
	return utf8.EncodeRune(buf, r), next
}
