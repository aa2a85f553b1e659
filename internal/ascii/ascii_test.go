package ascii

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// asciiRunNaive is asciiRun byte by byte: the reference.
func asciiRunNaive(s string, lo, hi byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] < lo || s[i] > hi {
			return i
		}
	}
	return len(s)
}

// Every byte value at every position of a word, among bytes in range,
// for the ranges the validation uses: outside and asciiRun agree with the
// byte-by-byte reference.
func TestOutsideEveryByte(t *testing.T) {
	for _, r := range []struct{ lo, hi byte }{{0x20, 0x7e}, {0x21, 0x7e}, {1, 0x7f}} {
		for _, fill := range []byte{r.lo, r.hi} { // the neighbours at either edge of the range
			for b := 0; b < 256; b++ {
				for pos := range 8 {
					buf := []byte(strings.Repeat(string(rune(fill)), 8))
					buf[pos] = byte(b)
					s := string(buf)
					want := byte(b) < r.lo || byte(b) > r.hi
					require.Equal(t, want, outside(word(s, 0), r.lo, r.hi), "byte %#x at %d among %#x, range %#x..%#x", b, pos, fill, r.lo, r.hi)
					require.Equal(t, asciiRunNaive(s, r.lo, r.hi), Run(s, r.lo, r.hi))
				}
			}
		}
	}
}

// Random strings of random lengths, mostly in range with an occasional
// byte outside (and bytes with the high bit set, whose carries and borrows
// must not flag a neighbour falsely).
func TestASCIIRunRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := rng.IntN(40)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(0x21 + rng.IntN(0x5e))
			if rng.IntN(16) == 0 {
				b[i] = byte(rng.IntN(256))
			}
		}
		s := string(b)
		for _, r := range []struct{ lo, hi byte }{{0x20, 0x7e}, {0x21, 0x7e}} {
			require.Equal(t, asciiRunNaive(s, r.lo, r.hi), Run(s, r.lo, r.hi), "%q", s)
		}
	}
}

// jsonPlain: printable ASCII without a quote or a backslash, at every
// position of a word and in the bytes after the last whole word.
func TestJSONPlain(t *testing.T) {
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 24} {
		base := strings.Repeat("a", n)
		assert.True(t, JSONPlain(base), n)
		for pos := range n {
			for _, c := range []byte{'"', '\\', 0x1f, 0x7f, 0x80, 0xe2, 0x00} {
				b := []byte(base)
				b[pos] = c
				assert.False(t, JSONPlain(string(b)), "%q", b)
			}
			for _, c := range []byte{' ', '~', '!', '#', '[', ']', '/'} {
				b := []byte(base)
				b[pos] = c
				assert.True(t, JSONPlain(string(b)), "%q", b)
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := mostlyIn(rng, 0x20, 0x7e)
		want := true
		for _, c := range b {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				want = false
			}
		}
		require.Equal(t, want, JSONPlain(string(b)), "%q", b)
	}
}

// KeyChars is Run over 0x21..0x7E reaching the end: random strings of
// random lengths, mostly in range with an occasional byte outside.
func TestKeyChars(t *testing.T) {
	assert.True(t, KeyChars(""))
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		b := mostlyIn(rng, 0x21, 0x7e)
		require.Equal(t, asciiRunNaive(string(b), 0x21, 0x7e) == len(b), KeyChars(string(b)), "%q", b)
	}
}

func BenchmarkKeyChars(b *testing.B) {
	for _, k := range []struct{ name, s string }{
		{"2", "k7"},
		{"10", "doc-000042"},
		{"36", "6f1c2a7e-0b3d-4f5a-9c8e-1d2b3a4c5d6e"},
		{"100", strings.Repeat("abcdefghij", 10)},
		{"36-space", "6f1c2a7e-0b3d-4f5a 9c8e-1d2b3a4c5d6e"},
	} {
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				KeyChars(k.s)
			}
		})
	}
}

// mostlyIn returns up to 39 random bytes in lo..hi, with now and then
// one of any value.
func mostlyIn(rng *rand.Rand, lo, hi byte) []byte {
	b := make([]byte, rng.IntN(40))
	for i := range b {
		b[i] = lo + byte(rng.IntN(int(hi-lo)+1))
		if rng.IntN(24) == 0 {
			b[i] = byte(rng.IntN(256))
		}
	}
	return b
}
