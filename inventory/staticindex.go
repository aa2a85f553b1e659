package inventory

import (
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/principal"
)

// The static resources of an inventory without gates are indexed by
// class: the statics that share an access mode and a scope set, each class
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

// staticClass is the statics of one access mode and scope set.
type staticClass struct {
	public  bool
	scopes  []string // sorted, de-duplicated; shared with the members
	members []int32  // registry indices, ascending
}

// maxStatics bounds the static resources of one inventory: their indices
// are kept as int32, and a cursor's offset is at most 1<<20.
const maxStatics = 1 << 20

// indexStatics groups the statics into classes, in order of each class's
// first member.
func (inv *Inventory) indexStatics() {
	byKey := make(map[string]int)
	for i := range inv.statics {
		st := &inv.statics[i]
		key := "\x00"
		if st.res.Access != Public {
			key = strings.Join(st.scopes(), " ") // scope tokens hold no space
		}
		c, ok := byKey[key]
		if !ok {
			c = len(inv.classes)
			byKey[key] = c
			inv.classes = append(inv.classes, staticClass{public: st.res.Access == Public, scopes: st.scopes()})
		}
		inv.classes[c].members = append(inv.classes[c].members, int32(i))
	}
	for i := range inv.classes {
		inv.classes[i].members = slices.Clip(inv.classes[i].members)
	}
}

// shownClasses sets sc.lists to the member lists of the classes caller
// sees and returns how many statics they hold together, and whether they
// are all of the classes.
func (inv *Inventory) shownClasses(sc *scratch, caller *principal.Principal) (total int, all bool) {
	sc.lists = sc.lists[:0]
	for i := range inv.classes {
		c := &inv.classes[i]
		if c.public || caller != nil && caller.HasScopes(c.scopes...) {
			sc.lists = append(sc.lists, c.members)
			total += len(c.members)
		}
	}
	return total, len(sc.lists) == len(inv.classes)
}

// shownStatics is a traversal of the statics one caller is shown, in
// registry order: a k-way merge of the classes it sees (a min-heap of the
// lists by their next member), or all of them.
type shownStatics struct {
	all   bool
	next  int       // all: the next registry index
	n     int       // all: the number of statics
	lists [][]int32 // the rest of each shown class's members
	heap  []int     // indices into lists, by lists[i][0]; each list non-empty
}

// seekStatics returns the traversal of caller's shown statics from the
// offset-th on (offset at most their number, see shownClasses).
func (inv *Inventory) seekStatics(sc *scratch, caller *principal.Principal, offset int) shownStatics {
	if _, all := inv.shownClasses(sc, caller); all {
		return shownStatics{all: true, next: offset, n: len(inv.statics)}
	}
	lists := sc.lists
	// x: the smallest registry index with offset shown statics before it.
	// Shown statics before index x number sum(lowerBound(list, x)), which
	// grows by at most one from x to x+1.
	x := offset
	if len(lists) > 1 {
		lo, hi := 0, len(inv.statics)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if countBefore(lists, int32(mid)) < offset {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		x = lo
	}
	t := shownStatics{lists: lists[:0], heap: sc.heap[:0]}
	for _, l := range lists {
		var rest []int32
		if len(lists) == 1 {
			rest = l[min(offset, len(l)):]
		} else {
			j, _ := slices.BinarySearch(l, int32(x))
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

// peek returns the next shown static's registry index, or -1 at the end.
func (t *shownStatics) peek() int {
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

// pop moves past the static peek returned.
func (t *shownStatics) pop() {
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

func (t *shownStatics) less(a, b int) bool {
	return t.lists[t.heap[a]][0] < t.lists[t.heap[b]][0]
}

func (t *shownStatics) up(j int) {
	for j > 0 {
		p := (j - 1) / 2
		if !t.less(j, p) {
			return
		}
		t.heap[p], t.heap[j] = t.heap[j], t.heap[p]
		j = p
	}
}

func (t *shownStatics) down(j int) {
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
