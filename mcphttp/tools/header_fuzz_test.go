package tools

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeParamHeader: an Mcp-Param header value (client input) never
// panics the decoder; what it accepts is valid UTF-8, a wrapped value is
// exactly the padded Base64 of what it returns, and an unwrapped one is
// returned as it is, visible ASCII only.
func FuzzDecodeParamHeader(f *testing.F) {
	for _, s := range []string{"eu-west", "=?base64?SGVsbG8=?=", "=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=",
		"=?base64?SGVsbG8=", "=?base64??=", "", "a b", "\x00", "Z\xc3\xbcrich", "=?base64?WsO8cmljaA==?="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, ok := decodeParamHeader(v)
		if !ok {
			return
		}
		if !utf8.ValidString(got) {
			t.Fatalf("%q: accepted invalid UTF-8 %q", v, got)
		}
		if inner, wrapped := strings.CutPrefix(v, "=?base64?"); wrapped && strings.HasSuffix(inner, "?=") {
			if enc := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(got)) + "?="; enc != v {
				t.Fatalf("%q decodes to %q, which encodes as %q", v, got, enc)
			}
			return
		}
		if got != v {
			t.Fatalf("literal %q returned as %q", v, got)
		}
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] > 0x7e {
				t.Fatalf("literal %q holds byte %#x", v, v[i])
			}
		}
	})
}
