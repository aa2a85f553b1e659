package listcursor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoundTrip(t *testing.T) {
	for _, p := range []Position{
		{Source: -1}, {Source: -1, Offset: 1}, {Source: -1, Offset: maxOffset},
		{Source: 0}, {Source: 0, Key: "k1"}, {Source: maxSource - 1, Key: strings.Repeat("a", 256)},
	} {
		got, err := Parse(Append(nil, p))
		require.NoError(t, err, "%+v", p)
		assert.Equal(t, p, got)
		assert.LessOrEqual(t, len(Append(nil, p)), MaxLen(maxOffset, maxSource), "%+v", p)
	}
	for _, next := range []int{0, 1, 300, maxOffset} {
		got, ok := ParseTemplates(AppendTemplates(nil, next))
		require.True(t, ok)
		assert.Equal(t, next, got)
		assert.Len(t, AppendTemplates(nil, next), MaxTemplatesLen(next))
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	good := Append(nil, Position{Source: 2, Key: "k1"})
	for name, b := range map[string][]byte{
		"empty":          nil,
		"version only":   {version},
		"other version":  append([]byte{2}, good[1:]...),
		"short key":      good[:len(good)-1],
		"long key":       append(bytes.Clone(good), 'x'),
		"key charset":    Append(nil, Position{Source: 2, Key: "a b"}),
		"key too long":   Append(nil, Position{Source: 2, Key: strings.Repeat("a", 257)}),
		"source too far": Append(nil, Position{Source: maxSource, Key: "k"}),
		"offset too far": Append(nil, Position{Source: -1, Offset: maxOffset + 1}),
		"trailing bytes": append(Append(nil, Position{Source: -1, Offset: 3}), 0),
		"bad uvarint":    {version, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
	} {
		_, err := Parse(b)
		assert.ErrorIs(t, err, errPayload, name)
	}
	for name, b := range map[string][]byte{
		"empty":    nil,
		"version":  {version},
		"trailing": append(AppendTemplates(nil, 3), 0),
		"too far":  AppendTemplates(nil, maxOffset+1),
		"other":    {2, 1},
	} {
		_, ok := ParseTemplates(b)
		assert.False(t, ok, name)
	}
}

// Whatever Parse accepts re-encodes to the same bytes: one encoding per
// position, so a position cannot be spelled two ways.
func FuzzParse(f *testing.F) {
	f.Add(Append(nil, Position{Source: -1, Offset: 7}))
	f.Add(Append(nil, Position{Source: 3, Key: "k00000001"}))
	f.Add(AppendTemplates(nil, 5))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := Parse(b); err == nil {
			if !bytes.Equal(Append(nil, p), b) {
				t.Fatalf("%x parses to %+v, which encodes to %x", b, p, Append(nil, p))
			}
		}
		if next, ok := ParseTemplates(b); ok && !bytes.Equal(AppendTemplates(nil, next), b) {
			t.Fatalf("%x parses to template %d, which encodes to %x", b, next, AppendTemplates(nil, next))
		}
	})
}

// An overlong varint (0xff 0x00 for 127) is refused: found by FuzzParse.
func TestParseRefusesOverlongVarints(t *testing.T) {
	_, ok := ParseTemplates([]byte{version, 0xff, 0x00})
	assert.False(t, ok)
	_, err := Parse([]byte{version, 0x80, 0x00, 0x01})
	assert.ErrorIs(t, err, errPayload)
	_, err = Parse([]byte{version, 0x00, 0x81, 0x00})
	assert.ErrorIs(t, err, errPayload)
}
