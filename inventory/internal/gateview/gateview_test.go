package gateview

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/callback"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/principal"
)

// counting returns Gates of n gates whose policies pass callers with
// scope "s<i>" and count their runs; alice holds grants for gate 70 and
// an override for "hidden".
func counting(n int, loads, runs *int) *Gates {
	g := &Gates{Index: map[string]int{}}
	for i := range n {
		name := "g" + string(rune('a'+i%26)) + string(rune('0'+i/26))
		g.Index[name] = i
		g.Policies = append(g.Policies, func(_ context.Context, p *principal.Principal) bool {
			*runs++
			return p != nil && p.HasScopes("s")
		})
	}
	g.Load = func(_ context.Context, _ string, p *principal.Principal) (grants.Grants, error) {
		*loads++
		if p.Subject == "alice" {
			var gate string
			for name, i := range g.Index {
				if i == 70 {
					gate = name
				}
			}
			return grants.Grants{Gates: []string{gate}, Overrides: map[string]bool{"hidden": false, "shown": true}}, nil
		}
		return grants.Grants{}, nil
	}
	g.FailPolicy = func(context.Context, string, int, error) error { return errors.New("failed") }
	return g
}

// Grants load once, policies run once per gate and view, gates beyond
// the first 64 count, and overrides win over gates.
func TestViewDecidesOnce(t *testing.T) {
	var loads, runs int
	g := counting(100, &loads, &runs)
	alice := &principal.Principal{Subject: "alice"}
	v := g.View(context.Background(), "m", alice)
	for range 3 {
		ok, err := v.Open("r", []int{3, 70})
		require.NoError(t, err)
		assert.False(t, ok, "gate 3 refuses alice")
		ok, err = v.Open("r", []int{70, 99})
		require.NoError(t, err)
		assert.False(t, ok)
		ok, err = v.Open("r", []int{70})
		require.NoError(t, err)
		assert.True(t, ok, "granted gate 70")
		ok, err = v.Open("hidden", nil)
		require.NoError(t, err)
		assert.False(t, ok, "disabled")
		ok, err = v.Open("shown", []int{3})
		require.NoError(t, err)
		assert.True(t, ok, "enabled whatever its gates")
	}
	assert.Equal(t, 1, loads)
	assert.Equal(t, 2, runs, "gates 3 and 99, once each")

	bob := &principal.Principal{Subject: "bob", Scopes: []string{"s"}}
	v = g.View(context.Background(), "m", bob)
	ok, err := v.Open("hidden", []int{0, 65, 99})
	require.NoError(t, err)
	assert.True(t, ok)

	loads = 0
	v = g.View(context.Background(), "m", nil)
	ok, err = v.Open("r", []int{70})
	require.NoError(t, err)
	assert.False(t, ok, "anonymous: no grants")
	assert.Zero(t, loads, "anonymous callers have no grants to load")
}

// A policy that panics fails the question through FailPolicy with the
// panic; a failed load fails every question with Load's error.
func TestViewFailures(t *testing.T) {
	var seen error
	g := &Gates{
		Index:    map[string]int{"p": 0},
		Policies: []Policy{func(context.Context, *principal.Principal) bool { panic("boom") }},
		Load: func(context.Context, string, *principal.Principal) (grants.Grants, error) {
			return grants.Grants{}, nil
		},
		FailPolicy: func(_ context.Context, method string, i int, err error) error {
			seen = err
			return errors.New(method)
		},
	}
	v := g.View(context.Background(), "list", &principal.Principal{Subject: "u"})
	ok, err := v.Open("r", []int{0})
	assert.False(t, ok)
	assert.EqualError(t, err, "list")
	var pe *callback.PanicError
	require.ErrorAs(t, seen, &pe)
	assert.Equal(t, "boom", pe.Value)

	loadErr := errors.New("store down")
	g.Load = func(context.Context, string, *principal.Principal) (grants.Grants, error) {
		return grants.Grants{}, loadErr
	}
	v = g.View(context.Background(), "list", &principal.Principal{Subject: "u"})
	for range 2 {
		_, err = v.Open("r", nil)
		assert.Same(t, loadErr, err)
	}

	var zero View
	ok, err = zero.Open("r", nil)
	require.NoError(t, err)
	assert.True(t, ok, "the zero view: no gates, no grants")
	g.Policies[0] = nil
	v = g.View(context.Background(), "list", nil)
	ok, err = v.Open("r", []int{0})
	require.NoError(t, err)
	assert.False(t, ok, "a nil policy passes nobody")
}

func TestBits(t *testing.T) {
	b := Zeroed(make([]byte, 5), 3)
	require.Len(t, b, 3)
	for _, i := range []int{0, 7, 8, 23} {
		assert.False(t, Bit(b, i))
		SetBit(b, i)
		assert.True(t, Bit(b, i))
	}
	assert.Equal(t, []byte{0x81, 0x01, 0x80}, b)
	b = Zeroed(b, 2)
	assert.Equal(t, []byte{0, 0}, b)
}
