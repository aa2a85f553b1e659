package budget

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	testHead = []byte(`{"jsonrpc":"2.0","id":1,"result":{"resources":`)
	testTail = []byte(`}}`)
)

func TestPageAssembles(t *testing.T) {
	p, err := New(testHead, testTail, Limits{MaxItems: 3, MaxBytes: 1000, Reserve: 30})
	require.NoError(t, err)
	assert.Equal(t, 3, p.Room())
	for _, it := range []string{`{"uri":"a://1"}`, `{"uri":"a://2"}`} {
		require.NoError(t, p.Add([]byte(it)))
	}
	assert.Equal(t, 2, p.Len())
	trailer := []byte(`,"nextCursor":"abc"`)
	want := p.Size(len(trailer))
	out, err := p.Finish(trailer)
	require.NoError(t, err)
	assert.Len(t, out, want)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"a://1"},{"uri":"a://2"}],"nextCursor":"abc"}}`, string(out))
}

func TestEmptyPage(t *testing.T) {
	p, err := New(testHead, testTail, Limits{MaxItems: 1, MaxBytes: len(testHead) + 2 + len(testTail), Reserve: 0})
	require.NoError(t, err)
	out, err := p.Finish(nil)
	require.NoError(t, err)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}`, string(out))
}

func TestItemLimit(t *testing.T) {
	p, err := New(nil, nil, Limits{MaxItems: 2, MaxBytes: 1 << 20})
	require.NoError(t, err)
	require.NoError(t, p.Add([]byte(`1`)))
	require.NoError(t, p.Add([]byte(`2`)))
	assert.ErrorIs(t, p.Add([]byte(`3`)), ErrFull)
	assert.Equal(t, 0, p.Room())
	out, err := p.Finish(nil)
	require.NoError(t, err)
	assert.Equal(t, `[1,2]`, string(out))
}

func TestItemTooLarge(t *testing.T) {
	// head 0, "[]" 2, reserve 10 → 8 bytes of room for one item.
	p, err := New(nil, nil, Limits{MaxItems: 5, MaxBytes: 20, Reserve: 10})
	require.NoError(t, err)
	err = p.Add([]byte(`"123456789"`))
	var tooLarge *ItemTooLargeError
	require.ErrorAs(t, err, &tooLarge)
	assert.Equal(t, 11, tooLarge.Size)
	assert.Equal(t, 8, tooLarge.Room)
	assert.Equal(t, 0, p.Len(), "a failed Add leaves the page unchanged")

	require.NoError(t, p.Add([]byte(`"123456"`)), "exactly the room fits")
	assert.ErrorIs(t, p.Add([]byte(`1`)), ErrFull, "a later item that does not fit is ErrFull, not too large")
}

func TestNewRejectsImpossibleLimits(t *testing.T) {
	_, err := New(testHead, testTail, Limits{MaxItems: 1, MaxBytes: len(testHead) + len(testTail) + 1})
	assert.ErrorIs(t, err, ErrTooSmall)
	_, err = New(nil, nil, Limits{MaxItems: 1, MaxBytes: 10, Reserve: 9})
	assert.ErrorIs(t, err, ErrTooSmall)
	for _, lim := range []Limits{{MaxItems: 0, MaxBytes: 10}, {MaxItems: 1, MaxBytes: 0}, {MaxItems: 1, MaxBytes: 10, Reserve: -1}} {
		_, err := New(nil, nil, lim)
		assert.Error(t, err, "%+v", lim)
	}
}

func TestFinishRejectsOversizedTrailer(t *testing.T) {
	p, err := New(nil, nil, Limits{MaxItems: 1, MaxBytes: 100, Reserve: 3})
	require.NoError(t, err)
	_, err = p.Finish([]byte("1234"))
	assert.Error(t, err)
}

// TestPageProperties fills pages with random items under random limits and
// checks the promises callers rely on: the result is never longer than
// MaxBytes (whatever trailer up to Reserve is used), its length is the
// predicted size, it is valid JSON holding the accepted items in order, and
// the first item left out would indeed have broken a limit.
func TestPageProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		head := []byte(fmt.Sprintf(`{"id":%d,"items":`, iter))
		tail := []byte(`}`)
		reserve := rng.IntN(60)
		lim := Limits{
			MaxItems: 1 + rng.IntN(20),
			MaxBytes: len(head) + len(tail) + 2 + reserve + rng.IntN(400),
			Reserve:  reserve,
		}
		p, err := New(head, tail, lim)
		require.NoError(t, err)

		var accepted []string
		var leftOut []byte
		for {
			item := randomItem(rng)
			err := p.Add(item)
			if err == nil {
				accepted = append(accepted, string(item))
				continue
			}
			var tooLarge *ItemTooLargeError
			if errors.As(err, &tooLarge) {
				require.Empty(t, accepted, "too-large only for an empty page")
				require.Greater(t, len(head)+2+len(item)+reserve+len(tail), lim.MaxBytes,
					"iteration %d: an item that fits was called too large", iter)
			} else {
				require.ErrorIs(t, err, ErrFull)
				// The left-out item would have broken a limit.
				withItem := len(head) + 2 + len(strings.Join(accepted, ",")) + 1 + len(item) + reserve + len(tail)
				require.True(t, len(accepted) == lim.MaxItems || withItem > lim.MaxBytes,
					"iteration %d: item of %d bytes left out of a page that had room", iter, len(item))
			}
			leftOut = item
			break
		}
		require.NotNil(t, leftOut)

		trailer := []byte(`,"next":"` + strings.Repeat("c", max(0, reserve-11)) + `"`)
		if len(trailer) > reserve {
			trailer = nil
		}
		predicted := p.Size(len(trailer))
		out, err := p.Finish(trailer)
		require.NoError(t, err)
		require.LessOrEqual(t, len(out), lim.MaxBytes, "iteration %d: page over the byte limit", iter)
		require.Len(t, out, predicted, "iteration %d: size differs from prediction", iter)

		var decoded struct {
			Items []json.RawMessage `json:"items"`
		}
		require.NoError(t, json.Unmarshal(out, &decoded), "iteration %d: %s", iter, out)
		require.Len(t, decoded.Items, len(accepted))
		for i := range accepted {
			require.Equal(t, accepted[i], string(decoded.Items[i]))
		}
	}
}

func randomItem(rng *rand.Rand) []byte {
	s := strings.Repeat("x", rng.IntN(120))
	return AppendString(nil, s)
}

func TestNewIntoReusesStorage(t *testing.T) {
	buf := make([]byte, 0, 256)
	p, err := NewInto(buf, []byte("h"), []byte("t"), Limits{MaxItems: 2, MaxBytes: 100})
	require.NoError(t, err)
	require.NoError(t, p.Add([]byte("1")))
	out, err := p.Finish(nil)
	require.NoError(t, err)
	assert.Equal(t, "h[1]t", string(out))
	assert.Equal(t, &buf[:1][0], &out[0], "the page must be assembled in the caller's storage")
}

func TestResetReusesThePage(t *testing.T) {
	var p Page
	require.NoError(t, p.Reset(nil, []byte("h"), []byte("t"), Limits{MaxItems: 1, MaxBytes: 100}))
	require.NoError(t, p.Add([]byte("1")))
	assert.ErrorIs(t, p.Add([]byte("2")), ErrFull)
	out, err := p.Finish(nil)
	require.NoError(t, err)
	assert.Equal(t, "h[1]t", string(out))

	require.NoError(t, p.Reset(out, []byte("H"), nil, Limits{MaxItems: 2, MaxBytes: 100}))
	assert.Equal(t, 0, p.Len(), "a reset page is empty")
	require.NoError(t, p.Add([]byte("a")))
	require.NoError(t, p.Add([]byte("b")))
	out, err = p.Finish(nil)
	require.NoError(t, err)
	assert.Equal(t, "H[a,b]", string(out))

	assert.ErrorIs(t, p.Reset(nil, []byte("long head"), nil, Limits{MaxItems: 1, MaxBytes: 3}), ErrTooSmall)
	allocs := testing.AllocsPerRun(100, func() {
		_ = p.Reset(out, []byte("h"), nil, Limits{MaxItems: 1, MaxBytes: 100})
		_ = p.Add([]byte("1"))
		out, _ = p.Finish(nil)
	})
	assert.Zero(t, allocs)
}
