package budget

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/stretchr/testify/assert"
)

func TestAppendString(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " and \ backslash`, "tab\tnl\ncr\r", "\x00\x01\x1f\x7f",
		"é ü 日本", "\u2028\u2029", "<script>&", "bad \xff utf8 \xc3", "emoji 😀",
	} {
		got := AppendString(nil, s)
		assert.True(t, json.Valid(got), "%q → %s", s, got)
		var back string
		assert.NoError(t, json.Unmarshal(got, &back))
		want := s
		if !utf8.ValidString(s) {
			want = string([]rune(s)) // invalid bytes → U+FFFD, as encoding/json does
		}
		assert.Equal(t, want, back)
	}
	assert.Equal(t, `"<&>"`, string(AppendString(nil, "<&>")), "no HTML escaping")
}

// AppendString is the kit's one encoder (fuzzed in internal/jsonstrict):
// the same bytes, on every kind of input.
func TestAppendStringIsTheKitsEncoder(t *testing.T) {
	for _, s := range []string{"", "plain", "\"q\\", "\x00\u2028\xff", "日本語", strings.Repeat("abc\n", 20)} {
		assert.Equal(t, string(jsonstrict.AppendString([]byte("x"), s)), string(AppendString([]byte("x"), s)), "%q", s)
	}
	buf := make([]byte, 0, 64)
	assert.Zero(t, testing.AllocsPerRun(100, func() { buf = AppendString(buf[:0], "documents://users/1/a.md") }))
}
