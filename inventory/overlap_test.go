package inventory

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		// Overlapping pairs.
		{"docs://documents/{id}", "docs://documents/{name}", true},
		{"docs://documents/{id}", "docs://documents/readme", true},
		{"docs://{kind}/readme", "docs://documents/{id}", true},
		{"file:///{+path}", "file:///etc/{name}", true},
		{"file:///{+path}", "file:///{dir}/{name}", true},
		{"x://{a}-{b}", "x://{c}", true}, // {c} also holds '-'
		{"x://{a}", "x://%41", true},     // a triplet is a value
		{"x://{a}.json", "x://{b}.{ext}", true},
		{"x://a{b}", "x://{c}b", true}, // "x://ab"
		// Disjoint pairs.
		{"docs://documents/{id}", "docs://notes/{id}", false},
		{"docs://documents/{id}", "docs://documents/{id}/versions/{v}", false}, // {id} has no '/'
		{"file:///{+path}", "files:///{+path}", false},
		{"x://{a}", "x://", false},    // values are not empty
		{"x://{a}", "x://a/b", false}, // '/' not in {a}
		{"x://{a}", "x://a?", false},  // '?' never in a value
		{"x://{a}.json", "x://{b}.xml", false},
		{"x://{a}?q", "x://{b}#q", false},
	} {
		t.Run(tc.a+" vs "+tc.b, func(t *testing.T) {
			ta, err := parseTemplate(tc.a)
			require.NoError(t, err)
			tb, err := parseTemplate(tc.b)
			require.NoError(t, err)
			w, got := overlap(ta, tb)
			assert.Equal(t, tc.want, got, "witness %q", w)
			if got {
				assert.True(t, ta.matches(w), "witness %q must match %s", w, tc.a)
				assert.True(t, tb.matches(w), "witness %q must match %s", w, tc.b)
			}
			_, rev := overlap(tb, ta)
			assert.Equal(t, got, rev, "overlap is symmetric")
		})
	}
}

// TestOverlapAgainstBruteForce compares the automaton search with an
// exhaustive search over short URIs, for random small templates.
func TestOverlapAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "b", "/", "-", "{x}", "{+x}", "%41"}
	alphabet := []string{"a", "b", "/", "-", "%41"}
	randTemplate := func() *uriTemplate {
		for {
			var sb strings.Builder
			sb.WriteString("s:")
			for n := rng.IntN(4); n >= 0; n-- {
				sb.WriteString(pieces[rng.IntN(len(pieces))])
			}
			if ut, err := parseTemplate(sb.String()); err == nil {
				return ut
			}
		}
	}
	// All URIs "s:" + up to 4 alphabet units.
	uris := []string{"s:"}
	for level, frontier := 0, []string{"s:"}; level < 4; level++ {
		var next []string
		for _, u := range frontier {
			for _, c := range alphabet {
				next = append(next, u+c)
			}
		}
		uris = append(uris, next...)
		frontier = next
	}
	for i := 0; i < 300; i++ {
		a, b := randTemplate(), randTemplate()
		brute := false
		for _, u := range uris {
			if a.matches(u) && b.matches(u) {
				brute = true
				break
			}
		}
		w, got := overlap(a, b)
		if brute {
			assert.True(t, got, "%s and %s share a URI of at most 4 units", a.raw, b.raw)
		}
		if got {
			assert.True(t, a.matches(w) && b.matches(w), "%s / %s: witness %q", a.raw, b.raw, w)
		}
	}
}
