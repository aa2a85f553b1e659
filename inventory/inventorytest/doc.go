// Package inventorytest helps applications test the List callbacks they
// give to package inventory, and offers an in-memory list source for tests
// and prototypes.
//
// [CheckList] walks a template's whole collection for one principal with
// page sizes 1, 7, 50 and 100, calling the callback exactly as the kit does,
// and fails the test for every broken rule of the contract: too many
// entries, HasMore on an empty page, bad or unordered keys, a first key not
// after the cursor, URIs that are long, duplicated or do not match the
// template, bad names and MIME types, a URI listed twice in one traversal, a
// traversal that does not end, or walks of different page sizes that do not
// yield the same sequence. Each failure names the page and the entry.
//
//	func TestDocumentsSource(t *testing.T) {
//		db := openTestDB(t) // seeded with records of several owners
//		inventorytest.CheckList(t, documentsTemplate(db), principal.Principal{Subject: "alice"}, inventorytest.Options{})
//	}
//
// [Check] returns the same findings as values, for tools that are not tests.
//
// [CheckGrantStore] does the same for a grants.Store backed by
// your database: it checks the changed flags, Enable and Disable replacing
// each other, per-subject isolation and atomic concurrent changes, on
// subjects with a random prefix ([CheckGrants] returns the findings).
//
// [MemorySource] keeps records per subject in sorted slices and answers
// List with a binary search: a correct keyset source to start from, and to
// compare a real one against.
package inventorytest
