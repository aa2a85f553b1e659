package uritemplate

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
		{"x://{a}", "x://%C3%A9", true},
		{"x://{a}", "x://%2F", true},               // reserved characters are encoded in {a}
		{"x://{+a}", "x://%254g", true},            // "%4g"
		{"x://{a:3}", "x://abc", true},             //
		{"file:///{+path}", "file:///a{?q}", true}, // {+x} holds '?'
		{"docs://documents{?tag}", "docs://documents", true},
		{"x://s{?q}", "x://s{?r}", true}, // both absent: "x://s"
		{"x://s{?q}", "x://s?q={v}", true},
		{"x://s{?q,r}", "x://s?r={v}", true},
		{"x://s{;p}", "x://s;p", true},
		{"x://a{/b}", "x://a/{c}", true},
		{"x://a{/b}", "x://a/", true}, // b empty
		{"x://a{.b}", "x://a.json", true},
		{"x://a{#f}", "x://a#{+g}", true},
		{"x://{a}{.b}", "x://{c}", true},
		{"x://{/a}", "x://{?b}", true}, // "x://"
		{"x://{a}{/b}", "x://{c}/{d}", true},
		{"x://a{?q,r}{&s}", "x://a&s=1", true},
		// Disjoint pairs.
		{"docs://documents/{id}", "docs://notes/{id}", false},
		{"docs://documents/{id}", "docs://documents/{id}/versions/{v}", false}, // {id} has no '/'
		{"file:///{+path}", "files:///{+path}", false},
		{"x://{a}", "x://", false},    // values are not empty
		{"x://{a}", "x://a/b", false}, // '/' not in {a}
		{"x://{a}", "x://a?", false},  // '?' never in a value
		{"x://{a}.json", "x://{b}.xml", false},
		{"x://{a}?q", "x://{b}#q", false},
		{"x://{a}", "x://%FF", false},                        // not UTF-8
		{"x://{a}", "x://%E0%80%80", false},                  // overlong
		{"x://{+a}", "x://%2F", false},                       // a triplet of a reserved character is not a {+a} value
		{"x://{+a}", "x://%2541", false},                     // %25 and two hex digits
		{"x://{+a}", "x://%25%34%31", false},                 // (the same, encoded)
		{"x://{a:3}", "x://abcd", false},                     // prefix
		{"x://{a:3}", "x://%C3%A9%C3%A9%C3%A9%C3%A9", false}, //
		{"docs://documents{?tag}", "docs://documents/{id}", false},
		{"docs://documents{?tag}", "docs://documents?tag", false}, // empty is "tag="
		{"x://s{?q,r}", "x://s?r=1&q=2", false},                   // template order only
		{"x://s{?q}", "x://s?q=1&q=2", false},                     // once
		{"x://s{;p}", "x://s;p=", false},                          // empty is ";p"
		{"x://a{/b}", "x://a/b/c", false},                         // one segment
		{"x://a{/b*}", "x://a/b/c", false},                        // explode: a string all the same
		{"x://{a}", "x://a,b", false},                             // lists are not values
		{"x://{a}", "x://a:b", false},                             // ':' is encoded in {a}
		{"x://{a}", "x://", false},                                //
		{"{/a}", "{?b}", false},                                   // both could be empty, but the empty URI matches nothing
	} {
		t.Run(tc.a+" vs "+tc.b, func(t *testing.T) {
			ta, err := Parse(tc.a)
			require.NoError(t, err)
			tb, err := Parse(tc.b)
			require.NoError(t, err)
			w, got := Overlap(ta, tb, OverlapBudget)
			assert.Equal(t, tc.want, got, "witness %q", w)
			if got {
				require.NotEmpty(t, w, "a witness")
				assert.True(t, ta.Matches(w), "witness %q must match %s", w, tc.a)
				assert.True(t, tb.Matches(w), "witness %q must match %s", w, tc.b)
			}
			_, rev := Overlap(tb, ta, OverlapBudget)
			assert.Equal(t, got, rev, "overlap is symmetric")
		})
	}
}

// TestOverlapAgainstBruteForce compares the automaton search with an
// exhaustive search over short URIs, for random small templates.
func TestOverlapAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "b", "/", "-", "?", "=", "{x}", "{+x}", "{x:2}", "{#x}", "{.x}", "{/x,y}", "{;x}", "{?x,y}", "{&y}", "%41"}
	alphabet := []string{"a", "b", "/", "-", ".", "?", "&", "=", ";", "#", "%41", "%25", "%2F", "x=", "y="}
	randTemplate := func() *Template {
		for {
			var sb strings.Builder
			sb.WriteString("s:")
			for n := rng.IntN(4); n >= 0; n-- {
				sb.WriteString(pieces[rng.IntN(len(pieces))])
			}
			if ut, err := Parse(sb.String()); err == nil {
				return ut
			}
		}
	}
	// All URIs "s:" + up to 3 alphabet units.
	uris := []string{"s:"}
	for level, frontier := 0, []string{"s:"}; level < 3; level++ {
		var next []string
		for _, u := range frontier {
			for _, c := range alphabet {
				next = append(next, u+c)
			}
		}
		uris = append(uris, next...)
		frontier = next
	}
	var overlapping, disjoint int
	for i := 0; i < 400; i++ {
		a, b := randTemplate(), randTemplate()
		brute := false
		for _, u := range uris {
			if a.Matches(u) && b.Matches(u) {
				brute = true
				break
			}
		}
		w, got := Overlap(a, b, OverlapBudget)
		if brute {
			assert.True(t, got, "%s and %s share a URI of at most 3 units", a.raw, b.raw)
		}
		if got {
			overlapping++
			assert.True(t, a.Matches(w) && b.Matches(w), "%s / %s: witness %q", a.raw, b.raw, w)
		} else {
			disjoint++
		}
	}
	assert.Greater(t, overlapping, 40, "the pairs exercise both answers")
	assert.Greater(t, disjoint, 40)
}

// A search that runs out of budget reports an overlap without a witness
// (inventory.New refuses the pair as too complex).
func TestOverlapBudget(t *testing.T) {
	a, err := Parse("x://{a:300}.json")
	require.NoError(t, err)
	b, err := Parse("x://{b:299}.xml")
	require.NoError(t, err)
	w, ok := Overlap(a, b, OverlapBudget)
	require.False(t, ok, "disjoint within the budget (%q)", w)

	w, ok = Overlap(a, b, 100)
	assert.True(t, ok)
	assert.Empty(t, w)
}
