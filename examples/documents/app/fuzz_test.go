package app

import (
	"regexp"
	"testing"

	"github.com/mcpkit/mcpkit/inventory"
)

// FuzzDocumentIDValidate checks the one rule this package applies to client
// input (the id of a docs://documents/{id} URI): it accepts exactly the
// store's id charset, and for every id it accepts, the URI that
// listDocuments builds by concatenation is what inventory.Expand builds.
func FuzzDocumentIDValidate(f *testing.F) {
	for _, s := range []string{"", "a", "q3Xv0c7mS8e2N9Rk1pLwGA", "a-b_c", "a b", "a/b", "%41", "é", "a\x00", string(make([]byte, 65))} {
		f.Add(s)
	}
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	f.Fuzz(func(t *testing.T, id string) {
		err := validateID(id)
		if (err == nil) != valid.MatchString(id) {
			t.Fatalf("validateID(%q) = %v", id, err)
		}
		if err != nil {
			return
		}
		uri, err := inventory.Expand(DocumentTemplate, map[string]string{"id": id})
		if err != nil || uri != documentPrefix+id {
			t.Fatalf("Expand(%q) = %q, %v; listDocuments builds %q", id, uri, err, documentPrefix+id)
		}
	})
}
