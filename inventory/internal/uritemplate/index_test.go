package uritemplate

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// drawIndexTemplate draws a template from a small alphabet of literals
// and expressions, so that random sets share beginnings and ends often
// and overlap sometimes.
func drawIndexTemplate(r *rand.Rand) (*Template, string) {
	lits := []string{"x://", "x://a", "x://ab", "y://", "/", ".json", ".js", "on", "a", "b", "-"}
	exprs := []string{"{v}", "{+v}", "{v:3}", "{/v}", "{.v}", "{?v}", "{#v}", "{v,w}"}
	for {
		var b strings.Builder
		b.WriteString(lits[r.IntN(4)])
		for used := range 1 + r.IntN(3) {
			if r.IntN(3) > 0 {
				e := exprs[r.IntN(len(exprs))]
				e = strings.ReplaceAll(e, "v", "v"+strconv.Itoa(used))
				b.WriteString(strings.ReplaceAll(e, "w", "w"+strconv.Itoa(used)))
			}
			if r.IntN(2) == 0 {
				b.WriteString(lits[4+r.IntN(len(lits)-4)])
			}
		}
		if t, err := Parse(b.String()); err == nil {
			return t, b.String()
		}
	}
}

// The index against every earlier template in order: the same first
// overlapping template and the same witness, for each template of random
// sets (added whether or not it overlaps, so that the sets grow).
func TestIndexMatchesQuadraticSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 41))
	found, searched := 0, 0
	for round := range 300 {
		x := NewIndex()
		var added []*Template
		for range 2 + r.IntN(12) {
			ut, raw := drawIndexTemplate(r)
			wantJ, wantW := -1, ""
			for j, other := range added {
				if w, ok := Overlap(other, ut, OverlapBudget); ok {
					wantJ, wantW = j, w
					break
				}
			}
			j, w, ok := x.FirstOverlap(ut, OverlapBudget)
			require.Equal(t, wantJ >= 0, ok, "round %d: %s", round, raw)
			require.Equal(t, wantJ, j, "round %d: %s", round, raw)
			require.Equal(t, wantW, w, "round %d: %s", round, raw)
			if ok {
				found++
			}
			searched++
			x.Add(ut)
			added = append(added, ut)
		}
	}
	require.Greater(t, found, searched/10, "the random sets overlap often enough to test the index")
	require.Less(t, found, searched*9/10, "and are disjoint often enough")
}

// Templates of disjoint literal beginnings are never searched: the index
// offers no candidate.
func TestIndexCandidatesByLiterals(t *testing.T) {
	x := NewIndex()
	for _, s := range []string{"a://x/{id}", "b://y/{id}.json", "a://x/{id}.md", "{+any}"} {
		ut, err := Parse(s)
		require.NoError(t, err)
		x.Add(ut)
	}
	for _, c := range []struct {
		prefix, suffix string
		want           []int
	}{
		{"a://x/", "", []int{0, 2, 3}},
		{"a://x/", ".json", []int{0, 3}},
		{"b://", ".json", []int{1, 3}},
		{"c://", "", []int{3}},
	} {
		assert.Equal(t, c.want, append([]int{}, x.candidates(c.prefix, c.suffix)...), "%q…%q", c.prefix, c.suffix)
	}
}

// Literals: what every matching URI begins and ends with.
func TestTemplateLiterals(t *testing.T) {
	for _, c := range []struct{ tmpl, prefix, suffix string }{
		{"x://a/{id}.json", "x://a/", ".json"},
		{"x://a", "x://a", "x://a"},
		{"{+base}/z", "", "/z"},
		{"x://{id}{?q}", "x://", ""},
	} {
		ut, err := Parse(c.tmpl)
		require.NoError(t, err)
		p, s := ut.Literals()
		assert.Equal(t, c.prefix, p, c.tmpl)
		assert.Equal(t, c.suffix, s, c.tmpl)
	}
}
