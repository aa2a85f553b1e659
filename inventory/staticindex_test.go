package inventory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory/internal/listcursor"
	"github.com/mcpkit/mcpkit/principal"
)

// linearStatics is the walk resources/list made before the statics were
// indexed: every static in registry order, kept when the caller may see
// it. It is the reference of the index.
func linearStatics(inv *Inventory, caller *principal.Principal) []int {
	var out []int
	for i := range inv.statics {
		st := &inv.statics[i]
		if visible(st.res.Access, st.scopes(), caller) {
			out = append(out, i)
		}
	}
	return out
}

func fmtInts(x []int) string { return fmt.Sprint(x) }

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

// randomStatics registers n statics of a few random classes, interleaved.
func randomStatics(t *testing.T, r *rand.Rand, n, pageSize int) *Inventory {
	t.Helper()
	classes := 1 + r.IntN(6)
	kinds := make([][]string, classes)
	public := make([]bool, classes)
	for c := range kinds {
		public[c] = r.IntN(3) == 0
		if !public[c] {
			kinds[c] = randomScopes(r)
		}
	}
	res := make([]Resource, n)
	for i := range res {
		c := r.IntN(classes)
		if r.IntN(4) == 0 { // runs of one class
			c = 0
		}
		access := Protected
		if public[c] {
			access = Public
		}
		id := strconv.Itoa(i)
		res[i] = Resource{URI: "res://s/" + id, Name: "s" + id, Access: access, RequiredScopes: kinds[c], Read: TextReader("text/plain", "")}
	}
	inv, err := New(res, nil, Options{PageSize: pageSize})
	require.NoError(t, err)
	return inv
}

func randomCaller(r *rand.Rand) *principal.Principal {
	if r.IntN(5) == 0 {
		return nil
	}
	return &principal.Principal{Subject: "u", Scopes: randomScopes(r)}
}

// The indexed traversal against the linear walk: from every offset, the
// same statics in the same order, and the same count.
func TestStaticIndexMatchesLinearWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 41))
	for round := range 300 {
		inv := randomStatics(t, r, r.IntN(120), 10)
		for range 4 {
			caller := randomCaller(r)
			want := linearStatics(inv, caller)
			sc := &scratch{}
			n, _ := inv.shown.Shown(&sc.statics, caller)
			require.Equal(t, len(want), n, "round %d: count", round)
			for offset := 0; offset <= len(want); offset++ {
				tr := inv.shown.Seek(&sc.statics, caller, offset)
				var got []int
				for i := tr.Peek(); i >= 0; i = tr.Peek() {
					got = append(got, i)
					tr.Pop()
				}
				require.Equal(t, fmtInts(want[offset:]), fmtInts(got), "round %d offset %d", round, offset)
			}
		}
	}
}

// Pages and cursor positions through List, against pages cut from the
// linear walk: identical at every page, for random registries, callers
// and page sizes.
func TestStaticPagesMatchLinearWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 41))
	ctx := context.Background()
	for round := range 200 {
		pageSize := 1 + r.IntN(7)
		inv := randomStatics(t, r, r.IntN(60), pageSize)
		caller := randomCaller(r)
		want := linearStatics(inv, caller)
		cursor, offset := "", 0
		for {
			var got []int
			next, err := inv.List(ctx, caller, cursor, func(it *Item) bool {
				got = append(got, it.Static-1)
				return true
			})
			require.NoError(t, err)
			end := min(offset+pageSize, len(want))
			require.Equal(t, fmtInts(want[offset:end]), fmtInts(got), "round %d page at %d", round, offset)
			offset = end
			if next == "" {
				require.Equal(t, len(want), offset, "round %d: the last page ends the walk", round)
				break
			}
			payload, _, err := inv.openCursor(&scratch{}, purposeList, caller, nil, next)
			require.NoError(t, err)
			pos, err := listcursor.Parse(payload)
			require.NoError(t, err)
			require.Equal(t, position{Source: -1, Offset: offset}, pos, "round %d: the cursor's position", round)
			cursor = next
		}
	}
}

// A cursor at an offset beyond what the caller sees is refused, as the
// walk's count refused it.
func TestStaticCursorBeyondShownRefused(t *testing.T) {
	res := []Resource{
		{URI: "res://p", Name: "p", Access: Public, Read: TextReader("text/plain", "")},
		{URI: "res://q", Name: "q", RequiredScopes: []string{"x"}, Read: TextReader("text/plain", "")},
	}
	inv, err := New(res, nil, Options{PageSize: 1})
	require.NoError(t, err)
	caller := &principal.Principal{Subject: "u"}
	c, err := inv.SealListPositionForTest(caller, -1, 2, "", inv.sealer.Now())
	require.NoError(t, err)
	_, err = inv.List(context.Background(), caller, c, nil)
	var ce *CursorError
	require.ErrorAs(t, err, &ce)
	c, err = inv.SealListPositionForTest(caller, -1, 1, "", inv.sealer.Now())
	require.NoError(t, err)
	_, err = inv.List(context.Background(), caller, c, nil)
	require.NoError(t, err)
}
