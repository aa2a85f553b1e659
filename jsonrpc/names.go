package jsonrpc

import (
	"cmp"
	"slices"
	"unicode"
	"unicode/utf8"
)

// Duplicate member names.
//
// Two names are the same when they are equal after unescaping and case
// folding with the rule encoding/json uses to match struct fields (ASCII
// letters fold to upper case; other runes to the smallest rune of their
// simple-fold orbit, so "K" (U+212A KELVIN SIGN) equals "k"). An object
// whose names are distinct under this rule means the same thing to this
// package, to gjson and to encoding/json (case-insensitive, last wins).
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
func (s *scanner) closeNames(base, obj int, top bool) {
	if hs := s.keys()[base:]; len(hs) > linearNames && (s.bad == "" || top) {
		slices.Sort(hs) // they are dropped next
		for j := 1; j < len(hs); j++ {
			if hs[j] == hs[j-1] {
				s.sortedDuplicates(obj, top)
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
		if foldEqual(d[i.start:i.end], name) {
			return true
		}
	}
	return false
}

type nameEnt struct {
	h          uint64
	start, end int
}

// sortedDuplicates finds the repeated names of the complete object at
// data[obj] by sorting them by (hash, folded text).
func (s *scanner) sortedDuplicates(obj int, top bool) {
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
			s.invalid("duplicate member name")
			if top && foldEqual(a, []byte("id")) {
				s.top.idAmbiguous = true
			}
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

// skipString returns the index after the validated string at d[i].
func skipString(d []byte, i int) int {
	for i++; i < len(d); i++ {
		switch d[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
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
		h = (h ^ uint64(foldName(r))) * fnvPrime
	}
	return h
}

// foldEqual reports whether two validated string bodies are the same name.
func foldEqual(a, b []byte) bool {
	return foldCompare(a, b) == 0
}

// foldCompare orders two validated string bodies by their folded runes.
func foldCompare(a, b []byte) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		var ra, rb rune
		ra, i = nextRune(a, i)
		rb, j = nextRune(b, j)
		if c := cmp.Compare(foldName(ra), foldName(rb)); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a)-i, len(b)-j)
}

// foldName folds one rune the way encoding/json matches names.
func foldName(r rune) rune {
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

// nextRune decodes the rune at raw[i] of a validated string body (escapes
// included) and returns it with the index of the next one.
func nextRune(raw []byte, i int) (rune, int) {
	c := raw[i]
	if c >= utf8.RuneSelf {
		r, n := utf8.DecodeRune(raw[i:])
		return r, i + n
	}
	if c != '\\' {
		return rune(c), i + 1
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
		r, _ := hex4(raw, i+2)
		if r < 0xD800 || r >= 0xE000 {
			return r, i + 6
		}
		r2, _ := hex4(raw, i+8)
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
