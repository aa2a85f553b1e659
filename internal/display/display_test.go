package display

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

// reference is the rule computed afresh from Go's unicode tables, by the
// definitions: Cc, Zl, Zp, Cf, Bidi_Control, and Default_Ignorable_Code_Point
// derived as DerivedCoreProperties.txt derives it.
func reference(r rune) bool {
	is := func(t *unicode.RangeTable) bool { return unicode.Is(t, r) }
	defaultIgnorable := (is(unicode.Other_Default_Ignorable_Code_Point) || is(unicode.Cf) || is(unicode.Variation_Selector)) &&
		!is(unicode.White_Space) && !(r >= 0xFFF9 && r <= 0xFFFB) && !(r >= 0x13430 && r <= 0x1343F) &&
		!is(unicode.Prepended_Concatenation_Mark)
	return is(unicode.Cc) || is(unicode.Zl) || is(unicode.Zp) || is(unicode.Cf) || is(unicode.Bidi_Control) || defaultIgnorable
}

// Every code point, against the reference: the hand-written ranges are
// the rule of Go's Unicode tables, no more and no less. A Go release with
// a newer Unicode fails here until the ranges follow it.
func TestRefusedEveryCodePoint(t *testing.T) {
	if unicode.Version != "15.0.0" {
		t.Logf("unicode.Version %s: the ranges were written for 15.0.0", unicode.Version)
	}
	bad := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := reference(r)
		if got := Refused(r); got != want {
			if bad++; bad <= 20 {
				t.Errorf("Refused(%U) = %v, want %v", r, got, want)
			}
		}
		if r >= 0xD800 && r <= 0xDFFF {
			continue // surrogates are not UTF-8
		}
		s := "a" + string(r) + "b"
		if Name(s) == want {
			t.Errorf("Name(%q) = %v with %U", s, !want, r)
		}
		text := want && r != '\t' && r != '\n' && r != '\r' && r != 0x2028 && r != 0x2029
		if Text(s) == text {
			t.Errorf("Text(%q) = %v with %U", s, !text, r)
		}
		if d := Defuse(s); want && d != "a\uFFFDb" || !want && d != s {
			t.Errorf("Defuse(%q) = %q", s, d)
		}
	}
	for i := 1; i < len(refused); i++ {
		if refused[i][0] <= refused[i-1][1]+1 || refused[i][0] > refused[i][1] {
			t.Errorf("ranges %d and %d out of order or adjacent", i-1, i)
		}
	}
}

// The characters the issue found passing the old check, each refused.
func TestRefusedNamedCases(t *testing.T) {
	for _, r := range []rune{0x00AD, 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180E, 0x180F,
		0x2028, 0x2029, 0x3164, 0xFFA0, 0xFE00, 0xFE0F, 0xE0100, 0xE01EF, 0x061C, 0x200B, 0x200D, 0x202E, 0x2066,
		0x2069, 0xFEFF, 0xE0001, 0xE007F, 0x0000, 0x001B, 0x007F, 0x0085, 0x009F} {
		if !Refused(r) || Name("a"+string(r)) {
			t.Errorf("%U accepted", r)
		}
	}
	for _, r := range []rune{' ', 'a', 'é', '文', '😀', 0x00A0, 0x2000, 0x3000, 0xFFFD, 0x061B, 0x202F, 0x10FFFF} {
		if Refused(r) || !Name("a"+string(r)) {
			t.Errorf("%U refused", r)
		}
	}
}

func TestNameAndText(t *testing.T) {
	if !Name("Quarterly report é") || Name("a\nb") || Name("a\u0085") || Name("\xff") {
		t.Error("Name: control characters and invalid UTF-8 are refused, the rest accepted")
	}
	if !Text("") || !Text("line one\nline two\r\n\ttab\u2028") || Text("\xff") || Text("a\x00") || Text("a\x1b[31m") {
		t.Error("Text: valid UTF-8 with line breaks, without other controls")
	}
}

func TestDefuse(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                      "plain",
		"é文😀":                        "é文😀",
		"invoice_\u202Efdp.exe":      "invoice_\uFFFDfdp.exe",
		"\u200B\uFEFF\U000E0041x":    "\uFFFD\uFFFD\uFFFDx",
		"\u2066isolate\u2069 \u061C": "\uFFFDisolate\uFFFD \uFFFD",
		"a\xffb\x00c\u00ad":          "a\uFFFDb\uFFFDc\uFFFD",
		"\xe2\x80":                   "\uFFFD\uFFFD",
	} {
		got := Defuse(in)
		if got != want || !Name(got) {
			t.Errorf("Defuse(%q) = %q, want %q", in, got, want)
		}
	}
	if s := "plain name"; testing.AllocsPerRun(10, func() { _ = Defuse(s) }) != 0 {
		t.Error("Defuse allocates for a clean name")
	}
}

func FuzzDefuse(f *testing.F) {
	f.Add("invoice_\u202Efdp.exe")
	f.Add("a\xff\u200db")
	f.Fuzz(func(t *testing.T, s string) {
		d := Defuse(s)
		if !Name(d) || !utf8.ValidString(d) {
			t.Fatalf("Defuse(%q) = %q, not a name", s, d)
		}
		if Name(s) != (d == s) {
			t.Fatalf("Defuse(%q) = %q changed a name, or kept a refused one", s, d)
		}
	})
}
