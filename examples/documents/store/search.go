package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"
)

// Search: the documents a subject may see whose title or body holds every
// word of a query (each word also as a prefix: "quart" finds "Quarterly"),
// best matches first, through a full-text index on each backend that is
// partitioned by reader, so that a search costs what the caller may read
// and nothing of what other tenants hold.
//
// The index has one entry per access row — per (subject, document) pair:
// the owner's, and one per share — and every word of that entry carries
// the subject's tag, "x" and 16 hex digits of SHA-256(subject), in front:
// alice's "report" is indexed as the word x2bd806c97f0e00afreport. A
// search for "rep" is the prefix x2bd806c97f0e00afrep*, whose range of the
// index's sorted term dictionary holds alice's words only. So the lookup
// reads exactly the entries of the documents alice may see, whether other
// tenants hold 0 or 100,000 documents with the word; a query for a word
// only bob has finds an empty range at once (no timing oracle); and the
// term statistics a ranking uses are alice's own. The tag is a hash, so
// two subjects could share one; the query also requires the entry's
// subject (and the access row, and a live document), so a collision could
// cost time, never show a document.
//
// Words are found in Go, the same way for documents and queries (runs of
// letters and digits, lower-cased, cut at MaxSearchTermBytes), and written
// to the index in an alphabet both databases' tokenizers take as one
// token whatever their locale: a–y and 0–9 as they are, every other byte
// as 'z' and two hex digits ("café" is cafzc3za9). That code is prefix-free,
// so a word is a prefix of another exactly when its code is a prefix of
// the other's code. An entry indexes the first maxIndexedBytes of its
// coded words (title first), so that every entry fits PostgreSQL's 1 MB
// tsvector.
//
//   - SQLite: an FTS5 table (ascii tokenizer), contentless (it stores the
//     index, not another copy of every body), its rowid kept in
//     document_search_rows with the entry's (subject, order_key). The
//     store's writes keep it in step, in their own transactions: the
//     owner's entry with the document, a grantee's with a share; an
//     unshare, an update or a delete removes the old words with FTS5's
//     'delete' command and the old values.
//   - PostgreSQL: a table document_search(subject, order_key, words
//     tsvector), its rows referencing document_access (ON DELETE CASCADE:
//     an unshare or a delete takes the entry with it), with a GIN index on
//     words.
//
// Ownership is still in the query: the access table's (subject,
// order_key) row must exist, exactly as for List and Read.

// Limits of a search query, checked before any query runs.
const (
	MaxSearchTerms     = 8  // words of a query that are used
	MaxSearchTermBytes = 64 // longer words are cut
)

// maxIndexedBytes bounds the coded words of one index entry (title and
// body): PostgreSQL refuses a tsvector over 1 MB, and the lexemes of this
// much text, with their positions, stay well under it.
const maxIndexedBytes = 512 << 10

// splitWords is the separator of words: anything but a letter or a digit.
func splitWords(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// cutWord cuts w to at most MaxSearchTermBytes, at a character boundary.
func cutWord(w string) string {
	if len(w) <= MaxSearchTermBytes {
		return w
	}
	cut := MaxSearchTermBytes
	for cut > 0 && w[cut]&0xC0 == 0x80 {
		cut--
	}
	return w[:cut]
}

// searchTerms splits a query into its words — runs of letters and digits,
// lower-cased — at most MaxSearchTerms of them, each at most
// MaxSearchTermBytes. Everything else (quotes, operators, '*', ':') only
// separates words, so no query syntax of either database reaches it.
func searchTerms(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), splitWords) {
		if len(out) == MaxSearchTerms {
			break
		}
		out = append(out, cutWord(w))
	}
	return out
}

// searchTag is the prefix of every indexed word of subject's entries.
func searchTag(subject string) string {
	sum := sha256.Sum256([]byte(subject))
	return "x" + hex.EncodeToString(sum[:8])
}

// appendCoded appends w in the index's alphabet: a–y and 0–9 as they are,
// any other byte as 'z' and two lower-case hex digits.
func appendCoded(dst []byte, w string) []byte {
	const digits = "0123456789abcdef"
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'a' && c <= 'y' || c >= '0' && c <= '9' {
			dst = append(dst, c)
			continue
		}
		dst = append(dst, 'z', digits[c>>4], digits[c&0xF])
	}
	return dst
}

// indexedWords is the text an index entry of a subject (by its tag) holds
// for title and body: their words, tagged and coded, separated by spaces,
// together at most maxIndexedBytes.
func indexedWords(tag, title, body string) (t, b string) {
	budget := maxIndexedBytes
	code := func(s string) string {
		var buf []byte
		for _, w := range strings.FieldsFunc(strings.ToLower(s), splitWords) {
			start := len(buf)
			if start > 0 {
				buf = append(buf, ' ')
			}
			buf = append(buf, tag...)
			buf = appendCoded(buf, cutWord(w))
			if len(buf) > budget {
				buf = buf[:start]
				break
			}
		}
		budget -= len(buf)
		return string(buf)
	}
	t = code(title)
	return t, code(body)
}

// searchWordsOf is the query terms of subject, tagged and coded.
func searchWordsOf(subject string, terms []string) []string {
	tag := searchTag(subject)
	out := make([]string, len(terms))
	for i, t := range terms {
		out[i] = string(appendCoded([]byte(tag), t))
	}
	return out
}

// ftsQuery is the FTS5 MATCH expression of subject's terms: each tagged,
// coded (letters and digits only), quoted and a prefix, all required.
func ftsQuery(subject string, terms []string) string {
	words := searchWordsOf(subject, terms)
	for i, w := range words {
		words[i] = `"` + w + `"*`
	}
	return strings.Join(words, " ")
}

// tsQuery is the to_tsquery expression of subject's terms: prefixes, all
// required.
func tsQuery(subject string, terms []string) string {
	words := searchWordsOf(subject, terms)
	for i, w := range words {
		words[i] = "'" + w + "':*"
	}
	return strings.Join(words, " & ")
}

// The SQLite search schema, created by Migrate; the objects of the
// earlier, unpartitioned index are dropped.
var sqliteSearchSchema = []string{
	`DROP TRIGGER IF EXISTS documents_search_insert`,
	`DROP TRIGGER IF EXISTS documents_search_update`,
	`DROP TRIGGER IF EXISTS documents_search_delete`,
	`DROP TABLE IF EXISTS documents_fts`,
	`DROP TABLE IF EXISTS document_search_ids`,
	`CREATE TABLE IF NOT EXISTS document_search_rows (
		fts_rowid INTEGER PRIMARY KEY,
		subject   TEXT COLLATE BINARY NOT NULL,
		order_key TEXT COLLATE BINARY NOT NULL,
		UNIQUE (subject, order_key)
	) STRICT`,
	`CREATE VIRTUAL TABLE IF NOT EXISTS document_search_fts USING fts5(title, body,
		content = '', tokenize = 'ascii')`,
}

// sqliteSearch matches the subject's words in the FTS index (CROSS JOIN
// pins that as the way in), requires the entry's subject, the access row
// and a visible document, and ranks by bm25, ties in listing order.
const sqliteSearch = `SELECT d.id, d.title, d.mime_type, d.order_key
FROM document_search_fts AS f
CROSS JOIN document_search_rows AS m ON m.fts_rowid = f.rowid
CROSS JOIN document_access AS a ON a.subject = m.subject AND a.order_key = m.order_key
CROSS JOIN documents AS d ON d.id = a.doc_id
WHERE document_search_fts MATCH ? AND m.subject = ?
  AND d.deleted_at IS NULL AND (d.expires_at IS NULL OR d.expires_at > ?)
ORDER BY bm25(document_search_fts), a.order_key
LIMIT ?`

// sqliteUnindexed selects access rows of live documents without an index
// entry: what Migrate indexes on a database from before the partitioned
// index, a batch at a time.
const sqliteUnindexed = `SELECT a.subject, a.order_key, d.title, d.body
FROM document_access AS a CROSS JOIN documents AS d ON d.id = a.doc_id
WHERE d.deleted_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM document_search_rows AS m WHERE m.subject = a.subject AND m.order_key = a.order_key)
LIMIT 500`

// sqliteSearchIndex writes and removes index entries inside a write
// transaction.
type sqliteSearchIndex struct {
	tx *sql.Tx
}

// add indexes title and body for subject's access row key.
func (x sqliteSearchIndex) add(ctx context.Context, subject, key, title, body string) error {
	var rowid int64
	err := x.tx.QueryRowContext(ctx, `INSERT INTO document_search_rows (subject, order_key) VALUES (?, ?)
RETURNING fts_rowid`, subject, key).Scan(&rowid)
	if err != nil {
		return err
	}
	t, b := indexedWords(searchTag(subject), title, body)
	_, err = x.tx.ExecContext(ctx, `INSERT INTO document_search_fts (rowid, title, body) VALUES (?, ?, ?)`, rowid, t, b)
	return err
}

// remove takes subject's entry for key out of the index; title and body
// are the values it was indexed with. No entry is no error.
func (x sqliteSearchIndex) remove(ctx context.Context, subject, key, title, body string) error {
	var rowid int64
	err := x.tx.QueryRowContext(ctx, `DELETE FROM document_search_rows WHERE subject = ? AND order_key = ?
RETURNING fts_rowid`, subject, key).Scan(&rowid)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	t, b := indexedWords(searchTag(subject), title, body)
	_, err = x.tx.ExecContext(ctx, `INSERT INTO document_search_fts (document_search_fts, rowid, title, body)
VALUES ('delete', ?, ?, ?)`, rowid, t, b)
	return err
}

// readersOf lists the subjects with an access row for the document id.
func (x sqliteSearchIndex) readersOf(ctx context.Context, id string) ([]string, error) {
	rows, err := x.tx.QueryContext(ctx, `SELECT subject FROM document_access WHERE doc_id = ?`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// backfill indexes every access row of a live document that has no entry.
func (x sqliteSearchIndex) backfill(ctx context.Context) error {
	type row struct{ subject, key, title, body string }
	for {
		rows, err := x.tx.QueryContext(ctx, sqliteUnindexed)
		if err != nil {
			return err
		}
		var batch []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.subject, &r.key, &r.title, &r.body); err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		for _, r := range batch {
			if err := x.add(ctx, r.subject, r.key, r.title, r.body); err != nil {
				return err
			}
		}
	}
}

// The PostgreSQL search schema (part of postgresSchema): one row per
// access row, gone with it; the earlier unpartitioned index is dropped.
var postgresSearchSchema = []string{
	`DROP INDEX IF EXISTS documents_search`,
	`CREATE TABLE IF NOT EXISTS document_search (
		subject   text COLLATE "C" NOT NULL,
		order_key text COLLATE "C" NOT NULL,
		words     tsvector NOT NULL,
		PRIMARY KEY (subject, order_key),
		FOREIGN KEY (subject, order_key) REFERENCES document_access (subject, order_key) ON DELETE CASCADE
	)`,
	`CREATE INDEX IF NOT EXISTS document_search_words ON document_search USING gin (words)`,
}

const (
	// postgresIndexEntry adds (or, for an update, replaces) an entry.
	postgresIndexEntry = `INSERT INTO document_search (subject, order_key, words)
VALUES ($1, $2, to_tsvector('simple', $3))
ON CONFLICT (subject, order_key) DO UPDATE SET words = excluded.words`
	// postgresIndexEntries adds entries from arrays (createMany, Migrate).
	postgresIndexEntries = `INSERT INTO document_search (subject, order_key, words)
SELECT s, k, to_tsvector('simple', w) FROM unnest($1::text[], $2::text[], $3::text[]) AS t(s, k, w)
ON CONFLICT (subject, order_key) DO NOTHING`
	// postgresUnindexed: see sqliteUnindexed.
	postgresUnindexed = `SELECT a.subject, a.order_key, d.title, d.body
FROM document_access AS a JOIN documents AS d ON d.id = a.doc_id
WHERE d.deleted_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM document_search AS s WHERE s.subject = a.subject AND s.order_key = a.order_key)
LIMIT 500`
)

// postgresSearch: the subject's matching entries (by the GIN index of
// tagged words, or the subject's range of the primary key: either way only
// what the subject may read), then for each of them — LATERAL with a LIMIT
// is never flattened into a join the planner could turn into a scan of all
// documents — the access row and the visible document by primary key;
// ranked, ties in listing order.
const postgresSearch = `SELECT v.id, v.title, v.mime_type, h.order_key
FROM (SELECT s.order_key, ts_rank(s.words, q) AS rank
      FROM document_search AS s, to_tsquery('simple', $2) AS q
      WHERE s.subject = $1 AND s.words @@ q) AS h
CROSS JOIN LATERAL (
  SELECT d.id, d.title, d.mime_type
  FROM document_access AS a JOIN documents AS d ON d.id = a.doc_id
  WHERE a.subject = $1 AND a.order_key = h.order_key
    AND d.deleted_at IS NULL AND (d.expires_at IS NULL OR d.expires_at > $3)
  LIMIT 1) AS v
ORDER BY h.rank DESC, h.order_key COLLATE "C"
LIMIT $4`

// postgresEntryText is what to_tsvector reads for subject's entry.
func postgresEntryText(subject, title, body string) string {
	t, b := indexedWords(searchTag(subject), title, body)
	return t + " " + b
}

// postgresIndex adds (or replaces) subject's entry for key.
func postgresIndex(ctx context.Context, tx pgx.Tx, subject, key, title, body string) error {
	_, err := tx.Exec(ctx, postgresIndexEntry, subject, key, postgresEntryText(subject, title, body))
	return err
}

// postgresIndexMany adds entries for the access rows (subjects[i],
// keys[i]) of the documents titles[i], bodies[i], in batches.
func postgresIndexMany(ctx context.Context, tx pgx.Tx, subjects, keys, titles, bodies []string) error {
	const batch = 2000
	for lo := 0; lo < len(subjects); lo += batch {
		hi := min(lo+batch, len(subjects))
		texts := make([]string, hi-lo)
		for i := range texts {
			texts[i] = postgresEntryText(subjects[lo+i], titles[lo+i], bodies[lo+i])
		}
		if _, err := tx.Exec(ctx, postgresIndexEntries, subjects[lo:hi], keys[lo:hi], texts); err != nil {
			return err
		}
	}
	return nil
}

// postgresBackfill indexes every access row of a live document without an
// entry (a database from before the partitioned index).
func postgresBackfill(ctx context.Context, tx pgx.Tx) error {
	for {
		rows, err := tx.Query(ctx, postgresUnindexed)
		if err != nil {
			return err
		}
		var subjects, keys, titles, bodies []string
		for rows.Next() {
			var s, k, t, b string
			if err := rows.Scan(&s, &k, &t, &b); err != nil {
				rows.Close()
				return err
			}
			subjects, keys, titles, bodies = append(subjects, s), append(keys, k), append(titles, t), append(bodies, b)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(subjects) == 0 {
			return nil
		}
		if err := postgresIndexMany(ctx, tx, subjects, keys, titles, bodies); err != nil {
			return err
		}
	}
}

// checkSearch validates a search and returns its terms; no terms means no
// results (and no query).
func checkSearch(subject, query string, limit int) ([]string, error) {
	if err := checkSubject("subject", subject); err != nil {
		return nil, err
	}
	if err := checkLimit(limit); err != nil {
		return nil, err
	}
	return searchTerms(query), nil
}

func (s *sqliteStore) Search(ctx context.Context, subject, query string, limit int) ([]Entry, error) {
	terms, err := checkSearch(subject, query, limit)
	if err != nil || len(terms) == 0 {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, sqliteSearch, ftsQuery(subject, terms), subject, micros(s.now()), limit)
	if err != nil {
		return nil, dbErr(ctx, "search", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		if err := rows.Scan(&e.ID, &e.Title, &e.MIMEType, &e.OrderKey); err != nil {
			return nil, dbErr(ctx, "search", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr(ctx, "search", err)
	}
	return out, nil
}

func (s *postgresStore) Search(ctx context.Context, subject, query string, limit int) ([]Entry, error) {
	terms, err := checkSearch(subject, query, limit)
	if err != nil || len(terms) == 0 {
		return nil, err
	}
	var out []Entry
	err = s.with(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			found, err := postgresSearchIn(ctx, tx, subject, tsQuery(subject, terms), dbTime(s.now()), limit)
			out = found
			return err
		})
	})
	if err != nil {
		return nil, dbErr(ctx, "search", err)
	}
	return out, nil
}

// postgresSearchIn runs postgresSearch in tx with sequential scans
// disabled for the transaction: when a subject holds a large share of a
// small table, the planner would read all of document_search rather than
// the subject's entries, and a search must never read what other tenants
// hold (the index scans it is left with are all bounded by the subject).
func postgresSearchIn(ctx context.Context, tx pgx.Tx, subject, query string, now any, limit int) ([]Entry, error) {
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, postgresSearch, subject, query, now, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		if err := rows.Scan(&e.ID, &e.Title, &e.MIMEType, &e.OrderKey); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
