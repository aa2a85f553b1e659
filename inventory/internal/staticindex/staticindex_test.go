package staticindex

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/principal"
)

var propScopes = []string{"a", "b", "c", "d"}

func randomScopes(r *rand.Rand) []string {
	var out []string
	for _, s := range propScopes {
		if r.IntN(3) == 0 {
			out = append(out, s)
		}
	}
	return out
}

type static struct {
	public bool
	scopes []string
}

// randomStatics returns n statics of a few random classes, interleaved,
// with runs of one class.
func randomStatics(r *rand.Rand, n int) []static {
	kinds := make([]static, 1+r.IntN(6))
	for c := range kinds {
		if kinds[c].public = r.IntN(3) == 0; !kinds[c].public {
			kinds[c].scopes = randomScopes(r)
		}
	}
	out := make([]static, n)
	for i := range out {
		c := r.IntN(len(kinds))
		if r.IntN(4) == 0 {
			c = 0
		}
		out[i] = kinds[c]
	}
	return out
}

// The traversal against the linear walk (every static in order, kept when
// public or when the caller holds its scopes): from every offset, the
// same statics in the same order, and the same count.
func TestSeekMatchesLinearWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 42))
	var sc Scratch // reused across rounds, as the pool does
	for round := range 400 {
		statics := randomStatics(r, r.IntN(120))
		x := New(len(statics), func(i int) (bool, []string) { return statics[i].public, statics[i].scopes })
		for range 4 {
			var caller *principal.Principal
			if r.IntN(5) > 0 {
				caller = &principal.Principal{Subject: "u", Scopes: randomScopes(r)}
			}
			var want []int
			for i, st := range statics {
				if st.public || caller != nil && caller.HasScopes(st.scopes...) {
					want = append(want, i)
				}
			}
			n, all := x.Shown(&sc, caller)
			require.Equal(t, len(want), n, "round %d: count", round)
			if all {
				require.Len(t, want, len(statics), "round %d: all classes shown, all statics", round)
			}
			for offset := 0; offset <= len(want); offset++ {
				tr := x.Seek(&sc, caller, offset)
				got := []int{}
				for i := tr.Peek(); i >= 0; i = tr.Peek() {
					got = append(got, i)
					tr.Pop()
				}
				require.Equal(t, append([]int{}, want[offset:]...), got, "round %d offset %d", round, offset)
			}
		}
	}
}

// The zero Index has no statics: every traversal is empty.
func TestZeroIndex(t *testing.T) {
	var x Index
	var sc Scratch
	n, all := x.Shown(&sc, nil)
	require.Equal(t, 0, n)
	require.True(t, all)
	tr := x.Seek(&sc, nil, 0)
	require.Equal(t, -1, tr.Peek())
}

// Statics of one scope set, whatever the caller's scope order, form one
// class; a public static never shares a class with a protected one
// without scopes.
func TestClasses(t *testing.T) {
	statics := []static{{public: true}, {scopes: nil}, {scopes: []string{"a", "b"}}, {public: true}, {scopes: []string{"a", "b"}}}
	x := New(len(statics), func(i int) (bool, []string) { return statics[i].public, statics[i].scopes })
	require.Len(t, x.classes, 3)
	require.Equal(t, []int32{0, 3}, x.classes[0].members)
	require.Equal(t, []int32{1}, x.classes[1].members)
	require.Equal(t, []int32{2, 4}, x.classes[2].members)
	var sc Scratch
	n, _ := x.Shown(&sc, nil)
	require.Equal(t, 2, n, "anonymous: the public ones")
	n, _ = x.Shown(&sc, &principal.Principal{Subject: "u", Scopes: []string{"b", "a"}})
	require.Equal(t, 5, n)
}
