package jsonstrict

import (
	"strings"
	"testing"
)

// Inputs of the encoder benchmarks: a resource URI (ASCII), text with
// quotes, backslashes and newlines every few bytes (escaped), Japanese
// text (CJK, three bytes a rune) and a long ASCII text.
var encodeInputs = []struct{ name, s string }{
	{"ascii", "documents://users/1234/notes/2024-05-01-meeting-notes-with-the-team.md"},
	{"escaped", strings.Repeat(`say "hi"\n`+"\tthen\n", 6)},
	{"cjk", strings.Repeat("議事録：チームとの打ち合わせ", 4)},
	{"ascii-long", strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 40)},
}

// BenchmarkAppendString runs AppendString and the byte-by-byte encoder
// that budget and jsonrpc had (the baseline) alternately and reports both
// and their ratio (new/base).
func BenchmarkAppendString(b *testing.B) {
	for _, in := range encodeInputs {
		buf := make([]byte, 0, 4*len(in.s)+2)
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.s)))
			interleave(b, 64,
				func() { buf = appendStringByteByByte(buf[:0], in.s) },
				func() { buf = AppendString(buf[:0], in.s) })
		})
	}
}

// BenchmarkMembers reads the params of a resources/read request: the
// validating walk (base) against Value.Members over the already-parsed
// value, and reports both and their ratio (new/base).
func BenchmarkMembers(b *testing.B) {
	params := []byte(`{"uri":"documents://users/1234/notes/2024-05-01.md","_meta":{"progressToken":7},"cursor":"AQx4c2VhbGVkY3Vyc29yLXBheWxvYWQtZXhhbXBsZS1ieXRlcy0wMDAxMjM0NTY3ODk"}`)
	v, err := Parse(params)
	if err != nil {
		b.Fatal(err)
	}
	var uri Value
	read := func(name []byte, mv Value) bool {
		if string(name) == "uri" {
			uri = mv
		}
		return true
	}
	b.Run("validating-vs-value", func(b *testing.B) {
		b.SetBytes(int64(len(params)))
		interleave(b, 64,
			func() { _ = Members(params, read) },
			func() { _ = v.Members(read) })
	})
	if !uri.EqualStr("documents://users/1234/notes/2024-05-01.md") {
		b.Fatal("uri")
	}
}
