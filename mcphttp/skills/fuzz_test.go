package skills_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
)

// FuzzReadDir: whatever URI and cursor a client sends, ReadDir never
// panics, answers only with the documented errors, and shows alice
// nothing of bob's.
func FuzzReadDir(f *testing.F) {
	for _, seed := range [][2]string{
		{"skill://alice/pdf-processing", ""},
		{"skill://alice/pdf-processing/templates/regional", ""},
		{"skill://bob/bob-secrets/notes", ""},
		{"skill://alice/pdf-processing/", ""},
		{"skill://alice/pdf-processing/../../bob/bob-secrets", ""},
		{"skill:///", "AQ"},
		{"skill://alice/pdf-processing", "not-a-cursor"},
		{"", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	s := seeded()
	c, err := skills.New(s.inventory(f), s.source(), skills.Options{PageSize: 2})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, uri, cursor string) {
		_, err := c.ReadDir(context.Background(), &alice, uri, cursor, func(it *inventory.Item) bool {
			if len(it.URI) >= len("skill://bob") && it.URI[:len("skill://bob")] == "skill://bob" {
				t.Fatalf("alice was shown %s", it.URI)
			}
			return true
		})
		var ce *inventory.CursorError
		if err != nil && !errors.Is(err, inventory.ErrNotFound) && !errors.As(err, &ce) {
			t.Fatalf("unexpected error %v", err)
		}
		_, err = c.Get(context.Background(), &alice, uri)
		if err != nil && !errors.Is(err, inventory.ErrNotFound) {
			t.Fatalf("unexpected Get error %v", err)
		}
	})
}
