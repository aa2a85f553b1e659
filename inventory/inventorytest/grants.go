package inventorytest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/inventory/grants"
)

// CheckGrantStore runs [CheckGrants] and reports every problem, and any
// error, as a test failure. Call it from the tests of a grants.Store backed
// by your database.
func CheckGrantStore(t testing.TB, store grants.Store) {
	t.Helper()
	problems, err := CheckGrants(context.Background(), store)
	if err != nil {
		t.Errorf("inventorytest: %v", err)
	}
	for _, p := range problems {
		t.Errorf("inventorytest: grant store: %s", p)
	}
}

// CheckGrants checks store against the grants.Store contract and returns
// the problems found: a new subject has no grants; Apply reports a change
// exactly when it changes something (authorizing twice, revoking what is
// not granted, enabling what is enabled change nothing); OpEnable and
// OpDisable replace each other; grants already returned do not change
// afterwards; subjects do not share grants; concurrent changes are atomic
// (of eight identical ones exactly one changes something, and eight
// different ones are all kept); an unknown Op is an error. It works on
// subjects with a random prefix, so a shared database may be used; it
// does not clean up after itself. The error reports what prevents
// checking (a store error).
func CheckGrants(ctx context.Context, store grants.Store) ([]string, error) {
	if nilness.Is(store) {
		return nil, fmt.Errorf("inventorytest: the grant store is a nil %T", store)
	}
	c := &grantChecker{ctx: ctx, store: store}
	var b [8]byte
	_, _ = rand.Read(b[:])
	c.prefix = "inventorytest-" + hex.EncodeToString(b[:]) + "-"
	c.run()
	return c.problems, c.err
}

type grantChecker struct {
	ctx      context.Context
	store    grants.Store
	prefix   string
	problems []string
	err      error
}

func (c *grantChecker) fail(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

func (c *grantChecker) grants(subject string) grants.Grants {
	g, err := c.store.Grants(c.ctx, subject)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("store.Grants: %w", err)
	}
	return g
}

// apply applies a change and checks the changed flag.
func (c *grantChecker) apply(subject string, op grants.ChangeOp, name string, want bool) {
	changed, err := c.store.Apply(c.ctx, subject, grants.Change{Op: op, Name: name})
	if err != nil {
		if c.err == nil {
			c.err = fmt.Errorf("store.Apply %s %q: %w", op, name, err)
		}
		return
	}
	if changed != want {
		c.fail("Apply %s %q reported changed=%v, want %v", op, name, changed, want)
	}
}

// expect compares a subject's grants with the wanted ones.
func (c *grantChecker) expect(subject, when string, gates []string, overrides map[string]bool) {
	g := c.grants(subject)
	got := slices.Sorted(slices.Values(g.Gates))
	if !slices.Equal(got, gates) {
		c.fail("%s: gates %q, want %q", when, got, gates)
	}
	if !maps.Equal(g.Overrides, overrides) {
		c.fail("%s: overrides %v, want %v", when, g.Overrides, overrides)
	}
}

func (c *grantChecker) run() {
	s, other := c.prefix+"a", c.prefix+"b"
	c.expect(s, "a new subject", nil, nil)

	c.apply(s, grants.OpAuthorize, "g1", true)
	c.apply(s, grants.OpAuthorize, "g1", false)
	c.expect(s, "after authorizing g1", []string{"g1"}, nil)
	held := c.grants(s)
	heldGates := slices.Clone(held.Gates)
	c.apply(s, grants.OpAuthorize, "g2", true)
	c.apply(s, grants.OpRevoke, "g1", true)
	c.apply(s, grants.OpRevoke, "g1", false)
	c.apply(s, grants.OpRevoke, "never", false)
	c.expect(s, "after revoking g1", []string{"g2"}, nil)
	if !slices.Equal(held.Gates, heldGates) {
		c.fail("grants returned earlier changed after Apply: %q, was %q", held.Gates, heldGates)
	}

	c.apply(s, grants.OpEnable, "docs://r", true)
	c.apply(s, grants.OpEnable, "docs://r", false)
	c.expect(s, "after enabling docs://r", []string{"g2"}, map[string]bool{"docs://r": true})
	held = c.grants(s)
	c.apply(s, grants.OpDisable, "docs://r", true)
	c.apply(s, grants.OpDisable, "docs://r", false)
	c.apply(s, grants.OpDisable, "reports", true)
	c.expect(s, "after disabling docs://r and reports", []string{"g2"}, map[string]bool{"docs://r": false, "reports": false})
	if !held.Overrides["docs://r"] || len(held.Overrides) != 1 {
		c.fail("grants returned earlier changed after Apply: overrides %v", held.Overrides)
	}
	c.apply(s, grants.OpEnable, "docs://r", true)
	c.expect(s, "after enabling docs://r again", []string{"g2"}, map[string]bool{"docs://r": true, "reports": false})
	c.expect(other, "another subject", nil, nil)

	if _, err := c.store.Apply(c.ctx, s, grants.Change{Op: 0, Name: "g3"}); err == nil {
		c.fail("Apply with an unknown Op returned no error")
	}

	// Concurrency: the same change eight times, eight different changes.
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	changes := 0
	for range n {
		wg.Go(func() {
			if changed, err := c.store.Apply(c.ctx, other, grants.Change{Op: grants.OpAuthorize, Name: "same"}); err == nil && changed {
				mu.Lock()
				changes++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if changes != 1 {
		c.fail("%d of %d concurrent identical changes reported changed, want 1", changes, n)
	}
	want := []string{"same"}
	for i := range n {
		name := fmt.Sprintf("g%d", i)
		want = append(want, name)
		wg.Go(func() {
			if _, err := c.store.Apply(c.ctx, other, grants.Change{Op: grants.OpAuthorize, Name: name}); err != nil {
				mu.Lock()
				if c.err == nil {
					c.err = fmt.Errorf("store.Apply: %w", err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(want)
	c.expect(other, "after concurrent changes", want, nil)
}
