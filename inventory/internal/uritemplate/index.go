package uritemplate

import (
	"slices"
	"strings"
)

// Index finds, among the templates added so far, those that could match a
// URI a new template matches, without comparing every pair: two templates
// share a URI only if the literal text one begins with begins the other's,
// and the literal text one ends with ends the other's (Literals). Two byte
// tries, of the beginnings and of the ends read backwards, give the
// templates compatible on each side (those on the new template's path, and
// those below its end); the smaller side is enumerated and filtered by the
// other, and only what remains is searched for an overlap (Overlap).
// Templates that share both their literal beginning and end (say, all
// "app://{tenant}/{id}") are still searched pair by pair: the check is
// quadratic within such a group only.
//
// Make one with NewIndex. An Index is not safe for concurrent use.
type Index struct {
	begins, ends     trie
	prefixes, suffix []string    // by template index
	templates        []*Template // by template index
	scratch          []int
}

// NewIndex returns an empty Index.
func NewIndex() *Index { return &Index{ends: trie{back: true}} }

// trie is a byte trie of strings, read forwards or backwards.
type trie struct {
	root trieNode
	back bool // keys are read from their end
}

type trieNode struct {
	ids      []int // templates whose key ends here
	below    int   // ids here and in every node below
	children map[byte]*trieNode
}

func (t *trie) at(key string, i int) byte {
	if t.back {
		return key[len(key)-1-i]
	}
	return key[i]
}

func (t *trie) add(key string, id int) {
	n := &t.root
	n.below++
	for i := range len(key) {
		c := n.children[t.at(key, i)]
		if c == nil {
			c = &trieNode{}
			if n.children == nil {
				n.children = map[byte]*trieNode{}
			}
			n.children[t.at(key, i)] = c
		}
		n = c
		n.below++
	}
	n.ids = append(n.ids, id)
}

// count returns how many keys are compatible with key: a prefix of it
// (read in the trie's direction), or extending it.
func (t *trie) count(key string) int {
	n, total := &t.root, 0
	for i := 0; ; i++ {
		if i == len(key) {
			return total + n.below
		}
		total += len(n.ids)
		if n = n.children[t.at(key, i)]; n == nil {
			return total
		}
	}
}

// collect appends the ids of the keys compatible with key.
func (t *trie) collect(key string, out []int) []int {
	n := &t.root
	for i := 0; ; i++ {
		if i == len(key) {
			return n.collectAll(out)
		}
		out = append(out, n.ids...)
		if n = n.children[t.at(key, i)]; n == nil {
			return out
		}
	}
}

func (n *trieNode) collectAll(out []int) []int {
	out = append(out, n.ids...)
	for _, c := range n.children {
		out = c.collectAll(out)
	}
	return out
}

// compatible reports whether one of a and b begins (back: ends) the other.
func compatible(a, b string, back bool) bool {
	if back {
		return strings.HasSuffix(a, b) || strings.HasSuffix(b, a)
	}
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

// candidates returns, in the order they were added, the templates added
// so far that could overlap one beginning with prefix and ending with
// suffix. The slice is valid until the next call.
func (x *Index) candidates(prefix, suffix string) []int {
	out := x.scratch[:0]
	if x.begins.count(prefix) <= x.ends.count(suffix) {
		out = x.begins.collect(prefix, out)
		out = slices.DeleteFunc(out, func(id int) bool { return !compatible(x.suffix[id], suffix, true) })
	} else {
		out = x.ends.collect(suffix, out)
		out = slices.DeleteFunc(out, func(id int) bool { return !compatible(x.prefixes[id], prefix, false) })
	}
	slices.Sort(out)
	x.scratch = out
	return out
}

// Add adds t, as the next index (the number of templates added before it).
func (x *Index) Add(t *Template) {
	prefix, suffix := t.Literals()
	id := len(x.templates)
	x.begins.add(prefix, id)
	x.ends.add(suffix, id)
	x.prefixes = append(x.prefixes, prefix)
	x.suffix = append(x.suffix, suffix)
	x.templates = append(x.templates, t)
}

// FirstOverlap returns the index of the earliest added template that may
// match a URI t matches, and the witness (Overlap's, with budget: "" when
// the search ran out of it), or false when there is none.
func (x *Index) FirstOverlap(t *Template, budget int) (int, string, bool) {
	prefix, suffix := t.Literals()
	for _, j := range x.candidates(prefix, suffix) {
		if w, ok := Overlap(x.templates[j], t, budget); ok {
			return j, w, true
		}
	}
	return -1, "", false
}
