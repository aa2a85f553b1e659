package inventory_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// requireCursorError asserts a *CursorError with the reason.
func requireCursorError(t *testing.T, err error, reason string, msgAndArgs ...any) {
	t.Helper()
	var ce *inventory.CursorError
	require.True(t, errors.As(err, &ce), append([]any{"got %v, want a *CursorError"}, err)...)
	assert.Equal(t, reason, ce.Reason, msgAndArgs...)
}

// secondPageCursor returns a valid cursor of alice's first page.
func secondPageCursor(t *testing.T, f *fixture) string {
	t.Helper()
	for i := 1; i <= 10; i++ {
		f.docs.Insert("alice", docEntry(i))
		f.docs.Insert("bob", docEntry(100+i))
	}
	l, _ := page(t, f.inv, alice(), "")
	require.NotNil(t, l.NextCursor)
	return *l.NextCursor
}

// A17: tampering with a cursor in any way makes it invalid.
func TestCursorTampering(t *testing.T) {
	f := newFixture(t, inventory.Options{PageSize: 3})
	c := secondPageCursor(t, f)
	_, err := listWire(context.Background(), f.inv, alice(), c, testEnv)
	require.NoError(t, err, "the untouched cursor works")

	raw, err := base64.RawURLEncoding.DecodeString(c)
	require.NoError(t, err)
	var bad []string
	for i := range raw { // every single-bit flip, one bit per byte position
		for _, bit := range []byte{0x01, 0x80} {
			m := append([]byte(nil), raw...)
			m[i] ^= bit
			bad = append(bad, base64.RawURLEncoding.EncodeToString(m))
		}
	}
	for n := 1; n < len(c); n += 7 { // truncations ("" is a first page)
		bad = append(bad, c[:n])
	}
	other := append([]byte(nil), raw...)
	other[0] = 0x02 // another format version
	bad = append(bad,
		c+"A", c+"AAAA", // extensions
		c+"=", c+"==", // padding
		strings.NewReplacer("-", "+", "_", "/").Replace(c)+"+/", // standard alphabet
		c[:10]+"\r\n"+c[10:], c[:10]+"\n"+c[10:],                // line breaks that base64 decoders skip
		" "+c, c+" ",
		base64.RawURLEncoding.EncodeToString(other),
		base64.StdEncoding.EncodeToString(raw),
		strings.Repeat("A", 5000), // far too long
	)
	for _, b := range bad {
		if b == c {
			continue
		}
		_, err := listWire(context.Background(), f.inv, alice(), b, testEnv)
		requireCursorError(t, err, inventory.ReasonInvalid, "cursor %q", b)
	}
}

// A18: a cursor replayed by another subject, client or audience is invalid.
func TestCursorReplayByAnotherCaller(t *testing.T) {
	f := newFixture(t, inventory.Options{PageSize: 3})
	c := secondPageCursor(t, f)
	for name, mutate := range map[string]func(p *principal.Principal){
		"subject":      func(p *principal.Principal) { p.Subject = "bob" },
		"client":       func(p *principal.Principal) { p.ClientID = "client-2" },
		"audience":     func(p *principal.Principal) { p.Audience = "https://other.example.com/mcp" },
		"no client id": func(p *principal.Principal) { p.ClientID = "" },
		// length-prefixed fields: moving bytes between fields changes the binding
		"shifted fields": func(p *principal.Principal) { p.ClientID, p.Subject = "client-1a", "lice" },
	} {
		t.Run(name, func(t *testing.T) {
			p := alice()
			mutate(p)
			_, err := listWire(context.Background(), f.inv, p, c, testEnv)
			requireCursorError(t, err, inventory.ReasonInvalid)
		})
	}
}

// A19: a cursor after a scope change, or issued by a registry with other
// sources or page settings, is invalid.
func TestCursorAfterScopeOrRegistryChange(t *testing.T) {
	f := newFixture(t, inventory.Options{PageSize: 3})
	c := secondPageCursor(t, f)

	t.Run("scope revoked", func(t *testing.T) {
		p := alice()
		p.Scopes = []string{"docs:read"}
		_, err := listWire(context.Background(), f.inv, p, c, testEnv)
		requireCursorError(t, err, inventory.ReasonInvalid)
	})
	t.Run("scope added", func(t *testing.T) {
		p := alice()
		p.Scopes = []string{"docs:read", "notes:read", "tags:read"}
		_, err := listWire(context.Background(), f.inv, p, c, testEnv)
		requireCursorError(t, err, inventory.ReasonInvalid)
	})
	registries := map[string]func() (*inventory.Inventory, error){
		"another source": func() (*inventory.Inventory, error) {
			extra := inventory.Template{Name: "tags", URITemplate: "docs://tags/{id}", Read: readEcho, List: emptyList}
			return inventory.New(statics(), []inventory.Template{docsTemplate(f.docs.List), notesTemplate(f.notes.List), extra},
				inventory.Options{PageSize: 3, Sealer: f.sealer})
		},
		"a source removed": func() (*inventory.Inventory, error) {
			return inventory.New(statics(), []inventory.Template{docsTemplate(f.docs.List)}, inventory.Options{PageSize: 3, Sealer: f.sealer})
		},
		"sources reordered": func() (*inventory.Inventory, error) {
			return inventory.New(statics(), []inventory.Template{notesTemplate(f.notes.List), docsTemplate(f.docs.List)},
				inventory.Options{PageSize: 3, Sealer: f.sealer})
		},
		"other page size": func() (*inventory.Inventory, error) {
			return inventory.New(statics(), []inventory.Template{docsTemplate(f.docs.List), notesTemplate(f.notes.List)},
				inventory.Options{PageSize: 4, Sealer: f.sealer})
		},
		"other scopes on a source": func() (*inventory.Inventory, error) {
			d := docsTemplate(f.docs.List)
			d.RequiredScopes = nil
			return inventory.New(statics(), []inventory.Template{d, notesTemplate(f.notes.List)}, inventory.Options{PageSize: 3, Sealer: f.sealer})
		},
		"a static removed": func() (*inventory.Inventory, error) {
			return inventory.New(statics()[:1], []inventory.Template{docsTemplate(f.docs.List), notesTemplate(f.notes.List)},
				inventory.Options{PageSize: 3, Sealer: f.sealer})
		},
	}
	for name, build := range registries {
		t.Run(name, func(t *testing.T) {
			inv, err := build()
			require.NoError(t, err)
			_, err = listWire(context.Background(), inv, alice(), c, testEnv)
			requireCursorError(t, err, inventory.ReasonInvalid)
		})
	}
	t.Run("same registry rebuilt", func(t *testing.T) {
		inv, err := inventory.New(statics(), []inventory.Template{docsTemplate(f.docs.List), notesTemplate(f.notes.List)},
			inventory.Options{PageSize: 3, Sealer: f.sealer})
		require.NoError(t, err)
		_, err = listWire(context.Background(), inv, alice(), c, testEnv)
		assert.NoError(t, err, "an identical registry with the same key accepts the cursor (fleets)")
	})
}

// A20: a traversal expires 15 minutes after its first page, however many
// pages were fetched since; a first-page time in the future is invalid.
func TestCursorExpiry(t *testing.T) {
	f := newFixture(t, inventory.Options{PageSize: 3})
	for i := 1; i <= 30; i++ {
		f.docs.Insert("alice", docEntry(i))
	}
	l, _ := page(t, f.inv, alice(), "")
	c := *l.NextCursor
	for i := 0; i < 3; i++ { // keep paging every 4 minutes
		f.clock.Advance(4 * time.Minute)
		l, _ = page(t, f.inv, alice(), c)
		require.NotNil(t, l.NextCursor)
		c = *l.NextCursor
	}
	f.clock.Advance(3*time.Minute - time.Second) // 14:59 after the first page
	l, _ = page(t, f.inv, alice(), c)
	c = *l.NextCursor
	f.clock.Advance(2 * time.Second) // 15:01
	_, err := listWire(context.Background(), f.inv, alice(), c, testEnv)
	requireCursorError(t, err, inventory.ReasonExpired, "the cursor issued a second ago expires with its traversal")

	// A cursor claiming a first page in the future (a replica with a fast
	// clock sharing the key ring).
	ring, err := sealedcursor.ParseKeyRing("1:" + base64.RawURLEncoding.EncodeToString(make([]byte, 32)))
	require.NoError(t, err)
	clk := newClock()
	now := sealedcursor.MustNew(sealedcursor.Options{Keys: ring, Now: clk.Now})
	ahead := sealedcursor.MustNew(sealedcursor.Options{Keys: ring, Now: func() time.Time { return clk.Now().Add(time.Hour) }})
	invNow, err := inventory.New(statics(), []inventory.Template{docsTemplate(f.docs.List)}, inventory.Options{PageSize: 3, Sealer: now})
	require.NoError(t, err)
	invAhead, err := inventory.New(statics(), []inventory.Template{docsTemplate(f.docs.List)}, inventory.Options{PageSize: 3, Sealer: ahead})
	require.NoError(t, err)
	l, _ = page(t, invAhead, alice(), "")
	_, err = listWire(context.Background(), invNow, alice(), *l.NextCursor, testEnv)
	requireCursorError(t, err, inventory.ReasonInvalid)
}

// A21: a cursor of another process (another random key) or sealed with a
// rotated-out key is invalid; a key ring shared by replicas accepts it.
func TestCursorFromAnotherProcessOrKey(t *testing.T) {
	f := newFixture(t, inventory.Options{PageSize: 3})
	c := secondPageCursor(t, f)
	restarted, err := inventory.New(statics(), []inventory.Template{docsTemplate(f.docs.List), notesTemplate(f.notes.List)},
		inventory.Options{PageSize: 3}) // a fresh process-local key
	require.NoError(t, err)
	_, err = listWire(context.Background(), restarted, alice(), c, testEnv)
	requireCursorError(t, err, inventory.ReasonInvalid)

	old := "1:" + base64.RawURLEncoding.EncodeToString(bytesOf(1))
	next := "2:" + base64.RawURLEncoding.EncodeToString(bytesOf(2))
	build := func(ring string) *inventory.Inventory {
		kr, err := sealedcursor.ParseKeyRing(ring)
		require.NoError(t, err)
		inv, err := inventory.New(statics(), []inventory.Template{docsTemplate(f.docs.List), notesTemplate(f.notes.List)},
			inventory.Options{PageSize: 3, Sealer: sealedcursor.MustNew(sealedcursor.Options{Keys: kr})})
		require.NoError(t, err)
		return inv
	}
	l, _ := page(t, build(old), alice(), "")
	c = *l.NextCursor
	_, err = listWire(context.Background(), build(old), alice(), c, testEnv)
	assert.NoError(t, err, "another replica with the same ring")
	_, err = listWire(context.Background(), build(next+","+old), alice(), c, testEnv)
	assert.NoError(t, err, "during a rotation the old key still opens")
	_, err = listWire(context.Background(), build(next), alice(), c, testEnv)
	requireCursorError(t, err, inventory.ReasonInvalid, "after the rotation")
}

func bytesOf(b byte) []byte {
	s := make([]byte, 32)
	for i := range s {
		s[i] = b
	}
	return s
}

// A cursor of one method never opens for another.
func TestCursorPurposes(t *testing.T) {
	tmpls := make([]inventory.Template, 0, 5)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		tmpls = append(tmpls, inventory.Template{Name: n, URITemplate: n + "://{id}", Access: inventory.Public, Read: readEcho})
	}
	inv, err := inventory.New(statics(), tmpls, inventory.Options{PageSize: 1})
	require.NoError(t, err)
	out, err := templatesWire(context.Background(), inv, alice(), "", testEnv)
	require.NoError(t, err)
	tc := extractCursor(t, out)
	_, err = listWire(context.Background(), inv, alice(), tc, testEnv)
	requireCursorError(t, err, inventory.ReasonInvalid, "a templates cursor in resources/list")

	l, _ := page(t, inv, alice(), "")
	_, err = templatesWire(context.Background(), inv, alice(), *l.NextCursor, testEnv)
	requireCursorError(t, err, inventory.ReasonInvalid, "a list cursor in resources/templates/list")

	anon, err := templatesWire(context.Background(), inv, nil, "", testEnv)
	require.NoError(t, err)
	_, err = templatesWire(context.Background(), inv, alice(), extractCursor(t, anon), testEnv)
	requireCursorError(t, err, inventory.ReasonInvalid, "an anonymous cursor replayed by a signed-in caller")
}

// Authentic cursors whose position makes no sense for this registry or
// caller are invalid, never a silent restart.
func TestCursorPositionOutOfRange(t *testing.T) {
	f := newFixture(t, inventory.Options{PageSize: 3})
	first := f.clock.Now()
	for name, payload := range map[string][]byte{
		"source beyond":     {1, 3, 0}, // source index 2 of 2
		"statics beyond":    {1, 0, 3}, // offset 3 of 2 visible statics
		"unknown version":   {2, 0, 0},
		"trailing bytes":    {1, 0, 0, 0},
		"key length wrong":  {1, 1, 5, 'a'},
		"key charset":       {1, 1, 1, ' '},
		"empty":             {},
		"truncated uvarint": {1, 0x80},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := f.inv.SealListPayloadForTest(alice(), payload, first)
			require.NoError(t, err)
			_, err = listWire(context.Background(), f.inv, alice(), c, testEnv)
			requireCursorError(t, err, inventory.ReasonInvalid)
		})
	}
	t.Run("a source the caller may not use", func(t *testing.T) {
		c, err := f.inv.SealListPositionForTest(bob(), 1, 0, "", first) // notes: bob lacks notes:read
		require.NoError(t, err)
		_, err = listWire(context.Background(), f.inv, bob(), c, testEnv)
		requireCursorError(t, err, inventory.ReasonInvalid)
	})
	t.Run("statics of a protected view seen by fewer", func(t *testing.T) {
		c, err := f.inv.SealListPositionForTest(bob(), -1, 2, "", first)
		require.NoError(t, err)
		_, err = listWire(context.Background(), f.inv, bob(), c, testEnv)
		assert.NoError(t, err, "offset 2 of bob's 2 visible statics is the end of the statics")
	})
}
