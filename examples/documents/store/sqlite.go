package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The SQLite schema. Times are INTEGER unix microseconds (UTC). Key columns
// say COLLATE BINARY, SQLite's default, spelled out: it compares bytes,
// which is the order the inventory contract requires. document_access is
// WITHOUT ROWID, so its primary key (subject, order_key) is the table
// itself, a B-tree the listing walks from the cursor position.
var sqliteSchema = []string{
	`CREATE TABLE IF NOT EXISTS documents (
		id         TEXT COLLATE BINARY NOT NULL PRIMARY KEY,
		owner      TEXT COLLATE BINARY NOT NULL,
		title      TEXT NOT NULL,
		body       TEXT NOT NULL,
		mime_type  TEXT NOT NULL,
		order_key  TEXT COLLATE BINARY NOT NULL UNIQUE
		           CHECK (length(order_key) BETWEEN 1 AND 256 AND order_key NOT GLOB '*[^!-~]*'),
		created_at INTEGER NOT NULL,
		deleted_at INTEGER,
		expires_at INTEGER
	) STRICT`,
	`CREATE TABLE IF NOT EXISTS document_access (
		subject   TEXT COLLATE BINARY NOT NULL,
		order_key TEXT COLLATE BINARY NOT NULL,
		doc_id    TEXT COLLATE BINARY NOT NULL REFERENCES documents (id),
		PRIMARY KEY (subject, order_key)
	) STRICT, WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS document_access_doc ON document_access (doc_id, subject)`,
	// Completion: the subject's ids by prefix (IDsWithPrefix).
	`CREATE INDEX IF NOT EXISTS document_access_subject_doc ON document_access (subject, doc_id)`,
}

// sqliteList is the keyset query. CROSS JOIN is SQLite's way to pin the
// join order: walk the caller's slice of the access index from the cursor,
// then look each document up by primary key. LIMIT stops the walk, so a
// page costs O(log n + limit) whatever the collection size (the WHERE
// filters on d only skip rows of deleted or expired documents).
const sqliteList = `SELECT d.id, d.title, d.mime_type, a.order_key
FROM document_access AS a CROSS JOIN documents AS d ON d.id = a.doc_id
WHERE a.subject = ? AND a.order_key > ?
  AND d.deleted_at IS NULL AND (d.expires_at IS NULL OR d.expires_at > ?)
ORDER BY a.order_key
LIMIT ?`

// sqliteIDs is the completion query: the caller's slice of the (subject,
// doc_id) index from the prefix to its upper bound, each document looked
// up by primary key (deleted ones have no access rows; expired ones are
// skipped). LIMIT stops the walk.
const sqliteIDs = `SELECT a.doc_id
FROM document_access AS a CROSS JOIN documents AS d ON d.id = a.doc_id
WHERE a.subject = ? AND a.doc_id >= ? AND a.doc_id < ?
  AND d.deleted_at IS NULL AND (d.expires_at IS NULL OR d.expires_at > ?)
ORDER BY a.doc_id
LIMIT ?`

// sqliteRead fetches one document and re-checks visibility in the same
// WHERE clause: the access row must exist for this subject right now.
const sqliteRead = `SELECT d.id, d.owner, d.title, d.body, d.mime_type, d.order_key, d.created_at, d.expires_at
FROM documents AS d
WHERE d.id = ? AND d.deleted_at IS NULL AND (d.expires_at IS NULL OR d.expires_at > ?)
  AND EXISTS (SELECT 1 FROM document_access AS a
              WHERE a.subject = ? AND a.order_key = d.order_key AND a.doc_id = d.id)`

// sqliteOwned selects a visible document of owner, inside a write transaction.
const sqliteOwned = `SELECT order_key FROM documents
WHERE id = ? AND owner = ? AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`

type sqliteStore struct {
	db    *sql.DB
	clock func() time.Time
}

var _ DB = (*sqliteStore)(nil)

func (s *sqliteStore) now() time.Time { return s.clock() }

// openSQLite opens path (":memory:" for a private in-memory database) with
// the pure-Go driver: WAL, a busy timeout, foreign keys, and transactions
// that take the write lock at BEGIN (so two writers queue instead of
// failing with SQLITE_BUSY when one upgrades).
func openSQLite(ctx context.Context, path string, opts Options) (DB, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: sqlite: needs a path (or :memory:)", ErrInvalid)
	}
	if strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("%w: sqlite: give a plain path, without URI parameters", ErrInvalid)
	}
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	memory := path == ":memory:"
	if !memory {
		q.Set("_journal_mode", "WAL")
		q.Set("_synchronous", "NORMAL")
	}
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: %w", err)
	}
	switch {
	case memory:
		// Every connection to ":memory:" is a new, empty database: keep one,
		// forever.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
	case opts.MaxConns > 0:
		db.SetMaxOpenConns(opts.MaxConns)
		db.SetMaxIdleConns(opts.MaxConns)
	default:
		db.SetMaxOpenConns(4)
		db.SetMaxIdleConns(4)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, dbErr(ctx, "sqlite: open", err)
	}
	return &sqliteStore{db: db, clock: opts.Now}, nil
}

func (s *sqliteStore) Close() error { return s.db.Close() }

func (s *sqliteStore) Migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(ctx, "migrate", err)
	}
	defer tx.Rollback()
	for _, stmt := range sqliteSchema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return dbErr(ctx, "migrate", err)
		}
	}
	// The search index (see search.go): a database from before it, or
	// from before its partitioning by reader, gets its live documents
	// indexed once.
	var indexed int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'document_search_rows'`).Scan(&indexed); err != nil {
		return dbErr(ctx, "migrate", err)
	}
	for _, stmt := range sqliteSearchSchema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return dbErr(ctx, "migrate", err)
		}
	}
	if indexed == 0 {
		if err := (sqliteSearchIndex{tx}).backfill(ctx); err != nil {
			return dbErr(ctx, "migrate", err)
		}
	}
	return dbErr(ctx, "migrate", tx.Commit())
}

func (s *sqliteStore) List(ctx context.Context, subject, after string, limit int) ([]Entry, error) {
	if err := checkPage(subject, after, limit); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, sqliteList, subject, after, micros(s.now()), limit)
	if err != nil {
		return nil, dbErr(ctx, "list", err)
	}
	defer rows.Close()
	out := make([]Entry, 0, min(limit, 128))
	for rows.Next() {
		var e Entry
		if err := rows.Scan(&e.ID, &e.Title, &e.MIMEType, &e.OrderKey); err != nil {
			return nil, dbErr(ctx, "list", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr(ctx, "list", err)
	}
	return out, nil
}

func (s *sqliteStore) IDsWithPrefix(ctx context.Context, subject, prefix string, limit int) ([]string, error) {
	if err := checkSubject("subject", subject); err != nil {
		return nil, err
	}
	if err := checkLimit(limit); err != nil {
		return nil, err
	}
	lo, hi, ok := idRange(prefix)
	if !ok {
		return []string{}, nil
	}
	rows, err := s.db.QueryContext(ctx, sqliteIDs, subject, lo, hi, micros(s.now()), limit)
	if err != nil {
		return nil, dbErr(ctx, "ids", err)
	}
	defer rows.Close()
	out := make([]string, 0, min(limit, 128))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, dbErr(ctx, "ids", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr(ctx, "ids", err)
	}
	return out, nil
}

func (s *sqliteStore) Read(ctx context.Context, subject, id string) (Document, error) {
	if err := checkSubject("subject", subject); err != nil {
		return Document{}, err
	}
	if !validID(id) {
		return Document{}, ErrNotFound
	}
	var (
		d       Document
		created int64
		expires sql.NullInt64
	)
	err := s.db.QueryRowContext(ctx, sqliteRead, id, micros(s.now()), subject).Scan(
		&d.ID, &d.Owner, &d.Title, &d.Body, &d.MIMEType, &d.OrderKey, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Document{}, ErrNotFound
	}
	if err != nil {
		return Document{}, dbErr(ctx, "read", err)
	}
	d.CreatedAt = time.UnixMicro(created).UTC()
	if expires.Valid {
		d.ExpiresAt = time.UnixMicro(expires.Int64).UTC()
	}
	return d, nil
}

func (s *sqliteStore) Create(ctx context.Context, nd NewDocument) (Document, error) {
	d, err := prepare(nd, s.now())
	if err != nil {
		return Document{}, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Document{}, dbErr(ctx, "create", err)
	}
	defer tx.Rollback()
	if err := sqliteInsert(ctx, tx, d); err != nil {
		return Document{}, err
	}
	if err := tx.Commit(); err != nil {
		return Document{}, dbErr(ctx, "create", err)
	}
	return d, nil
}

const (
	sqliteInsertDoc = `INSERT INTO documents (id, owner, title, body, mime_type, order_key, created_at, expires_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	sqliteInsertAccess = `INSERT INTO document_access (subject, order_key, doc_id) VALUES (?, ?, ?)`
)

// sqliteInsert inserts d, its owner's access row and index entry.
func sqliteInsert(ctx context.Context, tx *sql.Tx, d Document) error {
	var expires any
	if !d.ExpiresAt.IsZero() {
		expires = micros(d.ExpiresAt)
	}
	if _, err := tx.ExecContext(ctx, sqliteInsertDoc, d.ID, d.Owner, d.Title, d.Body, d.MIMEType,
		d.OrderKey, micros(d.CreatedAt), expires); err != nil {
		if sqliteUnique(err) {
			return ErrExists
		}
		return dbErr(ctx, "create", err)
	}
	if _, err := tx.ExecContext(ctx, sqliteInsertAccess, d.Owner, d.OrderKey, d.ID); err != nil {
		return dbErr(ctx, "create", err)
	}
	if err := (sqliteSearchIndex{tx}).add(ctx, d.Owner, d.OrderKey, d.Title, d.Body); err != nil {
		return dbErr(ctx, "create", err)
	}
	return nil
}

// createMany inserts docs in one transaction with prepared statements; see
// SeedMany.
func (s *sqliteStore) createMany(ctx context.Context, docs []Document) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(ctx, "create many", err)
	}
	defer tx.Rollback()
	insDoc, err := tx.PrepareContext(ctx, sqliteInsertDoc)
	if err != nil {
		return dbErr(ctx, "create many", err)
	}
	defer insDoc.Close()
	insAccess, err := tx.PrepareContext(ctx, sqliteInsertAccess)
	if err != nil {
		return dbErr(ctx, "create many", err)
	}
	defer insAccess.Close()
	for _, d := range docs {
		var expires any
		if !d.ExpiresAt.IsZero() {
			expires = micros(d.ExpiresAt)
		}
		if _, err := insDoc.ExecContext(ctx, d.ID, d.Owner, d.Title, d.Body, d.MIMEType,
			d.OrderKey, micros(d.CreatedAt), expires); err != nil {
			if sqliteUnique(err) {
				return ErrExists
			}
			return dbErr(ctx, "create many", err)
		}
		if _, err := insAccess.ExecContext(ctx, d.Owner, d.OrderKey, d.ID); err != nil {
			return dbErr(ctx, "create many", err)
		}
		if err := (sqliteSearchIndex{tx}).add(ctx, d.Owner, d.OrderKey, d.Title, d.Body); err != nil {
			return dbErr(ctx, "create many", err)
		}
	}
	return dbErr(ctx, "create many", tx.Commit())
}

func (s *sqliteStore) Delete(ctx context.Context, owner, id string) error {
	if err := checkSubject("owner", owner); err != nil {
		return err
	}
	if !validID(id) {
		return ErrNotFound
	}
	now := micros(s.now())
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(ctx, "delete", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE documents SET deleted_at = ?
WHERE id = ? AND owner = ? AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`, now, id, owner, now)
	if err != nil {
		return dbErr(ctx, "delete", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return notFoundOr(ctx, "delete", err)
	}
	// The row stays (soft delete); the access rows and their index
	// entries go, so listings never have to step over deleted documents.
	if err := sqliteUnindexAll(ctx, tx, id); err != nil {
		return dbErr(ctx, "delete", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM document_access WHERE doc_id = ?`, id); err != nil {
		return dbErr(ctx, "delete", err)
	}
	return dbErr(ctx, "delete", tx.Commit())
}

func (s *sqliteStore) Share(ctx context.Context, owner, id, grantee string) error {
	return s.setAccess(ctx, owner, id, grantee, true)
}

func (s *sqliteStore) Unshare(ctx context.Context, owner, id, grantee string) error {
	return s.setAccess(ctx, owner, id, grantee, false)
}

func (s *sqliteStore) setAccess(ctx context.Context, owner, id, grantee string, grant bool) error {
	if err := checkShare(owner, id, grantee); err != nil {
		return err
	}
	op := "share"
	if !grant {
		op = "unshare"
		if grantee == owner {
			return fmt.Errorf("%w: the owner's access cannot be removed", ErrInvalid)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil) // immediate: holds the write lock until commit
	if err != nil {
		return dbErr(ctx, op, err)
	}
	defer tx.Rollback()
	var key string
	err = tx.QueryRowContext(ctx, sqliteOwned, id, owner, micros(s.now())).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return dbErr(ctx, op, err)
	}
	var res sql.Result
	if grant {
		res, err = tx.ExecContext(ctx, `INSERT INTO document_access (subject, order_key, doc_id)
VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, grantee, key, id)
	} else {
		res, err = tx.ExecContext(ctx, `DELETE FROM document_access WHERE subject = ? AND order_key = ?`, grantee, key)
	}
	if err != nil {
		return dbErr(ctx, op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return dbErr(ctx, op, err)
	}
	if n == 0 {
		// Nothing changed (already shared, or not shared): so is the
		// index entry.
		return dbErr(ctx, op, tx.Commit())
	}
	// The grantee's index entry follows the access row.
	var title, body string
	if err := tx.QueryRowContext(ctx, `SELECT title, body FROM documents WHERE id = ?`, id).Scan(&title, &body); err != nil {
		return dbErr(ctx, op, err)
	}
	idx := sqliteSearchIndex{tx}
	if grant {
		err = idx.add(ctx, grantee, key, title, body)
	} else {
		err = idx.remove(ctx, grantee, key, title, body)
	}
	if err != nil {
		return dbErr(ctx, op, err)
	}
	return dbErr(ctx, op, tx.Commit())
}

// sqliteReaders lists the subjects with access to a visible document of
// owner, through the access table's (doc_id, subject) index. The owner's
// own access row makes the answer non-empty exactly when the document is
// owned and visible.
const sqliteReaders = `SELECT a.subject
FROM documents AS d JOIN document_access AS a ON a.doc_id = d.id AND a.order_key = d.order_key
WHERE d.id = ? AND d.owner = ? AND d.deleted_at IS NULL AND (d.expires_at IS NULL OR d.expires_at > ?)
ORDER BY a.subject`

func (s *sqliteStore) Update(ctx context.Context, owner, id, body string) error {
	if err := checkOwned(owner, id); err != nil {
		return err
	}
	if err := checkBody(body); err != nil {
		return err
	}
	now := micros(s.now())
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(ctx, "update", err)
	}
	defer tx.Rollback()
	var key, title, old string
	err = tx.QueryRowContext(ctx, `SELECT order_key, title, body FROM documents
WHERE id = ? AND owner = ? AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`, id, owner, now).Scan(&key, &title, &old)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return dbErr(ctx, "update", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE documents SET body = ? WHERE id = ?`, body, id); err != nil {
		return dbErr(ctx, "update", err)
	}
	// Every reader's index entry gets the new words.
	idx := sqliteSearchIndex{tx}
	readers, err := idx.readersOf(ctx, id)
	if err != nil {
		return dbErr(ctx, "update", err)
	}
	for _, r := range readers {
		if err := idx.remove(ctx, r, key, title, old); err != nil {
			return dbErr(ctx, "update", err)
		}
		if err := idx.add(ctx, r, key, title, body); err != nil {
			return dbErr(ctx, "update", err)
		}
	}
	return dbErr(ctx, "update", tx.Commit())
}

// sqliteUnindexAll removes the index entries of every reader of the
// document id.
func sqliteUnindexAll(ctx context.Context, tx *sql.Tx, id string) error {
	var key, title, body string
	if err := tx.QueryRowContext(ctx, `SELECT order_key, title, body FROM documents WHERE id = ?`, id).Scan(&key, &title, &body); err != nil {
		return err
	}
	idx := sqliteSearchIndex{tx}
	readers, err := idx.readersOf(ctx, id)
	if err != nil {
		return err
	}
	for _, r := range readers {
		if err := idx.remove(ctx, r, key, title, body); err != nil {
			return err
		}
	}
	return nil
}

func (s *sqliteStore) Readers(ctx context.Context, owner, id string) ([]string, error) {
	if err := checkOwned(owner, id); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, sqliteReaders, id, owner, micros(s.now()))
	if err != nil {
		return nil, dbErr(ctx, "readers", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var subject string
		if err := rows.Scan(&subject); err != nil {
			return nil, dbErr(ctx, "readers", err)
		}
		out = append(out, subject)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr(ctx, "readers", err)
	}
	if len(out) == 0 {
		return nil, ErrNotFound
	}
	return out, nil
}

// micros is t as stored in SQLite: unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

// sqliteUnique reports a primary key or unique constraint violation.
func sqliteUnique(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code()
	return c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || c == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// notFoundOr returns the error if there is one, else ErrNotFound.
func notFoundOr(ctx context.Context, op string, err error) error {
	if err != nil {
		return dbErr(ctx, op, err)
	}
	return ErrNotFound
}
