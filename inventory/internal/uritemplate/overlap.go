package uritemplate

// This file decides whether two templates could match the same URI: the
// intersection of two regular languages, by a breadth-first search of the
// product of their automata.
//
// A template's automaton runs on its nodes (see node): a lane is a
// position in it — a node, and inside a literal the bytes read, inside a
// value the progress through the current unit (a raw byte, a triplet, the
// triplets of one UTF-8 character), the characters read (for a prefix
// modifier) and the state of the %25 rule of scanValue. The automaton
// accepts exactly what match accepts: both are built on the same nodes,
// and the value steps below spell out unitAt, scanValue's %25 rule and
// the prefix count one byte at a time.

// OverlapBudget is the budget of Overlap that the inventory uses: the
// pairs of lanes one search may visit. Templates whose search would need
// more are treated as overlapping (inventory.New refuses them): only
// prefix modifiers of hundreds of characters, which the search must
// count, get there.
const OverlapBudget = 1 << 18

// lane is a state of a template's automaton.
type lane struct {
	node   int32
	off    uint16 // nLit: bytes of the literal read
	cnt    uint16 // nVal: characters read (1 at most without a prefix modifier)
	ph     uint8  // nVal: 0 between units, 1 after '%', 2 after '%' and a hex digit, 3 expecting the '%' of a continuation byte
	nib    uint8  // nVal, ph 2: the first hex digit
	need   uint8  // nVal: continuation bytes still to read in the character
	lo, hi uint8  // nVal: the range of the next continuation byte
	mode   uint8  // nVal, reserved: 1 after %25, 2 after %25 and a hex digit
}

// step returns the lane after reading c, if any: every lane has at most
// one successor per byte.
func (t *Template) step(l lane, c byte, relax bool) (lane, bool) {
	n := &t.nodes[l.node]
	switch n.kind {
	case nLit:
		if n.lit[l.off] != c {
			return lane{}, false
		}
		l.off++
		if int(l.off) == len(n.lit) {
			return lane{node: n.next}, true
		}
		return l, true
	case nVal:
		return stepValue(n, l, c, relax)
	}
	return lane{}, false
}

func stepValue(n *node, l lane, c byte, relax bool) (lane, bool) {
	switch l.ph {
	case 0:
		if c == '%' {
			l.ph = 1
			return l, true
		}
		if charClass[c]&valueClass(n.reserved) == 0 {
			return lane{}, false
		}
		return unitRead(n, l, hexFlag(c), relax)
	case 1:
		if charClass[c]&clHex == 0 {
			return lane{}, false
		}
		l.nib, l.ph = unhex(c), 2
		return l, true
	case 2:
		if charClass[c]&clHex == 0 {
			return lane{}, false
		}
		b := l.nib<<4 | unhex(c)
		l.nib = 0
		if l.need > 0 { // a continuation byte
			if b < l.lo || b > l.hi {
				return lane{}, false
			}
			if l.need--; l.need == 0 {
				l.lo, l.hi = 0, 0
				return unitRead(n, l, 0, relax)
			}
			l.ph, l.lo, l.hi = 3, 0x80, 0xBF
			return l, true
		}
		if b < 0x80 {
			if n.reserved && charClass[b]&clR != 0 {
				return lane{}, false
			}
			f := hexFlag(b)
			if b == '%' {
				f = fPct25
			}
			return unitRead(n, l, f, relax)
		}
		need, lo, hi := utf8Lead(b)
		if need == 0 {
			return lane{}, false
		}
		l.ph, l.need, l.lo, l.hi = 3, uint8(need), lo, hi
		return l, true
	case 3:
		if c != '%' {
			return lane{}, false
		}
		l.ph = 1
		return l, true
	}
	return lane{}, false
}

// unitRead completes a unit with flags f; relax ignores prefix modifiers.
func unitRead(n *node, l lane, f uint8, relax bool) (lane, bool) {
	l.ph = 0
	if n.prefix == 0 || relax {
		l.cnt = 1
	} else if l.cnt++; int32(l.cnt) > n.prefix {
		return lane{}, false
	}
	if n.reserved {
		switch {
		case f == fPct25:
			l.mode = 1
		case f == fHex && l.mode == 2:
			return lane{}, false
		case f == fHex && l.mode == 1:
			l.mode = 2
		default:
			l.mode = 0
		}
	}
	return l, true
}

// split returns whether l itself reads bytes or accepts (it is not on a
// split or a mark), and the node it can move on to without reading a
// byte: its own for a split or a mark, the next one for a value between
// units that may end there; -1 for none.
func (t *Template) split(l lane) (bool, int32) {
	n := &t.nodes[l.node]
	switch n.kind {
	case nSplit, nMark:
		return false, l.node
	case nVal:
		if l.ph == 0 && (l.cnt > 0 || !n.nonEmpty) {
			return true, n.next
		}
	}
	return true, -1
}

// closure appends l and the lanes reachable from it without reading a
// byte: the alternatives of splits, past marks, and out of a value
// between units.
func (t *Template) closure(l lane, out []lane) []lane {
	n := &t.nodes[l.node]
	switch n.kind {
	case nSplit:
		for _, a := range n.alts {
			out = t.closure(lane{node: a}, out)
		}
		return out
	case nMark:
		return t.closure(lane{node: n.next}, out)
	case nVal:
		out = append(out, l)
		if l.ph == 0 && (l.cnt > 0 || !n.nonEmpty) {
			out = t.closure(lane{node: n.next}, out)
		}
		return out
	}
	return append(out, l)
}

// alphabetOrder is every byte, letters and digits first: the search
// tries bytes in this order, so witnesses read naturally.
var alphabetOrder = func() []byte {
	var b []byte
	for c := 0; c < 256; c++ {
		if charClass[c]&clVarchar != 0 {
			b = append(b, byte(c))
		}
	}
	for c := 0; c < 256; c++ {
		if charClass[c]&clVarchar == 0 {
			b = append(b, byte(c))
		}
	}
	return b
}()

// key packs a lane into 53 bits: node (16), off (12), cnt (12), ph (2),
// nib (4), need (2), the continuation range (3) and mode (2).
func (l lane) key() uint64 {
	var r uint64
	switch {
	case l.lo == 0x80 && l.hi == 0xBF:
		r = 1
	case l.lo == 0xA0:
		r = 2
	case l.hi == 0x9F:
		r = 3
	case l.lo == 0x90:
		r = 4
	case l.hi == 0x8F:
		r = 5
	}
	return uint64(l.node) | uint64(l.off)<<16 | uint64(l.cnt)<<28 | uint64(l.ph)<<40 |
		uint64(l.nib)<<42 | uint64(l.need)<<46 | r<<48 | uint64(l.mode)<<51
}

// valueSigma is what a pair of lanes both inside values can tell apart:
// '%', the hexadecimal digits by value, and one byte of every other
// combination of the value classes. (A lane in a literal reads its next
// byte only.)
var valueSigma = func() []byte {
	b := []byte("%0123456789ABCDEF")
	var seen [256]bool
	for _, c := range alphabetOrder {
		if sig := charClass[c] & (clU | clR); c != '%' && charClass[c]&clHex == 0 && sig != 0 && !seen[sig] {
			seen[sig] = true
			b = append(b, c)
		}
	}
	return b
}()

// symbols returns the bytes worth trying from the pair (a, b): those that
// can lead somewhere different.
func symbols(t1, t2 *Template, a, b lane, one *[1]byte) []byte {
	na, nb := &t1.nodes[a.node], &t2.nodes[b.node]
	if na.kind == nAccept || nb.kind == nAccept {
		return nil
	}
	switch {
	case na.kind == nLit:
		one[0] = na.lit[a.off]
	case nb.kind == nLit:
		one[0] = nb.lit[b.off]
	case a.ph == 3 || b.ph == 3:
		one[0] = '%'
	default:
		return valueSigma
	}
	return one[:]
}

// live reports whether the pair (a, b) may lead to a URI of both: both
// accept, or neither does and a byte that one of them needs next (in a
// literal) the other can read. Leaving dead pairs out saves the search
// the many pairs that named expressions' alternatives make.
func live(t1, t2 *Template, a, b lane, relax bool) bool {
	na, nb := &t1.nodes[a.node], &t2.nodes[b.node]
	if na.kind == nAccept || nb.kind == nAccept {
		return na.kind == nb.kind
	}
	switch {
	case na.kind == nLit:
		_, ok := t2.step(b, na.lit[a.off], relax)
		return ok
	case nb.kind == nLit:
		_, ok := t1.step(a, nb.lit[b.off], relax)
		return ok
	}
	return true
}

// Overlap reports whether some URI matches both templates, and returns the
// shortest such URI as a witness (for error messages). A search that
// visits more than budget pairs of lanes reports an overlap without a
// witness.
//
// It searches first without prefix modifiers, a superset of both
// languages: no URI there means none at all, and a witness that matches
// both templates is one. Only when prefixes are what separates them does
// it search again, counting characters.
func Overlap(t1, t2 *Template, budget int) (string, bool) {
	w, ok, done := search(t1, t2, true, budget)
	switch {
	case !done:
		return "", true
	case !ok:
		return "", false
	case t1.Matches(w) && t2.Matches(w):
		return w, true
	}
	w, ok, done = search(t1, t2, false, budget)
	if !done {
		return "", true
	}
	return w, ok
}

// search is the breadth-first search of the product of the automata;
// relax ignores prefix modifiers. done is false when the budget ran out.
//
// Complexity: the breadth-first search of the product automaton with its budget and witness reconstruction, one algorithm in one place.
//
//gocyclo:ignore
func search(t1, t2 *Template, relax bool, budget int) (witness string, ok, done bool) {
	type item struct {
		a, b lane
		prev int32 // index of the predecessor in queue, -1 for a start
		sym  byte
	}
	visited := make(map[[2]uint64]struct{})
	var queue []item
	add := func(x, y lane, prev int32, sym byte) {
		if !live(t1, t2, x, y, relax) {
			return
		}
		k := [2]uint64{x.key(), y.key()}
		if _, dup := visited[k]; !dup {
			visited[k] = struct{}{}
			queue = append(queue, item{a: x, b: y, prev: prev, sym: sym})
		}
	}
	// A lane splits into itself (unless it sits on a split or a mark) and
	// the node it can move on to without reading (-1 for none), whose
	// closure is the same every time: cached per node, and each pair of
	// such nodes crossed once.
	c1, c2 := map[int32][]lane{}, map[int32][]lane{}
	closure := func(t *Template, cache map[int32][]lane, n int32) []lane {
		if n < 0 {
			return nil
		}
		c, ok := cache[n]
		if !ok {
			c = t.closure(lane{node: n}, nil)
			cache[n] = c
		}
		return c
	}
	crossed := map[[2]int32]bool{}
	push := func(a, b lane, prev int32, sym byte) {
		sa, ra := t1.split(a)
		sb, rb := t2.split(b)
		ca, cb := closure(t1, c1, ra), closure(t2, c2, rb)
		if sa && sb {
			add(a, b, prev, sym)
		}
		if sa {
			for _, y := range cb {
				add(a, y, prev, sym)
			}
		}
		if sb {
			for _, x := range ca {
				add(x, b, prev, sym)
			}
		}
		if k := [2]int32{ra, rb}; ra >= 0 && rb >= 0 && !crossed[k] {
			crossed[k] = true
			for _, x := range ca {
				for _, y := range cb {
					add(x, y, prev, sym)
				}
			}
		}
	}
	push(lane{node: t1.start}, lane{node: t2.start}, -1, 0)
	var one [1]byte
	for i := 0; i < len(queue); i++ {
		if len(visited) > budget {
			return "", false, false
		}
		it := queue[i]
		if t1.nodes[it.a.node].kind == nAccept && t2.nodes[it.b.node].kind == nAccept && it.prev >= 0 {
			// (The empty URI, which templates such as "{/x}" spell, matches nothing.)
			var w []byte
			for j := int32(i); queue[j].prev >= 0; j = queue[j].prev {
				w = append(w, queue[j].sym)
			}
			for l, r := 0, len(w)-1; l < r; l, r = l+1, r-1 {
				w[l], w[r] = w[r], w[l]
			}
			return string(w), true, true
		}
		for _, c := range symbols(t1, t2, it.a, it.b, &one) {
			na, ok := t1.step(it.a, c, relax)
			if !ok {
				continue
			}
			nb, ok := t2.step(it.b, c, relax)
			if !ok {
				continue
			}
			push(na, nb, int32(i), c)
		}
	}
	return "", false, true
}

// Literals returns the literal text every URI that matches t begins with
// and the literal text every such URI ends with: the template's first and
// last parts when they are literals, else "". Two templates can match the
// same URI only if one's prefix begins the other's and one's suffix ends
// the other's: a necessary condition, checked before Overlap.
func (t *Template) Literals() (prefix, suffix string) {
	if len(t.parts) == 0 {
		return "", ""
	}
	if p := t.parts[0]; p.expr == nil {
		prefix = p.lit
	}
	if p := t.parts[len(t.parts)-1]; p.expr == nil {
		suffix = p.lit
	}
	return prefix, suffix
}
