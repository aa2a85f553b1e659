package httpheader

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDecodeValue(t *testing.T) {
	for in, want := range map[string]string{
		"eu-west":                  "eu-west",
		"":                         "",
		"a b":                      "a b",
		"=?base64?SGVsbG8=?=":      "Hello",
		"=?base64?WsO8cmljaA==?=":  "Zürich",
		"=?base64??=":              "",
		"=?base64?SGVsbG8=":        "=?base64?SGVsbG8=", // no suffix: the text itself
		"=?base64?IGxlYWRpbmc=?=":  " leading",
		"docs://documents/a?b=c#d": "docs://documents/a?b=c#d",
	} {
		got, ok := DecodeValue(in)
		assert.True(t, ok, "%q", in)
		assert.Equal(t, want, got, "%q", in)
	}
	for _, in := range []string{
		"=?base64?SGVsbG8?=",      // unpadded
		"=?base64?SGVs!!!bG8=?=",  // not the alphabet
		"=?base64?SGVs\nbG8=?=",   // a line break Strict would skip
		"=?base64?/w==?=",         // not UTF-8
		"=?base64?SGVsbG8-_w==?=", // URL alphabet
		"\x00", "Z\xc3\xbcrich", "tab\there", "del\x7f", " lead", "trail ",
	} {
		_, ok := DecodeValue(in)
		assert.False(t, ok, "%q", in)
	}
}

func FuzzDecodeValue(f *testing.F) {
	for _, s := range []string{"eu-west", "=?base64?SGVsbG8=?=", "=?base64?SGVsbG8?=", "=?base64?SGVsbG8=", "", " a", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, ok := DecodeValue(v)
		if !ok {
			return
		}
		// What is accepted in the encoded form encodes back to it; what is
		// accepted as itself is visible ASCII.
		if inner, wrapped := strings.CutPrefix(v, "=?base64?"); wrapped && strings.HasSuffix(inner, "?=") {
			if enc := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(got)) + "?="; enc != v {
				t.Fatalf("%q decoded to %q, which encodes as %q", v, got, enc)
			}
			return
		}
		if got != v {
			t.Fatalf("%q -> %q", v, got)
		}
		for i := 0; i < len(got); i++ {
			if got[i] < 0x20 || got[i] > 0x7e {
				t.Fatalf("%q accepted as itself", v)
			}
		}
	})
}
