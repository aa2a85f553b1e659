package sealedcursor

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/fakeclock"
)

// fakeClock is an injectable clock for expiry tests.
type fakeClock = fakeclock.Clock

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newTestSealer(t testing.TB, clk *fakeClock, keys *KeyRing) *Sealer {
	t.Helper()
	s, err := New(Options{Now: clk.Now, Keys: keys})
	require.NoError(t, err)
	return s
}

func TestRoundTrip(t *testing.T) {
	clk := fakeclock.New(t0)
	s := newTestSealer(t, clk, nil)
	binding := []byte("client\x00alice\x00docs:read\x00https://mcp.example.com/mcp\x00fp")
	for _, payload := range [][]byte{nil, {}, []byte("k"), []byte(strings.Repeat("x", MaxPayload))} {
		c, err := s.Seal(binding, payload, t0)
		require.NoError(t, err)
		assert.Len(t, c, SealedLen(len(payload)), "SealedLen must predict the cursor length")
		got, first, err := s.Open(binding, c)
		require.NoError(t, err)
		assert.Equal(t, string(payload), string(got))
		assert.True(t, first.Equal(t0), "got first %v, want %v", first, t0)
	}
}

func TestSealIsRandomized(t *testing.T) {
	s := newTestSealer(t, fakeclock.New(t0), nil)
	a, err := s.Seal([]byte("b"), []byte("same"), t0)
	require.NoError(t, err)
	b, err := s.Seal([]byte("b"), []byte("same"), t0)
	require.NoError(t, err)
	assert.NotEqual(t, a, b, "two seals of the same input must differ (random nonce)")
	assert.NotContains(t, a, "same", "payload must not be readable")
}

func TestSealRejectsBadInput(t *testing.T) {
	s := newTestSealer(t, fakeclock.New(t0), nil)
	_, err := s.Seal(nil, make([]byte, MaxPayload+1), t0)
	assert.ErrorIs(t, err, ErrPayloadTooLarge)
	_, err = s.Seal(nil, nil, time.Time{})
	assert.Error(t, err)
}

// A17: every single-bit flip of the decoded bytes of at least 200 cursors,
// and of every character of the cursor string, is rejected.
func TestBitFlipsRejected(t *testing.T) {
	s := newTestSealer(t, fakeclock.New(t0), nil)
	binding := []byte("binding")
	flips := 0
	for i := range 200 {
		payload := []byte(fmt.Sprintf("src=%d;off=0;key=doc-%06d", i%3, i))
		c, err := s.Seal(binding, payload, t0)
		require.NoError(t, err)
		raw, err := base64.RawURLEncoding.DecodeString(c)
		require.NoError(t, err)
		for bit := range len(raw) * 8 {
			mutated := append([]byte(nil), raw...)
			mutated[bit/8] ^= 1 << (bit % 8)
			_, _, err := s.Open(binding, base64.RawURLEncoding.EncodeToString(mutated))
			require.ErrorIs(t, err, ErrInvalid, "cursor %d bit %d accepted", i, bit)
			flips++
		}
		for pos := range len(c) {
			for bit := range 8 {
				b := []byte(c)
				b[pos] ^= 1 << bit
				_, _, err := s.Open(binding, string(b))
				require.ErrorIs(t, err, ErrInvalid, "cursor %d char %d bit %d accepted", i, pos, bit)
				flips++
			}
		}
	}
	t.Logf("%d single-bit flips, all rejected", flips)
}

// A17: truncation at every length and extension are rejected.
func TestTruncationAndExtensionRejected(t *testing.T) {
	s := newTestSealer(t, fakeclock.New(t0), nil)
	c, err := s.Seal([]byte("b"), []byte("position"), t0)
	require.NoError(t, err)
	for n := range len(c) {
		_, _, err := s.Open([]byte("b"), c[:n])
		assert.ErrorIs(t, err, ErrInvalid, "truncated to %d accepted", n)
	}
	for _, ext := range []string{"A", "AA", "AAA", "AAAA", "=", "==", "\n", "\r\n"} {
		_, _, err := s.Open([]byte("b"), c+ext)
		assert.ErrorIs(t, err, ErrInvalid, "extension %q accepted", ext)
	}
}

// A17: non-canonical encodings of a valid cursor are rejected.
func TestNonCanonicalEncodingsRejected(t *testing.T) {
	s := newTestSealer(t, fakeclock.New(t0), nil)
	c, err := s.Seal([]byte("b"), []byte("position"), t0)
	require.NoError(t, err)
	raw, err := base64.RawURLEncoding.DecodeString(c)
	require.NoError(t, err)
	variants := map[string]string{
		"padded":          base64.URLEncoding.EncodeToString(raw),
		"standard":        base64.StdEncoding.EncodeToString(raw),
		"standard-raw":    base64.RawStdEncoding.EncodeToString(raw),
		"crlf inside":     c[:10] + "\r\n" + c[10:],
		"space":           c[:10] + " " + c[10:],
		"leading space":   " " + c,
		"trailing NUL":    c + "\x00",
		"other version":   base64.RawURLEncoding.EncodeToString(append([]byte{0x02}, raw[1:]...)),
		"unknown key id":  base64.RawURLEncoding.EncodeToString(append([]byte{raw[0], 7}, raw[2:]...)),
		"empty":           "",
		"over max length": strings.Repeat("A", maxLen+1),
	}
	// A last character with non-zero unused bits decodes to the same bytes
	// in lenient decoders; the strict decoder must refuse it.
	if last := c[len(c)-1]; len(raw)%3 != 0 {
		alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		idx := strings.IndexByte(alphabet, last)
		variants["non-zero padding bits"] = c[:len(c)-1] + string(alphabet[idx^1])
	}
	for name, v := range variants {
		if v == c {
			continue // an encoding that happens to coincide is the canonical one
		}
		_, _, err := s.Open([]byte("b"), v)
		assert.ErrorIs(t, err, ErrInvalid, name)
	}
}

// A18, A19: a cursor opens only for the binding it was sealed for; any change
// in any part of the binding (another subject, client, scope set, audience,
// registry fingerprint) is rejected.
func TestBindingChangesRejected(t *testing.T) {
	s := newTestSealer(t, fakeclock.New(t0), nil)
	parts := []string{"client-1", "alice", "docs:read notes:read", "https://mcp.example.com/mcp", "fp-1234"}
	join := func(p []string) []byte { return []byte(strings.Join(p, "\x00")) }
	c, err := s.Seal(join(parts), []byte("pos"), t0)
	require.NoError(t, err)
	for i := range parts {
		for _, change := range []string{"", parts[i] + "x", strings.ToUpper(parts[i]), parts[i][1:]} {
			changed := append([]string(nil), parts...)
			changed[i] = change
			_, _, err := s.Open(join(changed), c)
			assert.ErrorIs(t, err, ErrInvalid, "part %d changed to %q accepted", i, change)
		}
	}
	_, _, err = s.Open(nil, c)
	assert.ErrorIs(t, err, ErrInvalid)
	_, _, err = s.Open(join(parts), c)
	assert.NoError(t, err, "the original binding must still open")
}

// A20: a traversal expires TTL after its first page; pages sealed later carry
// the first page's time, so they do not extend it. Future times are invalid.
func TestExpiry(t *testing.T) {
	clk := fakeclock.New(t0)
	s := newTestSealer(t, clk, nil)
	b := []byte("b")
	first, err := s.Seal(b, []byte("p1"), t0)
	require.NoError(t, err)

	clk.Advance(DefaultTTL - time.Second)
	_, _, err = s.Open(b, first)
	require.NoError(t, err, "TTL-1s must still open")
	// The next page is sealed now but with the first page's time.
	second, err := s.Seal(b, []byte("p2"), t0)
	require.NoError(t, err)

	clk.Advance(2 * time.Second) // TTL+1s after the first page
	_, _, err = s.Open(b, first)
	assert.ErrorIs(t, err, ErrExpired)
	_, _, err = s.Open(b, second)
	assert.ErrorIs(t, err, ErrExpired, "later pages must not extend the traversal")

	// A forged-looking but authentic cursor from the future is invalid, not expired.
	clk.Set(t0)
	future, err := s.Seal(b, []byte("p"), t0.Add(DefaultSkew+time.Second))
	require.NoError(t, err)
	_, _, err = s.Open(b, future)
	assert.ErrorIs(t, err, ErrInvalid)
	withinSkew, err := s.Seal(b, []byte("p"), t0.Add(DefaultSkew-time.Second))
	require.NoError(t, err)
	_, _, err = s.Open(b, withinSkew)
	assert.NoError(t, err)

	// An expired cursor for another binding is invalid, never "expired".
	clk.Advance(time.Hour)
	_, _, err = s.Open([]byte("other"), first)
	assert.ErrorIs(t, err, ErrInvalid)
}

func TestCustomTTL(t *testing.T) {
	clk := fakeclock.New(t0)
	s, err := New(Options{TTL: time.Minute, Now: clk.Now})
	require.NoError(t, err)
	c, err := s.Seal(nil, nil, t0)
	require.NoError(t, err)
	clk.Advance(time.Minute)
	_, _, err = s.Open(nil, c)
	assert.NoError(t, err, "exactly TTL is still valid")
	clk.Advance(time.Nanosecond)
	_, _, err = s.Open(nil, c)
	assert.ErrorIs(t, err, ErrExpired)

	_, err = New(Options{TTL: -time.Second})
	assert.Error(t, err)
}

// A21: a new process key (a restart, another replica) rejects old cursors.
func TestProcessKeyIsPerSealer(t *testing.T) {
	clk := fakeclock.New(t0)
	a := newTestSealer(t, clk, nil)
	b := newTestSealer(t, clk, nil)
	c, err := a.Seal([]byte("x"), []byte("p"), t0)
	require.NoError(t, err)
	_, _, err = b.Open([]byte("x"), c)
	assert.ErrorIs(t, err, ErrInvalid)
}

// A21: rotation — the old key still opens while it is in the ring, a removed
// key does not, and sealing always uses the first (active) key.
func TestKeyRotation(t *testing.T) {
	clk := fakeclock.New(t0)
	k1, err := GenerateKey(1)
	require.NoError(t, err)
	k2, err := GenerateKey(2)
	require.NoError(t, err)

	ringOld, err := ParseKeyRing(k1)
	require.NoError(t, err)
	ringRotating, err := ParseKeyRing(k2 + ", " + k1)
	require.NoError(t, err)
	ringNew, err := ParseKeyRing(k2)
	require.NoError(t, err)

	old := newTestSealer(t, clk, ringOld)
	rotating := newTestSealer(t, clk, ringRotating)
	newOnly := newTestSealer(t, clk, ringNew)

	oldCursor, err := old.Seal([]byte("b"), []byte("p"), t0)
	require.NoError(t, err)
	_, _, err = rotating.Open([]byte("b"), oldCursor)
	assert.NoError(t, err, "a previous key must still open during rotation")
	_, _, err = newOnly.Open([]byte("b"), oldCursor)
	assert.ErrorIs(t, err, ErrInvalid, "a removed key must not open")

	fresh, err := rotating.Seal([]byte("b"), []byte("p"), t0)
	require.NoError(t, err)
	_, _, err = newOnly.Open([]byte("b"), fresh)
	assert.NoError(t, err, "sealing must use the active (first) key")
	_, _, err = old.Open([]byte("b"), fresh)
	assert.ErrorIs(t, err, ErrInvalid)

	// Two fleets with the same key id but different secrets do not mix.
	other, err := GenerateKey(1)
	require.NoError(t, err)
	ringOther, err := ParseKeyRing(other)
	require.NoError(t, err)
	_, _, err = newTestSealer(t, clk, ringOther).Open([]byte("b"), oldCursor)
	assert.ErrorIs(t, err, ErrInvalid)
}

func TestParseKeyRingErrors(t *testing.T) {
	good, err := GenerateKey(1)
	require.NoError(t, err)
	secret := strings.SplitN(good, ":", 2)[1]
	raw, err := base64.RawURLEncoding.DecodeString(secret)
	require.NoError(t, err)
	std := base64.StdEncoding.EncodeToString(raw)

	ok := []string{good, " " + good + " ", "1:" + std, "2:" + secret + ",1:" + std}
	for _, s := range ok {
		_, err := ParseKeyRing(s)
		assert.NoError(t, err, "%q", s)
	}
	bad := map[string]string{
		"empty":         "",
		"blank":         "  ",
		"no colon":      secret,
		"id zero":       "0:" + secret,
		"id too large":  "256:" + secret,
		"id not number": "x:" + secret,
		"short secret":  "1:" + base64.RawURLEncoding.EncodeToString(raw[:16]),
		"long secret":   "1:" + base64.RawURLEncoding.EncodeToString(append(raw, 1)),
		"not base64":    "1:!!!!",
		"duplicate id":  "1:" + secret + ",1:" + std,
		"empty entry":   good + ",",
	}
	for name, s := range bad {
		_, err := ParseKeyRing(s)
		if assert.Error(t, err, name) {
			assert.NotContains(t, err.Error(), secret, "errors must not echo secrets")
		}
	}
	_, err = GenerateKey(0)
	assert.Error(t, err)
}

func TestAppendSeal(t *testing.T) {
	s := newTestSealer(t, fakeclock.New(t0), nil)
	prefix := []byte(`,"nextCursor":"`)
	out, err := s.AppendSeal(prefix, []byte("b"), []byte("position"), t0)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(out), string(prefix)), "appends after dst")
	c := string(out[len(prefix):])
	assert.Len(t, c, SealedLen(len("position")))
	got, first, err := s.Open([]byte("b"), c)
	require.NoError(t, err)
	assert.Equal(t, "position", string(got))
	assert.True(t, first.Equal(t0))

	_, err = s.AppendSeal(nil, nil, make([]byte, MaxPayload+1), t0)
	assert.ErrorIs(t, err, ErrPayloadTooLarge)
	allocs := testing.AllocsPerRun(100, func() {
		out, _ = s.AppendSeal(out[:0], []byte("b"), []byte("position"), t0)
	})
	assert.Zero(t, allocs, "AppendSeal into a large enough buffer does not allocate")
}

// AppendOpen appends exactly the payload Open returns, leaves dst as it
// was on every failure, and its result does not alias the Sealer's
// scratch space (a second open does not change the first payload).
func TestAppendOpen(t *testing.T) {
	s := MustNew(Options{})
	now := time.Now()
	c1, err := s.Seal([]byte("b"), []byte("payload one"), now)
	require.NoError(t, err)
	c2, err := s.Seal([]byte("b"), []byte("payload two!"), now)
	require.NoError(t, err)
	got, first, err := s.AppendOpen([]byte("prefix:"), []byte("b"), c1)
	require.NoError(t, err)
	assert.Equal(t, "prefix:payload one", string(got))
	assert.Equal(t, now.UnixNano(), first.UnixNano())
	_, _, err = s.AppendOpen(nil, []byte("b"), c2)
	require.NoError(t, err)
	assert.Equal(t, "prefix:payload one", string(got), "not aliased to scratch space")
	for _, bad := range []struct {
		binding, cursor string
	}{{"other", c1}, {"b", c1[:len(c1)-1]}, {"b", c1 + "A"}, {"b", ""}, {"b", "\n" + c1[1:]}} {
		dst := []byte("keep")
		out, _, err := s.AppendOpen(dst, []byte(bad.binding), bad.cursor)
		assert.ErrorIs(t, err, ErrInvalid)
		assert.Equal(t, "keep", string(out))
	}
}
