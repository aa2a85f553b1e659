package budget

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

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

// FuzzAppendString checks that any Go string encodes to a valid JSON string
// that decodes to the same text (invalid UTF-8 becoming U+FFFD).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a", "\x00", "\"\\", "\xff", "\u2028", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString([]byte("x"), s)[1:]
		if !json.Valid(got) {
			t.Fatalf("invalid JSON for %q: %s", s, got)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		if back != string([]rune(s)) {
			t.Fatalf("round trip %q → %q", s, back)
		}
	})
}
