package inventory

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/inventory/internal/uritemplate"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Templates whose overlap search runs out of budget are refused as too
// complex, not accepted: the reads of one could be served by the other.
func TestNewRefusesTemplatesTooComplexToProveDisjoint(t *testing.T) {
	tmpls := []Template{
		// Same literal beginning and end (so the overlap index must search
		// them), disjoint only by the '/' that b's value cannot hold.
		{Name: "a", URITemplate: "x://{a:300}/{c}.json", Access: Public, Read: TextReader("text/plain", "")},
		{Name: "b", URITemplate: "x://{b:299}.json", Access: Public, Read: TextReader("text/plain", "")},
	}
	_, err := New(nil, tmpls, Options{})
	require.NoError(t, err, "disjoint within the default budget")

	defer func(n int) { overlapBudget = n }(overlapBudget)
	overlapBudget = 100
	_, err = New(nil, tmpls, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `templates "a" and "b" are too complex to prove that no URI matches both`)
}

// quadraticOverlap is the check New made before the overlap index: each
// template against every earlier one, in order. It returns the first
// pair that may share a URI and the witness, or -1.
func quadraticOverlap(t *testing.T, tmpls []Template) (int, int, string) {
	t.Helper()
	var uts []*uritemplate.Template
	for i, tm := range tmpls {
		ut, err := uritemplate.Parse(tm.URITemplate)
		require.NoError(t, err)
		for j, other := range uts {
			if w, ok := uritemplate.Overlap(other, ut, overlapBudget); ok {
				return j, i, w
			}
		}
		uts = append(uts, ut)
	}
	return -1, -1, ""
}

// randomTemplate draws from a small alphabet of literals and expressions,
// so that random sets share beginnings and ends often and overlap
// sometimes.
func randomTemplate(r *rand.Rand) string {
	for {
		s := drawTemplate(r)
		if _, err := uritemplate.Parse(s); err == nil {
			return s
		}
	}
}

func drawTemplate(r *rand.Rand) string {
	lits := []string{"x://", "x://a", "x://ab", "y://", "/", ".json", ".js", "on", "a", "b", "-"}
	exprs := []string{"{v}", "{+v}", "{v:3}", "{/v}", "{.v}", "{?v}", "{#v}", "{v,w}"}
	var b strings.Builder
	b.WriteString(lits[r.IntN(4)])
	n := 1 + r.IntN(3)
	used := 0
	for range n {
		if r.IntN(3) > 0 {
			e := exprs[r.IntN(len(exprs))]
			e = strings.ReplaceAll(e, "v", "v"+strconv.Itoa(used))
			e = strings.ReplaceAll(e, "w", "w"+strconv.Itoa(used))
			used++
			b.WriteString(e)
		}
		if r.IntN(2) == 0 {
			b.WriteString(lits[4+r.IntN(len(lits)-4)])
		}
	}
	return b.String()
}

// The overlap index against the quadratic check on random template sets:
// New refuses exactly the sets the quadratic check refuses, naming the
// same pair and witness.
func TestOverlapIndexMatchesQuadraticCheck(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 41))
	refused := 0
	for round := range 800 {
		var tmpls []Template
		for i := range 2 + r.IntN(8) {
			tmpls = append(tmpls, Template{Name: "t" + strconv.Itoa(i), URITemplate: randomTemplate(r), Access: Public, Read: TextReader("text/plain", "")})
		}
		j, i, w := quadraticOverlap(t, tmpls)
		_, err := New(nil, tmpls, Options{})
		if j < 0 {
			require.NoError(t, err, "round %d: %v", round, tmpls)
			continue
		}
		refused++
		require.Error(t, err, "round %d: %v", round, tmpls)
		want := fmt.Sprintf("inventory: templates %q and %q can match the same URI (for example %q)", tmpls[j].Name, tmpls[i].Name, w)
		if w == "" {
			want = fmt.Sprintf("inventory: templates %q and %q are too complex to prove that no URI matches both", tmpls[j].Name, tmpls[i].Name)
		}
		require.Equal(t, want, err.Error(), "round %d: %v", round, tmpls)
	}
	require.Greater(t, refused, 100, "the random sets overlap often enough to test the index")
	require.Less(t, refused, 750, "and are disjoint often enough")
}
