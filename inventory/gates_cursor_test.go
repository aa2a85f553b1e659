package inventory_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
)

// A cursor survives a grant change that cannot alter what the traversal
// may show, and fails as invalid after one that can, whether it reveals
// or hides something.
func TestGatesCursorAcrossGrantChanges(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []grantStep // applied before the first page
		after []grantStep // applied between the first and the second page
		valid bool
	}{
		{"no change", nil, nil, true},
		{"a gate attached to nothing", nil, []grantStep{authorize("alice", "unused")}, true},
		{"another subject's grants", nil, []grantStep{authorize("bob", "onboarding"), enable("bob", uriBetaNotes), disable("bob", uriReadme)}, true},
		{"a template that is no list source", nil, []grantStep{authorize("alice", "onboarding"), disable("alice", "notes")}, true},
		{"enabling what is already visible", nil, []grantStep{enable("alice", uriReadme), enable("alice", "documents")}, true},
		{"disabling what is already hidden", nil, []grantStep{disable("alice", uriBetaNotes), disable("alice", "notes")}, true},
		{"disabled and enabled again", []grantStep{enable("alice", uriReadme)}, []grantStep{disable("alice", uriReadme), enable("alice", uriReadme)}, true},
		{"revoking a grant a policy makes redundant", []grantStep{authorize("carol", "beta")}, []grantStep{revoke("carol", "beta")}, true},

		{"reveal: a gated static", nil, []grantStep{authorize("alice", "staff")}, false},
		{"reveal: an enabled static", nil, []grantStep{enable("alice", uriBetaNotes)}, false},
		{"reveal: a gated source", nil, []grantStep{authorize("alice", "onboarding")}, false},
		{"reveal: an enabled source", nil, []grantStep{enable("alice", "notes")}, false},
		{"hide: a disabled static", nil, []grantStep{disable("alice", uriPolicy)}, false},
		{"hide: a disabled source", nil, []grantStep{disable("alice", "documents")}, false},
		{"hide: a revoked gate", []grantStep{authorize("alice", "onboarding")}, []grantStep{revoke("alice", "onboarding")}, false},
		{"hide: an enable turned into a disable", []grantStep{enable("alice", uriBetaNotes)}, []grantStep{disable("alice", uriBetaNotes)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newGatedFixture(t, inventory.Options{PageSize: 1})
			f.seed()
			for i := 10; i < 14; i++ {
				f.docs.Insert("alice", docEntry(i))
			}
			caller := alice()
			if strings.Contains(tc.name, "policy makes redundant") {
				caller = carol()
			}
			for _, s := range tc.steps {
				s.apply(t, f.inv)
			}
			want, _ := walkAll(t, f.inv, caller)
			l, _ := page(t, f.inv, caller, "")
			require.NotNil(t, l.NextCursor)
			for _, s := range tc.after {
				s.apply(t, f.inv)
			}
			_, err := listWire(context.Background(), f.inv, caller, *l.NextCursor, testEnv)
			if !tc.valid {
				requireCursorError(t, err, inventory.ReasonInvalid)
				return
			}
			require.NoError(t, err)
			// The whole traversal across the change lists what it did before.
			got := l.uris()
			cursor := *l.NextCursor
			for cursor != "" {
				l, _ = page(t, f.inv, caller, cursor)
				got = append(got, l.uris()...)
				cursor = ""
				if l.NextCursor != nil {
					cursor = *l.NextCursor
				}
			}
			assert.Equal(t, want, got)
		})
	}
}

// Cursors deep in a list source fail too when a static before them is
// revealed (its offset would shift) or the source itself is hidden.
func TestGatesCursorInsideASource(t *testing.T) {
	f := newGatedFixture(t, inventory.Options{PageSize: 3})
	f.seed()
	for i := 10; i < 20; i++ {
		f.docs.Insert("alice", docEntry(i))
	}
	ctx := context.Background()
	l, _ := page(t, f.inv, alice(), "")
	l, _ = page(t, f.inv, alice(), *l.NextCursor) // inside documents
	require.NotNil(t, l.NextCursor)
	c := *l.NextCursor
	_, err := listWire(ctx, f.inv, alice(), c, testEnv)
	require.NoError(t, err)
	_, err = f.inv.Enable(ctx, "alice", uriBetaNotes)
	require.NoError(t, err)
	_, err = listWire(ctx, f.inv, alice(), c, testEnv)
	requireCursorError(t, err, inventory.ReasonInvalid, "a static revealed before the position")
	_, err = f.inv.Disable(ctx, "alice", uriBetaNotes)
	require.NoError(t, err)
	_, err = listWire(ctx, f.inv, alice(), c, testEnv)
	assert.NoError(t, err, "back to the same visibility: the cursor is good again")
}

func TestGatesTemplatesCursor(t *testing.T) {
	f := newGatedFixture(t, inventory.Options{PageSize: 1})
	ctx := context.Background()
	out, err := templatesWire(ctx, f.inv, alice(), "", testEnv)
	require.NoError(t, err)
	c := extractCursor(t, out)

	_, err = f.inv.Authorize(ctx, "alice", "staff") // a gate of a static only
	require.NoError(t, err)
	_, err = listWire(ctx, f.inv, alice(), "", testEnv)
	require.NoError(t, err)
	_, err = templatesWire(ctx, f.inv, alice(), c, testEnv)
	assert.NoError(t, err, "no template changed for alice")

	_, err = f.inv.Enable(ctx, "alice", "reports")
	require.NoError(t, err)
	_, err = templatesWire(ctx, f.inv, alice(), c, testEnv)
	requireCursorError(t, err, inventory.ReasonInvalid, "a template revealed")
}

// A policy that reads the request context changes what a cursor may show.
func TestGatesCursorPolicyChange(t *testing.T) {
	type key struct{}
	inv, err := inventory.New([]inventory.Resource{
		{URI: "a://1", Name: "One", Access: inventory.Public, Read: readEcho},
		{URI: "a://2", Name: "Two", Access: inventory.Public, Read: readEcho},
		{URI: "a://3", Name: "Three", Access: inventory.Public, Gates: []string{"net"}, Read: readEcho},
	}, nil, inventory.Options{PageSize: 1, Gates: []inventory.Gate{{Name: "net", Policy: func(ctx context.Context, _ *principal.Principal) bool {
		return ctx.Value(key{}) != nil
	}}}})
	require.NoError(t, err)
	out, err := listWire(context.Background(), inv, nil, "", testEnv)
	require.NoError(t, err)
	c := extractCursor(t, out)
	_, err = listWire(context.Background(), inv, nil, c, testEnv)
	require.NoError(t, err)
	_, err = listWire(context.WithValue(context.Background(), key{}, true), inv, nil, c, testEnv)
	requireCursorError(t, err, inventory.ReasonInvalid)
}

// A failing grant store: the client gets ErrInternal and nothing else, the
// operator a record naming the store; anonymous callers are unaffected.
func TestGatesFailingStore(t *testing.T) {
	f := newGatedFixture(t, inventory.Options{})
	f.seed()
	ctx := context.Background()
	f.store.fail.Store(errors.New("db: connection refused (pool 7)"))
	for name, run := range map[string]func() error{
		"list":      func() error { _, err := listWire(ctx, f.inv, alice(), "", testEnv); return err },
		"templates": func() error { _, err := templatesWire(ctx, f.inv, alice(), "", testEnv); return err },
		"read":      func() error { _, err := f.inv.Read(ctx, alice(), "docs://documents/d0001"); return err },
		"response":  func() error { _, err := readWire(ctx, f.inv, alice(), uriReadme, testEnv); return err },
		"complete":  func() error { _, err := f.inv.Complete(ctx, alice(), "docs://reports/{id}", "id", "", nil); return err },
		"can read":  func() error { _, err := f.inv.CanRead(ctx, alice(), uriReadme); return err },
	} {
		assert.Same(t, inventory.ErrInternal, run(), name)
	}
	recs := f.log.records(t)
	require.Len(t, recs, 6)
	methods := map[string]bool{}
	for _, r := range recs {
		assert.Equal(t, "grant-store", r["rule"])
		assert.Equal(t, "grants", r["source"])
		assert.Equal(t, "ERROR", r["level"])
		methods[r["method"].(string)] = true
	}
	assert.Len(t, methods, 5, "each record names its method: %v", methods)
	assert.NotContains(t, f.log.String(), "alice", "no subject in the log")
	assert.NotContains(t, f.log.String(), "d0001", "no URI in the log")

	_, err := f.inv.Read(ctx, nil, uriReadme)
	assert.NoError(t, err, "anonymous callers need no grants")

	f.store.fail.Store(errors.New(""))
	f.store.panic.Store(true)
	_, err = listWire(ctx, f.inv, alice(), "", testEnv)
	assert.Same(t, inventory.ErrInternal, err)
	last := f.log.records(t)
	assert.EqualValues(t, inventory.RuleCallbackPanic, last[len(last)-1]["rule"])
}

func TestGatesPolicyPanic(t *testing.T) {
	log := &logBuffer{}
	inv, err := inventory.New([]inventory.Resource{
		{URI: "a://1", Name: "One", Access: inventory.Public, Gates: []string{"bad"}, Read: readEcho},
	}, nil, inventory.Options{Logger: log.logger(), Gates: []inventory.Gate{{Name: "bad", Policy: func(context.Context, *principal.Principal) bool {
		panic("policy bug")
	}}}})
	require.NoError(t, err)
	_, err = inv.Read(context.Background(), nil, "a://1")
	assert.Same(t, inventory.ErrInternal, err)
	_, err = listWire(context.Background(), inv, nil, "", testEnv)
	assert.Same(t, inventory.ErrInternal, err)
	recs := log.records(t)
	require.Len(t, recs, 2)
	assert.EqualValues(t, inventory.RuleCallbackPanic, recs[0]["rule"])
	assert.Equal(t, "gate bad", recs[0]["source"])
}
