package store

import (
	"context"
	"errors"
	"testing"
)

// FuzzDocumentsStoreInputs feeds List and Read arbitrary subjects, cursors
// and ids (the id comes from a client's URI; subjects and cursors from
// tokens and sealed cursors, but a store must not trust its caller). It
// must never panic, never fail with anything but ErrInvalid/ErrNotFound,
// and never return a document the subject may not see (A-series: an
// injected or odd subject widening the query).
func FuzzDocumentsStoreInputs(f *testing.F) {
	ctx := context.Background()
	st, err := Open(ctx, "sqlite::memory:")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	owned := map[string]map[string]bool{} // subject → ids
	for _, subject := range []string{"alice", "bob", "Bob"} {
		owned[subject] = map[string]bool{}
		for range 3 {
			d, err := st.Create(ctx, NewDocument{Owner: subject, Title: "t", MIMEType: "text/plain"})
			if err != nil {
				f.Fatal(err)
			}
			owned[subject][d.ID] = true
			f.Add(subject, d.OrderKey, d.ID, 2)
		}
	}
	for _, s := range []string{"", "%", "*", "alice' OR '1'='1", "alice\x00", "ALICE", "alice ", "bob;--", "\u00e9", "a\nb"} {
		f.Add(s, "", "x", 10)
	}
	f.Add("alice", "a b", "../etc", 0)
	f.Add("alice", "\xff", "AAAAAAAAAAAAAAAAAAAAAA", 1001)

	f.Fuzz(func(t *testing.T, subject, after, id string, limit int) {
		entries, err := st.List(ctx, subject, after, limit)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("List(%q, %q, %d): unexpected error %v", subject, after, limit, err)
			}
		}
		for _, e := range entries {
			if !owned[subject][e.ID] {
				t.Fatalf("List(%q): %s is not the subject's", subject, e.ID)
			}
			if e.OrderKey <= after {
				t.Fatalf("List(%q, %q): key %q not after the cursor", subject, after, e.OrderKey)
			}
		}
		if len(entries) > max(limit, 0) {
			t.Fatalf("List: %d entries for limit %d", len(entries), limit)
		}
		d, err := st.Read(ctx, subject, id)
		switch {
		case err == nil:
			if !owned[subject][d.ID] || d.ID != id {
				t.Fatalf("Read(%q, %q) returned %s", subject, id, d.ID)
			}
		case errors.Is(err, ErrInvalid), errors.Is(err, ErrNotFound):
		default:
			t.Fatalf("Read(%q, %q): unexpected error %v", subject, id, err)
		}
	})
}
