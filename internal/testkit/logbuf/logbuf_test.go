package logbuf

import (
	"strings"
	"sync"
	"testing"
)

// Writers on several goroutines and a reader meanwhile: every write is
// kept whole (run with -race).
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if _, err := b.Write([]byte("line\n")); err != nil {
					t.Error(err)
				}
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 800 {
		t.Fatalf("%d lines, want 800", got)
	}
}

// Take returns what was written and empties the buffer; what is written
// after goes to the next Take.
func TestTake(t *testing.T) {
	var b Buffer
	_, _ = b.Write([]byte("one\n"))
	if got := b.Take(); got != "one\n" {
		t.Fatalf("Take = %q, want %q", got, "one\n")
	}
	if got := b.String(); got != "" {
		t.Fatalf("after Take: %q, want empty", got)
	}
	_, _ = b.Write([]byte("two\n"))
	if got := b.Take(); got != "two\n" {
		t.Fatalf("second Take = %q, want %q", got, "two\n")
	}
}
