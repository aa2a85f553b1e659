package display

import "testing"

func TestSpoofingRangeEnds(t *testing.T) {
	for _, r := range []rune{0x061C, 0x200B, 0x200F, 0x202A, 0x202E, 0x2060, 0x2064, 0x2066, 0x2069, 0xFEFF, 0xE0000, 0xE007F} {
		if !Spoofing(r) {
			t.Errorf("%U not refused", r)
		}
		if Name("a"+string(r)) || Text("a"+string(r)) {
			t.Errorf("a name or text with %U accepted", r)
		}
	}
	for _, r := range []rune{0x061B, 0x061D, 0x200A, 0x2010, 0x2029, 0x202F, 0x205F, 0x2065, 0x206A, 0xFEFE, 0xFF00, 0xDFFFF, 0xE0080, 'a', 'é'} {
		if Spoofing(r) {
			t.Errorf("%U refused", r)
		}
	}
}

func TestNameAndText(t *testing.T) {
	if !Name("Quarterly report é") || Name("a\nb") || Name("a\u0085") || Name("\xff") {
		t.Error("Name: control characters and invalid UTF-8 are refused, the rest accepted")
	}
	if !Text("") || !Text("line one\nline two") || Text("\xff") {
		t.Error("Text: any valid UTF-8 without spoofing characters")
	}
}

func TestDefuse(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                      "plain",
		"é文😀":                        "é文😀",
		"invoice_\u202Efdp.exe":      "invoice_\uFFFDfdp.exe",
		"\u200B\uFEFF\U000E0041x":    "\uFFFD\uFFFD\uFFFDx",
		"\u2066isolate\u2069 \u061C": "\uFFFDisolate\uFFFD \uFFFD",
	} {
		got := Defuse(in)
		if got != want || !Name(got) && got != "" {
			t.Errorf("Defuse(%q) = %q, want %q", in, got, want)
		}
	}
}
