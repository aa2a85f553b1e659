// Package store keeps the documents of the documents example server, on
// SQLite (embedded, pure Go: modernc.org/sqlite, no C toolchain) or
// PostgreSQL (github.com/jackc/pgx/v5), behind one small interface, [Store].
// It is written to be copied: the schema and the two queries below are
// what an application needs to serve "the signed-in caller's own records,
// page by page" through an inventory List callback.
//
//	db, err := store.Open(ctx, "sqlite:documents.db") // or "postgres://…"
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer db.Close()
//	rows, err := db.List(ctx, caller.Subject, req.After, req.Limit+1) // caller: the principal.Principal
//	// → inventory.Page{Entries: rows[:≤Limit] as {Key: OrderKey, URI, Name: Title, MIMEType}, HasMore: len(rows) > Limit}
//	doc, err := db.Read(ctx, caller.Subject, id) // ErrNotFound unless visible now
//
// # Schema
//
// Both databases get the same shape from [DB.Migrate] (idempotent; [Open]
// runs it):
//
//	documents(id PRIMARY KEY, owner, title, body, mime_type,
//	          order_key UNIQUE, created_at, deleted_at NULL, expires_at NULL)
//	document_access(subject, order_key, doc_id,
//	                PRIMARY KEY (subject, order_key))
//	                + INDEX (doc_id, subject)
//
// A document's id is 22 random URL-safe characters. Its order key is its
// creation time, fixed-width UTC to the microsecond, then "/" and the id:
//
//	2026-03-14T15:09:26.535897Z/q3Xv0c7mS8e2N9Rk1pLwGA
//
// printable ASCII (0x21–0x7E), unique thanks to the id, and immutable, as
// the inventory contract requires of keys. document_access holds one row
// per subject that may see the document: the owner's, written with the
// document, and one per [Store.Share]. It repeats the order key, so a
// subject's visible documents are one contiguous, ordered range of its
// primary key. Deleting is soft (deleted_at is set) and also removes the
// access rows, so listings never step over deleted documents; expires_at
// is a retention deadline after which the document is neither listed nor
// readable.
//
// [Store.Update] replaces the body of the owner's document; [Store.Readers]
// names every subject that may read it now (its owner and grantees, one
// lookup in the (doc_id, subject) index), so that a server can tell exactly
// those subjects that it changed, and nobody else. [Store.IDsWithPrefix]
// serves completion: a range of the access table's (subject, doc_id)
// index from the typed prefix to prefix+"{" (every id character sorts
// below '{'), so completing a full id among 10,000 documents reads one
// index entry, not the subject's whole listing.
//
// # The keyset query
//
//	SELECT d.id, d.title, d.mime_type, a.order_key
//	FROM document_access AS a JOIN documents AS d ON d.id = a.doc_id
//	WHERE a.subject = $1 AND a.order_key > $2
//	  AND d.deleted_at IS NULL AND (d.expires_at IS NULL OR d.expires_at > $now)
//	ORDER BY a.order_key
//	LIMIT $limit
//
// The database seeks to (subject, after) in the access table's primary key,
// reads forward in key order, looks each document up by its primary key,
// and stops after limit rows: O(log n + limit) whatever the number of
// documents the subject or the system has. The tests check the plans
// (PostgreSQL: Index Only Scan using document_access_pkey inside a Nested
// Loop, no Sort, no Seq Scan; SQLite: SEARCH a USING PRIMARY KEY, no TEMP
// B-TREE), and the benchmark shows a deep page of a 100,000-document
// collection costs what the same page of a 100-document one does. There is
// no OFFSET anywhere: OFFSET reads and discards every earlier row, and
// shifts when rows are inserted or deleted before it.
//
// The owner check is in the WHERE clause of both queries, so no row of
// another subject can come back, and every method refuses an empty or
// malformed subject with [ErrInvalid] before any query runs. Read re-checks
// visibility (access row, deletion, expiry) in its own WHERE clause: a
// document listed a minute ago grants nothing now.
//
// # Byte order: COLLATE "C" and BINARY
//
// The inventory contract orders keys by byte (for ASCII, JavaScript string
// order), and "strictly after After" must mean the same in Go, in the
// database, and in the cursor. Databases compare text with a collation:
// SQLite's default, BINARY, compares bytes (memcmp), as needed. PostgreSQL
// uses the database's default collation, usually a linguistic one
// (en_US.UTF-8, ICU), which puts "a_b" before "a-b" before "ab" before "aB",
// where bytes say "a-b" < "aB" < "a_b" < "ab". With such a collation a
// keyset walk skips or repeats rows. So the PostgreSQL key columns are
// declared COLLATE "C" (byte order): the comparison, the ORDER BY and the
// index all use it, and the index serves the query. Adding COLLATE "C" only
// in the query would give the right order but an index in the wrong order,
// so a sort of the caller's whole collection on every page.
//
// # Adapting it to your own table
//
//   - Give every record an immutable, unique, printable-ASCII key whose
//     byte order is the listing order: a fixed-width sort value plus a unique
//     tie-breaker ("<created>/<id>"; zero-pad numbers, use UTC, never
//     locale-formatted text). Store it; never derive it at query time.
//   - If records have one owner, the access table is optional: index
//     (owner, order_key) on the records table itself and put owner = $1 in
//     the WHERE. An access table like document_access is what lets one
//     record be visible to several subjects (sharing, teams) while each
//     subject's listing stays one index range.
//   - Declare the key columns COLLATE "C" on PostgreSQL (or use bytea);
//     on SQLite keep the default BINARY (not NOCASE); on MySQL use a _bin
//     collation.
//   - Put every visibility rule (owner, ACL, deletion, retention) in the
//     WHERE clause of the bounded query, ask for limit+1 rows to learn
//     HasMore, and pass the caller's ctx so a cancelled request stops the
//     query.
//   - Re-check the same rules in the read by id.
//
// # The adapters
//
// SQLite runs in WAL mode with a busy timeout and transactions that take
// the write lock at BEGIN; "sqlite::memory:" is a private database on one
// connection. PostgreSQL uses pgx natively (not database/sql), so a
// cancelled ctx sends the server a cancel request and the query really
// stops; connections come from pgxpool. Tables go to the first schema of the search_path (add search_path=… to
// the DSN to choose one).
package store
