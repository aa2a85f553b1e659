// Package staticindex indexes an inventory's static resources by class:
// the statics that share an access mode and a scope set, each class
// holding its members' registry indices in ascending order. Whether a
// caller sees a static depends on its class alone, so a caller's shown
// statics are the union of the classes it sees, and the offset-th of them
// (a cursor's position) is found by binary search over the classes, not
// by visiting every static before it: a page costs what the first page
// costs at any position, and a list source's page nothing for the
// statics. The cost grows with the number of distinct scope sets among
// the statics (a handful in practice), never with the number of statics.
//
// A gated inventory decides every static for each caller anyway (its
// cursors are bound to what the caller may see, static by static): it
// keeps the walk. Every page of it, the first included, costs the number
// of statics, so a deep page costs what the first does there too
// (BenchmarkFlatGatedStaticPage: 0.98 to 1.25 at 100,000 statics); a
// page that did not decide every static could not check that the
// caller's view is still the one its cursor was sealed for.
//
// The package is internal: inventory is its one user.
package staticindex

import (
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/principal"
)

// Max bounds the statics of one index: their indices are kept as int32,
// and a cursor's offset is at most 1<<20.
const Max = 1 << 20

// class is the statics of one access mode and scope set.
type class struct {
	public  bool
	scopes  []string // sorted, de-duplicated; shared with the members
	members []int32  // registry indices, ascending
}

// Index is the statics of an inventory by class. The zero Index has no
// statics. It is immutable after New and safe for concurrent use.
type Index struct {
	classes []class
	n       int
}

// New indexes n statics (at most Max), in order of each class's first
// member: classOf(i) says whether static i is public, and the scopes it
// requires otherwise (sorted, de-duplicated, scope tokens: no space).
func New(n int, classOf func(i int) (public bool, scopes []string)) Index {
	x := Index{n: n}
	byKey := make(map[string]int)
	for i := range n {
		public, scopes := classOf(i)
		key := "\x00"
		if !public {
			key = strings.Join(scopes, " ") // scope tokens hold no space
		}
		c, ok := byKey[key]
		if !ok {
			c = len(x.classes)
			byKey[key] = c
			x.classes = append(x.classes, class{public: public, scopes: scopes})
		}
		x.classes[c].members = append(x.classes[c].members, int32(i))
	}
	for i := range x.classes {
		x.classes[i].members = slices.Clip(x.classes[i].members)
	}
	return x
}

// Scratch holds one request's buffers of Shown and Seek. Keep it across
// requests (pooled): after the first requests they allocate nothing.
type Scratch struct {
	lists [][]int32 // the classes a caller sees
	heap  []int     // their merge (Traversal)
}

// Shown sets sc to the classes caller sees and returns how many statics
// they hold together, and whether they are all of the classes.
func (x *Index) Shown(sc *Scratch, caller *principal.Principal) (total int, all bool) {
	sc.lists = sc.lists[:0]
	for i := range x.classes {
		c := &x.classes[i]
		if c.public || caller != nil && caller.HasScopes(c.scopes...) {
			sc.lists = append(sc.lists, c.members)
			total += len(c.members)
		}
	}
	return total, len(sc.lists) == len(x.classes)
}

// Traversal is a traversal of the statics one caller is shown, in
// registry order: a k-way merge of the classes it sees (a min-heap of the
// lists by their next member), or all of them.
type Traversal struct {
	all   bool
	next  int       // all: the next registry index
	n     int       // all: the number of statics
	lists [][]int32 // the rest of each shown class's members
	heap  []int     // indices into lists, by lists[i][0]; each list non-empty
}

// Seek returns the traversal of caller's shown statics from the offset-th
// on (offset at most their number, see Shown). It uses sc, which it
// leaves to the traversal.
func (x *Index) Seek(sc *Scratch, caller *principal.Principal, offset int) Traversal {
	if _, all := x.Shown(sc, caller); all {
		return Traversal{all: true, next: offset, n: x.n}
	}
	lists := sc.lists
	// at: the smallest registry index with offset shown statics before it.
	// Shown statics before index at number sum(lowerBound(list, at)),
	// which grows by at most one from at to at+1.
	at := offset
	if len(lists) > 1 {
		lo, hi := 0, x.n
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if countBefore(lists, int32(mid)) < offset {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		at = lo
	}
	t := Traversal{lists: lists[:0], heap: sc.heap[:0]}
	for _, l := range lists {
		var rest []int32
		if len(lists) == 1 {
			rest = l[min(offset, len(l)):]
		} else {
			j, _ := slices.BinarySearch(l, int32(at))
			rest = l[j:]
		}
		if len(rest) > 0 {
			t.lists = append(t.lists, rest)
		}
	}
	for i := range t.lists {
		t.heap = append(t.heap, i)
		t.up(len(t.heap) - 1)
	}
	sc.heap = t.heap
	return t
}

// countBefore returns how many members of lists are below x.
func countBefore(lists [][]int32, x int32) int {
	n := 0
	for _, l := range lists {
		j, _ := slices.BinarySearch(l, x)
		n += j
	}
	return n
}

// Peek returns the next shown static's registry index, or -1 at the end.
func (t *Traversal) Peek() int {
	if t.all {
		if t.next < t.n {
			return t.next
		}
		return -1
	}
	if len(t.heap) == 0 {
		return -1
	}
	return int(t.lists[t.heap[0]][0])
}

// Pop moves past the static Peek returned.
func (t *Traversal) Pop() {
	if t.all {
		t.next++
		return
	}
	top := t.heap[0]
	t.lists[top] = t.lists[top][1:]
	if len(t.lists[top]) == 0 {
		last := len(t.heap) - 1
		t.heap[0] = t.heap[last]
		t.heap = t.heap[:last]
	}
	t.down(0)
}

func (t *Traversal) less(a, b int) bool {
	return t.lists[t.heap[a]][0] < t.lists[t.heap[b]][0]
}

func (t *Traversal) up(j int) {
	for j > 0 {
		p := (j - 1) / 2
		if !t.less(j, p) {
			return
		}
		t.heap[p], t.heap[j] = t.heap[j], t.heap[p]
		j = p
	}
}

func (t *Traversal) down(j int) {
	n := len(t.heap)
	for {
		l := 2*j + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && t.less(r, l) {
			m = r
		}
		if !t.less(m, j) {
			return
		}
		t.heap[m], t.heap[j] = t.heap[j], t.heap[m]
		j = m
	}
}
