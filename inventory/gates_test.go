package inventory_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
)

// grantStep is one grant change applied before a scenario's checks.
type grantStep struct {
	op            grants.ChangeOp
	subject, name string
}

func (g grantStep) apply(t *testing.T, inv *inventory.Inventory) {
	t.Helper()
	var err error
	ctx := context.Background()
	switch g.op {
	case grants.OpAuthorize:
		_, err = inv.Authorize(ctx, g.subject, g.name)
	case grants.OpRevoke:
		_, err = inv.Revoke(ctx, g.subject, g.name)
	case grants.OpEnable:
		_, err = inv.Enable(ctx, g.subject, g.name)
	case grants.OpDisable:
		_, err = inv.Disable(ctx, g.subject, g.name)
	}
	require.NoError(t, err)
}

func authorize(s, n string) grantStep { return grantStep{grants.OpAuthorize, s, n} }
func revoke(s, n string) grantStep    { return grantStep{grants.OpRevoke, s, n} }
func enable(s, n string) grantStep    { return grantStep{grants.OpEnable, s, n} }
func disable(s, n string) grantStep   { return grantStep{grants.OpDisable, s, n} }

// TestGatesScenarios: policies and grants change list, read,
// templates/list and completion together. For every scenario, every URI
// the fixture can serve is read: it is readable exactly when the caller's
// traversal listed it; a gated-out one is not found.
func TestGatesScenarios(t *testing.T) {
	d := func(i int) string { return "docs://documents/" + docID(i) }
	n := func(i int) string { return "docs://notes/n" + string(rune('0'+i)) }
	for _, tc := range []struct {
		name      string
		caller    *principal.Principal
		steps     []grantStep
		list      []string
		templates []string
		reports   bool // reports template: readable, completes
	}{
		{"no grants: gated sources, templates and statics hidden", alice(), nil,
			[]string{uriReadme, uriPolicy, d(1)}, []string{"documents", "files"}, false},
		{"authorized onboarding: notes source and reports template appear", alice(), []grantStep{authorize("alice", "onboarding")},
			[]string{uriReadme, uriPolicy, d(1), n(1)}, []string{"documents", "notes", "reports", "files"}, true},
		{"authorized then revoked", alice(), []grantStep{authorize("alice", "onboarding"), revoke("alice", "onboarding")},
			[]string{uriReadme, uriPolicy, d(1)}, []string{"documents", "files"}, false},
		{"another subject's grant changes nothing", alice(), []grantStep{authorize("bob", "onboarding"), enable("bob", uriBetaNotes)},
			[]string{uriReadme, uriPolicy, d(1)}, []string{"documents", "files"}, false},
		{"policy passes carol through beta", carol(), nil,
			[]string{uriReadme, uriPolicy, uriBetaNotes, d(3)}, []string{"documents", "files"}, false},
		{"enabled static without passing its gate", alice(), []grantStep{enable("alice", uriBetaNotes)},
			[]string{uriReadme, uriPolicy, uriBetaNotes, d(1)}, []string{"documents", "files"}, false},
		{"disabled static despite the policy", carol(), []grantStep{disable("carol", uriBetaNotes)},
			[]string{uriReadme, uriPolicy, d(3)}, []string{"documents", "files"}, false},
		{"disabled ungated static", alice(), []grantStep{disable("alice", uriReadme)},
			[]string{uriPolicy, d(1)}, []string{"documents", "files"}, false},
		{"enable replaces disable", alice(), []grantStep{disable("alice", uriReadme), enable("alice", uriReadme)},
			[]string{uriReadme, uriPolicy, d(1)}, []string{"documents", "files"}, false},
		{"every source hidden: statics only, no error", alice(), []grantStep{disable("alice", "documents")},
			[]string{uriReadme, uriPolicy}, []string{"files"}, false},
		{"enabled source without its gate", alice(), []grantStep{enable("alice", "notes")},
			[]string{uriReadme, uriPolicy, d(1), n(1)}, []string{"documents", "notes", "files"}, false},
		{"disabled template despite the gate grant", alice(), []grantStep{authorize("alice", "onboarding"), disable("alice", "reports")},
			[]string{uriReadme, uriPolicy, d(1), n(1)}, []string{"documents", "notes", "files"}, false},
		{"enable does not grant scopes", bob(), []grantStep{enable("bob", "notes")},
			[]string{uriReadme, uriPolicy, d(2)}, []string{"documents", "notes", "files"}, false},
		{"scope policy passes dave through staff", dave(), nil,
			[]string{uriReadme, uriPolicy, uriHandbook, d(4)}, []string{"documents", "files"}, false},
		{"enabled static without the policy's scope", bob(), []grantStep{enable("bob", uriHandbook)},
			[]string{uriReadme, uriPolicy, uriHandbook, d(2)}, []string{"documents", "files"}, false},
		{"authorized for a gate whose policy it fails", bob(), []grantStep{authorize("bob", "staff"), authorize("bob", "beta")},
			[]string{uriReadme, uriPolicy, uriBetaNotes, uriHandbook, d(2)}, []string{"documents", "files"}, false},
		{"disabled handbook despite the policy", dave(), []grantStep{disable("dave", uriHandbook)},
			[]string{uriReadme, uriPolicy, d(4)}, []string{"documents", "files"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newGatedFixture(t, inventory.Options{PageSize: 2})
			f.seed()
			for _, s := range tc.steps {
				s.apply(t, f.inv)
			}
			listed, _ := walkAll(t, f.inv, tc.caller)
			assert.Equal(t, tc.list, listed, "resources/list")
			names, _ := templatesWalk(t, f.inv, tc.caller)
			assert.Equal(t, tc.templates, names, "resources/templates/list")
			assertListReadAgree(t, f, tc.caller, listed)

			_, err := f.inv.Read(context.Background(), tc.caller, "docs://reports/r1")
			_, cerr := f.inv.Complete(context.Background(), tc.caller, "docs://reports/{id}", "id", "r", nil)
			can, canErr := f.inv.CanRead(context.Background(), tc.caller, "docs://reports/r1")
			require.NoError(t, canErr)
			assert.Equal(t, tc.reports, can, "CanRead")
			if tc.reports {
				assert.NoError(t, err)
				assert.NoError(t, cerr)
			} else {
				assert.True(t, isHidden(err), "a hidden template reads as unknown: %v", err)
				assert.True(t, isUnknownTemplate(cerr), "a hidden template completes as unknown: %v", cerr)
			}
		})
	}
}

// assertListReadAgree reads every URI the fixture can serve: it must be
// readable exactly when listed, CanRead must hold for every listed URI
// (and for statics exactly then), and a URI that is not readable answers
// not found, or needs scopes.
func assertListReadAgree(t *testing.T, f *gatedFixture, caller *principal.Principal, listed []string) {
	t.Helper()
	ctx := context.Background()
	statics := []string{uriReadme, uriPolicy, uriBetaNotes, uriHandbook}
	for _, uri := range f.universe() {
		shown := slices.Contains(listed, uri)
		cs, err := f.inv.Read(ctx, caller, uri)
		if shown {
			assert.NoError(t, err, "listed %s must be readable", uri)
			assert.Len(t, cs, 1)
		} else {
			var se *principal.ScopeError
			assert.True(t, isHidden(err) || errors.As(err, &se), "unlisted %s: %v", uri, err)
		}
		can, err := f.inv.CanRead(ctx, caller, uri)
		require.NoError(t, err)
		if shown {
			assert.True(t, can, "CanRead of listed %s", uri)
		}
		if slices.Contains(statics, uri) {
			assert.Equal(t, shown, can, "CanRead of static %s agrees with the list", uri)
		}
	}
}

func TestGatesGlobal(t *testing.T) {
	log := &logBuffer{}
	docs := docsTemplate(emptyList)
	files := inventory.Template{Name: "files", URITemplate: "file:///{+path}", Access: inventory.Public, Read: readEcho}
	inv, err := inventory.New(statics(), []inventory.Template{docs, files}, inventory.Options{
		Gates:       []inventory.Gate{{Name: "terms"}, {Name: "beta", Policy: inventory.Subjects("bob")}},
		GlobalGates: []string{"terms"},
		Logger:      log.logger(),
	})
	require.NoError(t, err)
	ctx := context.Background()

	listed, _ := walkAll(t, inv, alice())
	assert.Empty(t, listed, "the global gate hides everything, and no source is held back by scopes alone")
	names, _ := templatesWalk(t, inv, alice())
	assert.Empty(t, names)
	_, err = inv.Read(ctx, alice(), "docs://readme")
	assert.True(t, isHidden(err))
	_, err = inv.Read(ctx, nil, "file:///a")
	assert.True(t, isHidden(err), "anonymous callers pass no gate without a policy")

	_, err = inv.Enable(ctx, "alice", "files")
	require.NoError(t, err)
	names, _ = templatesWalk(t, inv, alice())
	assert.Equal(t, []string{"files"}, names, "an enabled template passes the global gate")

	_, err = inv.Authorize(ctx, "alice", "terms")
	require.NoError(t, err)
	listed, _ = walkAll(t, inv, alice())
	assert.Equal(t, []string{"docs://readme", "docs://policy"}, listed)
	names, _ = templatesWalk(t, inv, alice())
	assert.Equal(t, []string{"documents", "files"}, names)
	_, err = inv.Read(ctx, alice(), "docs://readme")
	assert.NoError(t, err)
	_, err = inv.Read(ctx, bob(), "docs://readme")
	assert.True(t, isHidden(err), "bob did not accept the terms")
}

// A source hidden by gates is skipped like one whose scopes are missing;
// the 403 stays for sources held back by scopes alone.
func TestGatesScopeErrorOnlyForScopes(t *testing.T) {
	tmpls := []inventory.Template{
		{Name: "a", URITemplate: "a://{id}", RequiredScopes: []string{"a1"}, Gates: []string{"g"}, Read: readEcho, List: emptyList},
		{Name: "b", URITemplate: "b://{id}", RequiredScopes: []string{"b1", "b2"}, Read: readEcho, List: emptyList},
	}
	inv, err := inventory.New(statics(), tmpls, inventory.Options{Gates: []inventory.Gate{{Name: "g"}}})
	require.NoError(t, err)
	ctx := context.Background()
	eve := &principal.Principal{Subject: "eve"}

	_, err = listWire(ctx, inv, eve, "", testEnv)
	var se *principal.ScopeError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, []string{"b1", "b2"}, se.Required, "a is closer but hidden: its scopes would not help")

	_, err = inv.Authorize(ctx, "eve", "g")
	require.NoError(t, err)
	_, err = listWire(ctx, inv, eve, "", testEnv)
	require.ErrorAs(t, err, &se)
	assert.Equal(t, []string{"a1"}, se.Required, "a is visible now, and the closest")

	_, err = inv.Disable(ctx, "eve", "a")
	require.NoError(t, err)
	_, err = inv.Disable(ctx, "eve", "b")
	require.NoError(t, err)
	l, _ := page(t, inv, eve, "")
	assert.Equal(t, []string{"docs://readme"}, l.uris(), "every source hidden: the statics the caller may see, no error")

	_, err = listWire(ctx, inv, nil, "", testEnv)
	assert.ErrorIs(t, err, principal.ErrUnauthenticated, "anonymous callers are still challenged when sources exist")
}

// Gates hide; they do not challenge.
func TestGatesAnonymous(t *testing.T) {
	f := newGatedFixture(t, inventory.Options{})
	ctx := context.Background()
	_, err := listWire(ctx, f.inv, nil, "", testEnv)
	assert.ErrorIs(t, err, principal.ErrUnauthenticated)

	for uri, want := range map[string]error{
		uriReadme:             nil,
		uriPolicy:             principal.ErrUnauthenticated, // ungated protected: unchanged
		uriBetaNotes:          inventory.ErrNotFound,        // public but gated
		uriHandbook:           inventory.ErrNotFound,        // gated protected: hidden, not challenged
		"docs://documents/d1": principal.ErrUnauthenticated,
		"docs://notes/n1":     inventory.ErrNotFound,
		"docs://reports/r1":   inventory.ErrNotFound,
		"file:///x":           nil,
	} {
		_, err := f.inv.Read(ctx, nil, uri)
		if want == nil {
			assert.NoError(t, err, uri)
		} else {
			assert.ErrorIs(t, err, want, uri)
		}
		can, err := f.inv.CanRead(ctx, nil, uri)
		require.NoError(t, err)
		assert.Equal(t, want == nil, can, uri)
	}
	_, err = f.inv.Complete(ctx, nil, "docs://reports/{id}", "id", "", nil)
	assert.True(t, isUnknownTemplate(err), "%v", err)
	names, _ := templatesWalk(t, f.inv, nil)
	assert.Equal(t, []string{"documents", "files"}, names)
	assert.Zero(t, f.store.reads.Load(), "anonymous callers have no grants: the store is not asked")

	// A caller without a subject (client credentials) has no grants either.
	svc := &principal.Principal{ClientID: "svc", Scopes: []string{"docs:read"}}
	_, err = f.inv.Read(ctx, svc, uriPolicy)
	assert.NoError(t, err)
	_, err = f.inv.Read(ctx, svc, uriBetaNotes)
	assert.True(t, isHidden(err))
	assert.Zero(t, f.store.reads.Load())
	_, err = f.inv.Authorize(ctx, "", "beta")
	assert.Error(t, err, "grants need a subject")
}

// Grants are loaded at most once per request, and never by an inventory
// without gates or a store.
func TestGatesLoadGrantsOncePerRequest(t *testing.T) {
	f := newGatedFixture(t, inventory.Options{PageSize: 3})
	f.seed()
	ctx := context.Background()
	for name, run := range map[string]func() error{
		"list":      func() error { _, err := listWire(ctx, f.inv, alice(), "", testEnv); return err },
		"templates": func() error { _, err := templatesWire(ctx, f.inv, alice(), "", testEnv); return err },
		"read":      func() error { _, err := f.inv.Read(ctx, alice(), uriHandbook); return err },
		"complete":  func() error { _, err := f.inv.Complete(ctx, carol(), "docs://reports/{id}", "id", "", nil); return err },
		"can read":  func() error { _, err := f.inv.CanRead(ctx, alice(), "docs://notes/n1"); return err },
	} {
		before := f.store.reads.Load()
		err := run()
		if name != "read" && name != "complete" {
			require.NoError(t, err, name)
		}
		assert.Equal(t, int64(1), f.store.reads.Load()-before, name)
	}
	before := f.store.reads.Load()
	_, err := f.inv.Read(ctx, alice(), "docs://nothing")
	assert.True(t, isHidden(err))
	assert.Equal(t, before, f.store.reads.Load(), "no match: no grants needed")

	// Without gates and store, Options.Grants-less inventories keep the old path.
	plain := newFixture(t, inventory.Options{})
	_, err = plain.inv.Authorize(ctx, "alice", "x")
	assert.ErrorIs(t, err, inventory.ErrNoGrants)
}

func TestGatesStoreOnlyOverrides(t *testing.T) {
	// A store without gates: per-subject overrides of an ordinary registry.
	inv, err := inventory.New(statics(), nil, inventory.Options{Grants: grants.NewMemory()})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = inv.Disable(ctx, "bob", "docs://policy")
	require.NoError(t, err)
	bobs, _ := walkAll(t, inv, bob())
	assert.Equal(t, []string{"docs://readme"}, bobs)
	alices, _ := walkAll(t, inv, alice())
	assert.Equal(t, []string{"docs://readme", "docs://policy"}, alices)
	_, err = inv.Authorize(ctx, "bob", "anything")
	assert.ErrorIs(t, err, inventory.ErrUnknownGate)
}

func TestGatesGrantErrors(t *testing.T) {
	f := newGatedFixture(t, inventory.Options{})
	ctx := context.Background()
	for name, tc := range map[string]struct {
		run  func() (bool, error)
		want error
	}{
		"unknown gate":          {func() (bool, error) { return f.inv.Authorize(ctx, "alice", "nope") }, inventory.ErrUnknownGate},
		"revoke unknown gate":   {func() (bool, error) { return f.inv.Revoke(ctx, "alice", "nope") }, inventory.ErrUnknownGate},
		"unknown resource":      {func() (bool, error) { return f.inv.Enable(ctx, "alice", "docs://nope") }, inventory.ErrUnknownResource},
		"template by URI":       {func() (bool, error) { return f.inv.Enable(ctx, "alice", "docs://reports/{id}") }, inventory.ErrUnknownResource},
		"disable unknown":       {func() (bool, error) { return f.inv.Disable(ctx, "alice", "nope") }, inventory.ErrUnknownResource},
		"gate as resource":      {func() (bool, error) { return f.inv.Enable(ctx, "alice", "onboarding") }, inventory.ErrUnknownResource},
		"resource as gate":      {func() (bool, error) { return f.inv.Authorize(ctx, "alice", "notes") }, inventory.ErrUnknownGate},
		"control in subject":    {func() (bool, error) { return f.inv.Authorize(ctx, "al\nice", "beta") }, nil},
		"subject too long":      {func() (bool, error) { return f.inv.Authorize(ctx, string(make([]rune, 257)), "beta") }, nil},
		"subject not printable": {func() (bool, error) { return f.inv.Authorize(ctx, "\x7f", "beta") }, nil},
	} {
		changed, err := tc.run()
		assert.Error(t, err, name)
		assert.False(t, changed, name)
		if tc.want != nil {
			assert.ErrorIs(t, err, tc.want, name)
		}
	}
	assert.Empty(t, f.notified.take(), "failed changes notify nobody")

	boom := errors.New("database is down")
	f.store.fail.Store(boom)
	_, err := f.inv.Authorize(ctx, "alice", "beta")
	assert.ErrorIs(t, err, boom, "the store's error goes back to the application")
	assert.Empty(t, f.notified.take())
}

func TestGatesNotifier(t *testing.T) {
	f := newGatedFixture(t, inventory.Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		step    grantStep
		changed bool
	}{
		{authorize("alice", "onboarding"), true},
		{authorize("alice", "onboarding"), false},
		{authorize("bob", "onboarding"), true},
		{revoke("carol", "onboarding"), false},
		{revoke("alice", "onboarding"), true},
		{revoke("alice", "onboarding"), false},
		{enable("alice", uriBetaNotes), true},
		{enable("alice", uriBetaNotes), false},
		{disable("alice", uriBetaNotes), true},
		{disable("alice", uriBetaNotes), false},
		{enable("carol", "reports"), true},
		{authorize("dave", "unused"), true},
	} {
		var changed bool
		var err error
		switch s := tc.step; s.op {
		case grants.OpAuthorize:
			changed, err = f.inv.Authorize(ctx, s.subject, s.name)
		case grants.OpRevoke:
			changed, err = f.inv.Revoke(ctx, s.subject, s.name)
		case grants.OpEnable:
			changed, err = f.inv.Enable(ctx, s.subject, s.name)
		case grants.OpDisable:
			changed, err = f.inv.Disable(ctx, s.subject, s.name)
		}
		require.NoError(t, err)
		assert.Equal(t, tc.changed, changed, "%v", tc.step)
		if tc.changed {
			assert.Equal(t, []string{tc.step.subject}, f.notified.take(), "exactly the changed subject, once: %v", tc.step)
		} else {
			assert.Empty(t, f.notified.take(), "no change, no notification: %v", tc.step)
		}
	}
}

// Policies see the request context and the caller as principal.New made
// it (scopes sorted once, where principals are made: never repaired here).
func TestGatesPolicyContext(t *testing.T) {
	type key struct{}
	fromCtx := func(ctx context.Context, p *principal.Principal) bool { return ctx.Value(key{}) == "admin-network" }
	var seen []string
	spy := func(_ context.Context, p *principal.Principal) bool {
		seen = append(seen, p.Scopes...)
		return true
	}
	inv, err := inventory.New([]inventory.Resource{
		{URI: "a://internal", Name: "Internal", Access: inventory.Public, Gates: []string{"net"}, Read: readEcho},
		{URI: "a://spied", Name: "Spied", Access: inventory.Public, Gates: []string{"spy"}, Read: readEcho},
	}, nil, inventory.Options{Gates: []inventory.Gate{{Name: "net", Policy: fromCtx}, {Name: "spy", Policy: spy}}})
	require.NoError(t, err)
	_, err = inv.Read(context.Background(), nil, "a://internal")
	assert.True(t, isHidden(err))
	_, err = inv.Read(context.WithValue(context.Background(), key{}, "admin-network"), nil, "a://internal")
	assert.NoError(t, err)
	caller, err := principal.New(principal.Principal{Subject: "s", Scopes: []string{"b", "a", "b"}})
	require.NoError(t, err)
	_, err = inv.Read(context.Background(), &caller, "a://spied")
	assert.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, seen, "sorted, de-duplicated scopes")
}
