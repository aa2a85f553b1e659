package store

import (
	"context"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"
)

// Search: the documents a subject may see whose title or body holds every
// word of a query (each word also as a prefix: "quart" finds "Quarterly"),
// best matches first, through a full-text index on each backend:
//
//   - SQLite: an FTS5 table (unicode61 tokenizer, diacritics kept),
//     contentless (it stores the index, not a second copy of every body),
//     keyed by a mapping table whose INTEGER PRIMARY KEY survives VACUUM
//     (documents' own rowid would not: its primary key is text), kept in
//     step by triggers on documents: an update or a soft delete removes
//     the old words with FTS5's 'delete' command and the old values
//     (contentless_delete = 1 would make bulk inserts 5-15x slower instead
//     of about 2.5x, measured by BenchmarkSQLiteInsertSearchIndex);
//   - PostgreSQL: a GIN index on to_tsvector('simple', title || ' ' ||
//     body), partial on live documents; the 'simple' configuration
//     lowercases without stemming, as unicode61 does, so both backends
//     find the same words. A tsvector is at most 1 MB, so the index covers
//     the first 256 Ki characters of title and body.
//
// LIKE '%word%' was the alternative: neither database can serve it from a
// B-tree, so every search would read every document the subject may see
// (pg_trgm could index it, but it is an extension a managed database may
// not offer). Ownership is in the query: the access table's (subject,
// doc_id) row must exist, exactly as for List and Read.

// Limits of a search query, checked before any query runs.
const (
	MaxSearchTerms     = 8  // words of a query that are used
	MaxSearchTermBytes = 64 // longer words are cut
)

// searchTerms splits a query into its words — runs of letters and digits,
// lower-cased — at most MaxSearchTerms of them, each at most
// MaxSearchTermBytes. Everything else (quotes, operators, '*', ':') only
// separates words, so no query syntax of either database reaches it.
func searchTerms(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > MaxSearchTermBytes {
			cut := MaxSearchTermBytes
			for cut > 0 && w[cut]&0xC0 == 0x80 {
				cut--
			}
			w = w[:cut]
		}
		if len(out) == MaxSearchTerms {
			break
		}
		out = append(out, w)
	}
	return out
}

// ftsQuery is the FTS5 MATCH expression of the terms: each quoted (a word
// of letters and digits holds no quote) and a prefix, all required.
func ftsQuery(terms []string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + t + `"*`
	}
	return strings.Join(parts, " ")
}

// tsQuery is the to_tsquery expression of the terms: prefixes, all
// required.
func tsQuery(terms []string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = "'" + t + "':*"
	}
	return strings.Join(parts, " & ")
}

// The SQLite search schema, created (and filled from existing documents)
// by Migrate.
var sqliteSearchSchema = []string{
	`CREATE TABLE IF NOT EXISTS document_search_ids (
		fts_rowid INTEGER PRIMARY KEY,
		doc_id    TEXT COLLATE BINARY NOT NULL UNIQUE REFERENCES documents (id)
	) STRICT`,
	`CREATE VIRTUAL TABLE IF NOT EXISTS documents_fts USING fts5(title, body,
		content = '', tokenize = 'unicode61 remove_diacritics 0')`,
	`CREATE TRIGGER IF NOT EXISTS documents_search_insert AFTER INSERT ON documents BEGIN
		INSERT INTO document_search_ids (doc_id) VALUES (new.id);
		INSERT INTO documents_fts (rowid, title, body) VALUES (last_insert_rowid(), new.title, new.body);
	END`,
	`CREATE TRIGGER IF NOT EXISTS documents_search_update AFTER UPDATE OF title, body ON documents
	WHEN old.deleted_at IS NULL AND new.deleted_at IS NULL BEGIN
		INSERT INTO documents_fts (documents_fts, rowid, title, body)
		SELECT 'delete', fts_rowid, old.title, old.body FROM document_search_ids WHERE doc_id = old.id;
		INSERT INTO documents_fts (rowid, title, body)
		SELECT fts_rowid, new.title, new.body FROM document_search_ids WHERE doc_id = new.id;
	END`,
	`CREATE TRIGGER IF NOT EXISTS documents_search_delete AFTER UPDATE OF deleted_at ON documents
	WHEN old.deleted_at IS NULL AND new.deleted_at IS NOT NULL BEGIN
		INSERT INTO documents_fts (documents_fts, rowid, title, body)
		SELECT 'delete', fts_rowid, old.title, old.body FROM document_search_ids WHERE doc_id = old.id;
	END`,
}

// sqliteSearchBackfill indexes the documents of a database created before
// search existed (run once, when the mapping table is new).
var sqliteSearchBackfill = []string{
	`INSERT INTO document_search_ids (doc_id) SELECT id FROM documents ORDER BY rowid`,
	`INSERT INTO documents_fts (rowid, title, body)
	SELECT m.fts_rowid, d.title, d.body FROM document_search_ids AS m JOIN documents AS d ON d.id = m.doc_id
	WHERE d.deleted_at IS NULL`,
}

// sqliteSearch matches in the FTS index, then keeps the documents the
// subject may see now (the access row by its (doc_id, subject) index),
// ranked by bm25, ties in listing order.
const sqliteSearch = `SELECT d.id, d.title, d.mime_type, d.order_key
FROM documents_fts AS f
JOIN document_search_ids AS m ON m.fts_rowid = f.rowid
JOIN documents AS d ON d.id = m.doc_id
JOIN document_access AS a ON a.doc_id = d.id AND a.subject = ? AND a.order_key = d.order_key
WHERE documents_fts MATCH ? AND d.deleted_at IS NULL AND (d.expires_at IS NULL OR d.expires_at > ?)
ORDER BY bm25(documents_fts), a.order_key
LIMIT ?`

// postgresSearchIndex is the GIN index the search query uses: the same
// expression, and the same predicate on deleted_at.
const postgresSearchIndex = `CREATE INDEX IF NOT EXISTS documents_search ON documents
USING gin (to_tsvector('simple', left(title || ' ' || body, 262144))) WHERE deleted_at IS NULL`

const postgresSearch = `SELECT d.id, d.title, d.mime_type, d.order_key
FROM documents AS d JOIN document_access AS a ON a.doc_id = d.id AND a.order_key = d.order_key
WHERE a.subject = $1
  AND to_tsvector('simple', left(d.title || ' ' || d.body, 262144)) @@ to_tsquery('simple', $2)
  AND d.deleted_at IS NULL AND (d.expires_at IS NULL OR d.expires_at > $3)
ORDER BY ts_rank(to_tsvector('simple', left(d.title || ' ' || d.body, 262144)), to_tsquery('simple', $2)) DESC,
  a.order_key COLLATE "C"
LIMIT $4`

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
	rows, err := s.db.QueryContext(ctx, sqliteSearch, subject, ftsQuery(terms), micros(s.now()), limit)
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
		rows, err := c.Query(ctx, postgresSearch, subject, tsQuery(terms), dbTime(s.now()), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e Entry
			if err := rows.Scan(&e.ID, &e.Title, &e.MIMEType, &e.OrderKey); err != nil {
				return err
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, dbErr(ctx, "search", err)
	}
	return out, nil
}
