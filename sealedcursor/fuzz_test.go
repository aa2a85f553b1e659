package sealedcursor

import (
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testkit/fakeclock"
)

// FuzzOpen feeds arbitrary strings to Open. It must never panic and never
// accept anything Seal did not produce for that binding (A17).
func FuzzOpen(f *testing.F) {
	clk := fakeclock.New(t0)
	s, err := New(Options{Now: clk.Now})
	if err != nil {
		f.Fatal(err)
	}
	binding := []byte("client\x00alice\x00scopes\x00aud\x00fp")
	sealed := map[string]bool{}
	for _, p := range []string{"", "a", "src=1;key=doc-000001", string(make([]byte, MaxPayload))} {
		c, err := s.Seal(binding, []byte(p), t0)
		if err != nil {
			f.Fatal(err)
		}
		sealed[c] = true
		f.Add(c)
		f.Add(c[:len(c)-1])
		f.Add(c + "A")
	}
	f.Add("")
	f.Add("AQ")
	f.Add("AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Fuzz(func(t *testing.T, cursor string) {
		payload, first, err := s.Open(binding, cursor)
		if err == nil {
			if !sealed[cursor] {
				t.Fatalf("Open accepted a cursor Seal never produced: %q", cursor)
			}
			if !first.Equal(t0) || len(payload) > MaxPayload {
				t.Fatalf("bad open result: %v %d", first, len(payload))
			}
			return
		}
		if err != ErrInvalid && err != ErrExpired {
			t.Fatalf("unexpected error %v", err)
		}
		_ = time.Second
	})
}
