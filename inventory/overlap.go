package inventory

// This file decides whether two templates could match the same URI: the
// intersection of two regular languages, by a search of the product of
// their automata.
//
// A template becomes a list of units: one per literal byte and one per
// expression. A state is (unit, sub) where, for an expression, sub 0 means
// "no value unit read yet", 1 "at least one read, at a unit boundary",
// 2 "read '%'", 3 "read '%' and one hex digit". State (len(units), 0)
// accepts. An expression in sub 1 may also end: (u, 1) has an ε-move to
// (u+1, 0).

type unitSpec struct {
	lit   byte
	isVar bool
	class uint8
}

type automaton struct {
	units []unitSpec
}

func newAutomaton(t *uriTemplate) automaton {
	var a automaton
	for _, p := range t.parts {
		if p.name != "" {
			a.units = append(a.units, unitSpec{isVar: true, class: varClass(p.reserved)})
			continue
		}
		for i := 0; i < len(p.lit); i++ {
			a.units = append(a.units, unitSpec{lit: p.lit[i]})
		}
	}
	return a
}

func (a automaton) states() int          { return 4 * (len(a.units) + 1) }
func (a automaton) accepting(s int) bool { return s == 4*len(a.units) }
func state(u, sub int) int               { return 4*u + sub }
func (a automaton) epsilon(s int) (int, bool) {
	u, sub := s/4, s%4
	if u < len(a.units) && a.units[u].isVar && sub == 1 {
		return state(u+1, 0), true
	}
	return 0, false
}

// step returns the state after reading b from s, if any. Every state has
// at most one successor per byte.
func (a automaton) step(s int, b byte) (int, bool) {
	u, sub := s/4, s%4
	if u == len(a.units) {
		return 0, false
	}
	us := a.units[u]
	if !us.isVar {
		if b == us.lit {
			return state(u+1, 0), true
		}
		return 0, false
	}
	switch sub {
	case 0, 1:
		if charClass[b]&us.class != 0 {
			return state(u, 1), true
		}
		if b == '%' {
			return state(u, 2), true
		}
	case 2:
		if charClass[b]&clHex != 0 {
			return state(u, 3), true
		}
	case 3:
		if charClass[b]&clHex != 0 {
			return state(u, 1), true
		}
	}
	return 0, false
}

// closure returns s and the states reachable from it by ε-moves.
func (a automaton) closure(s int, out []int) []int {
	out = append(out, s)
	for {
		n, ok := a.epsilon(s)
		if !ok {
			return out
		}
		out = append(out, n)
		s = n
	}
}

// alphabet returns one byte per class of bytes the two automata cannot
// tell apart: every literal byte itself, and one representative of every
// other combination of character classes.
func alphabet(a, b automaton) []byte {
	var inLit [256]bool
	var out []byte
	for _, x := range [2]automaton{a, b} {
		for _, u := range x.units {
			if !u.isVar && !inLit[u.lit] {
				inLit[u.lit] = true
				out = append(out, u.lit)
			}
		}
	}
	var seen [256]bool // indexed by class signature
	for c := 0; c < 256; c++ {
		if inLit[c] {
			continue
		}
		sig := charClass[c] & (clVar | clReserved | clHex)
		if c == '%' {
			sig = 0xff
		}
		if !seen[sig] {
			seen[sig] = true
			out = append(out, byte(c))
		}
	}
	return out
}

// overlap reports whether some URI matches both templates, and returns the
// shortest such URI as a witness (for error messages).
func overlap(t1, t2 *uriTemplate) (string, bool) {
	a, b := newAutomaton(t1), newAutomaton(t2)
	sigma := alphabet(a, b)
	nb := b.states()
	type node struct {
		pair int
		prev int // index of the predecessor in queue, -1 for a start
		sym  byte
	}
	visited := make([]bool, a.states()*nb)
	var queue []node
	push := func(sa, sb, prev int, sym byte) {
		var ca, cb [4]int
		for _, x := range a.closure(sa, ca[:0]) {
			for _, y := range b.closure(sb, cb[:0]) {
				if p := x*nb + y; !visited[p] {
					visited[p] = true
					queue = append(queue, node{pair: p, prev: prev, sym: sym})
				}
			}
		}
	}
	push(0, 0, -1, 0)
	for i := 0; i < len(queue); i++ {
		sa, sb := queue[i].pair/nb, queue[i].pair%nb
		if a.accepting(sa) && b.accepting(sb) {
			var w []byte
			for j := i; queue[j].prev >= 0; j = queue[j].prev {
				w = append(w, queue[j].sym)
			}
			for l, r := 0, len(w)-1; l < r; l, r = l+1, r-1 {
				w[l], w[r] = w[r], w[l]
			}
			return string(w), true
		}
		for _, c := range sigma {
			na, ok := a.step(sa, c)
			if !ok {
				continue
			}
			nb2, ok := b.step(sb, c)
			if !ok {
				continue
			}
			push(na, nb2, i, c)
		}
	}
	return "", false
}
