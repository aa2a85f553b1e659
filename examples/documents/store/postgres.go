package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The PostgreSQL schema: the same shape as SQLite's. Every column that is
// compared as a key is declared COLLATE "C", so comparisons and ORDER BY
// are by byte and the B-tree indexes on those columns are in byte order: a
// database whose default collation is linguistic (en_US.UTF-8, ICU) would
// otherwise sort "a_b" before "a-b" before "aB", which is not the order the
// inventory contract (and JavaScript string comparison) uses, and a
// COLLATE "C" added only to the query would make the index useless for it.
// The primary key of document_access INCLUDEs doc_id, so the listing reads
// the access side with an index-only scan.
var postgresSchema = []string{
	`CREATE TABLE IF NOT EXISTS documents (
		id         text COLLATE "C" NOT NULL PRIMARY KEY,
		owner      text COLLATE "C" NOT NULL,
		title      text NOT NULL,
		body       text NOT NULL,
		mime_type  text NOT NULL,
		order_key  text COLLATE "C" NOT NULL UNIQUE
		           CHECK (octet_length(order_key) BETWEEN 1 AND 256 AND order_key ~ '^[!-~]+$'),
		created_at timestamptz NOT NULL,
		deleted_at timestamptz,
		expires_at timestamptz
	)`,
	`CREATE TABLE IF NOT EXISTS document_access (
		subject   text COLLATE "C" NOT NULL,
		order_key text COLLATE "C" NOT NULL,
		doc_id    text COLLATE "C" NOT NULL REFERENCES documents (id),
		PRIMARY KEY (subject, order_key) INCLUDE (doc_id)
	)`,
	`CREATE INDEX IF NOT EXISTS document_access_doc ON document_access (doc_id, subject)`,
	// Completion: the subject's ids by prefix (IDsWithPrefix).
	`CREATE INDEX IF NOT EXISTS document_access_subject_doc ON document_access (subject, doc_id)`,
}

// postgresList is the keyset query. COLLATE "C" in the query repeats the
// columns' collation: it changes nothing here, and keeps the order right
// (if slower) should someone copy the query onto a column without it.
const postgresList = `SELECT d.id, d.title, d.mime_type, a.order_key
FROM document_access AS a JOIN documents AS d ON d.id = a.doc_id
WHERE a.subject = $1 AND a.order_key > $2 COLLATE "C"
  AND d.deleted_at IS NULL AND (d.expires_at IS NULL OR d.expires_at > $3)
ORDER BY a.order_key COLLATE "C"
LIMIT $4`

// postgresIDs is the completion query (see sqliteIDs): a range of the
// (subject, doc_id) index, in byte order.
const postgresIDs = `SELECT a.doc_id
FROM document_access AS a JOIN documents AS d ON d.id = a.doc_id
WHERE a.subject = $1 AND a.doc_id >= $2 COLLATE "C" AND a.doc_id < $3 COLLATE "C"
  AND d.deleted_at IS NULL AND (d.expires_at IS NULL OR d.expires_at > $4)
ORDER BY a.doc_id COLLATE "C"
LIMIT $5`

// postgresRead fetches one document and re-checks visibility in its WHERE.
const postgresRead = `SELECT d.id, d.owner, d.title, d.body, d.mime_type, d.order_key, d.created_at, d.expires_at
FROM documents AS d
WHERE d.id = $1 AND d.deleted_at IS NULL AND (d.expires_at IS NULL OR d.expires_at > $2)
  AND EXISTS (SELECT 1 FROM document_access AS a
              WHERE a.subject = $3 AND a.order_key = d.order_key AND a.doc_id = d.id)`

// postgresOwned locks a visible document of owner for the rest of the
// transaction, so a concurrent Delete and Share/Unshare are serialized.
const postgresOwned = `SELECT order_key FROM documents
WHERE id = $1 AND owner = $2 AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > $3)
FOR UPDATE`

const (
	postgresInsertDoc = `INSERT INTO documents (id, owner, title, body, mime_type, order_key, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
	postgresInsertAccess = `INSERT INTO document_access (subject, order_key, doc_id) VALUES ($1, $2, $3)`
)

// postgresStore uses pgx natively rather than through database/sql: a
// cancelled ctx sends PostgreSQL a cancel request, so the server stops the
// query instead of finishing it for nobody; statements are prepared and
// cached per connection; CopyFrom loads SeedMany's rows quickly.
type postgresStore struct {
	pool  *pgxpool.Pool
	clock func() time.Time
}

var _ DB = (*postgresStore)(nil)

func (s *postgresStore) now() time.Time { return s.clock() }

func openPostgres(ctx context.Context, dsn string, opts Options) (DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message names the problem and masks any password.
		return nil, fmt.Errorf("%w: postgres: %v", ErrInvalid, err)
	}
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: time.Second}
	}
	maxConns := opts.MaxConns
	if maxConns == 0 {
		maxConns = max(4, runtime.NumCPU())
	}
	cfg.MaxConns = int32(maxConns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: postgres: %v", ErrInvalid, err)
	}
	s := &postgresStore{pool: pool, clock: opts.Now}
	// Connect once now, so a bad address or password fails at start.
	if err := s.pool.Ping(ctx); err != nil {
		s.pool.Close()
		return nil, dbErr(ctx, "postgres: open", err)
	}
	return s, nil
}

func (s *postgresStore) Close() error { s.pool.Close(); return nil }

// with runs fn on a pooled connection.
func (s *postgresStore) with(ctx context.Context, fn func(*pgx.Conn) error) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return fn(c.Conn())
}

// Migrate runs the schema in one transaction under an advisory lock, so
// instances of a fleet starting together do not race on CREATE … IF NOT
// EXISTS. The tables go to the first schema of the search_path.
func (s *postgresStore) Migrate(ctx context.Context) error {
	return s.inTx(ctx, "migrate", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7240117315513447425)`); err != nil {
			return err
		}
		for _, stmt := range postgresSchema {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		// The search index (see search.go): a database from before it
		// gets its live documents indexed once.
		var indexed bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('document_search') IS NOT NULL`).Scan(&indexed); err != nil {
			return err
		}
		for _, stmt := range postgresSearchSchema {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		if !indexed {
			return postgresBackfill(ctx, tx)
		}
		return nil
	})
}

func (s *postgresStore) List(ctx context.Context, subject, after string, limit int) ([]Entry, error) {
	if err := checkPage(subject, after, limit); err != nil {
		return nil, err
	}
	var out []Entry
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, postgresList, subject, after, dbTime(s.now()), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = make([]Entry, 0, min(limit, 128))
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
		return nil, dbErr(ctx, "list", err)
	}
	return out, nil
}

func (s *postgresStore) IDsWithPrefix(ctx context.Context, subject, prefix string, limit int) ([]string, error) {
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
	var out []string
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, postgresIDs, subject, lo, hi, dbTime(s.now()), limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, dbErr(ctx, "ids", err)
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

func (s *postgresStore) Read(ctx context.Context, subject, id string) (Document, error) {
	if err := checkSubject("subject", subject); err != nil {
		return Document{}, err
	}
	if !validID(id) {
		return Document{}, ErrNotFound
	}
	var (
		d       Document
		expires *time.Time
	)
	err := s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, postgresRead, id, dbTime(s.now()), subject).Scan(
			&d.ID, &d.Owner, &d.Title, &d.Body, &d.MIMEType, &d.OrderKey, &d.CreatedAt, &expires)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Document{}, ErrNotFound
	}
	if err != nil {
		return Document{}, dbErr(ctx, "read", err)
	}
	d.CreatedAt = d.CreatedAt.UTC()
	if expires != nil {
		d.ExpiresAt = expires.UTC()
	}
	return d, nil
}

func (s *postgresStore) Create(ctx context.Context, nd NewDocument) (Document, error) {
	d, err := prepare(nd, s.now())
	if err != nil {
		return Document{}, err
	}
	err = s.inTx(ctx, "create", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, postgresInsertDoc, d.ID, d.Owner, d.Title, d.Body, d.MIMEType,
			d.OrderKey, d.CreatedAt, nullTime(d.ExpiresAt)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, postgresInsertAccess, d.Owner, d.OrderKey, d.ID); err != nil {
			return err
		}
		return postgresIndex(ctx, tx, d.Owner, d.OrderKey, d.Title, d.Body)
	})
	if err != nil {
		return Document{}, err
	}
	return d, nil
}

// createMany loads docs with COPY, in one transaction; see SeedMany.
func (s *postgresStore) createMany(ctx context.Context, docs []Document) error {
	return s.inTx(ctx, "create many", func(tx pgx.Tx) error {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"documents"},
			[]string{"id", "owner", "title", "body", "mime_type", "order_key", "created_at", "expires_at"},
			pgx.CopyFromSlice(len(docs), func(i int) ([]any, error) {
				d := docs[i]
				return []any{d.ID, d.Owner, d.Title, d.Body, d.MIMEType, d.OrderKey, d.CreatedAt, nullTime(d.ExpiresAt)}, nil
			}))
		if err != nil {
			return err
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"document_access"},
			[]string{"subject", "order_key", "doc_id"},
			pgx.CopyFromSlice(len(docs), func(i int) ([]any, error) {
				return []any{docs[i].Owner, docs[i].OrderKey, docs[i].ID}, nil
			}))
		if err != nil {
			return err
		}
		subjects, keys, titles, bodies := make([]string, len(docs)), make([]string, len(docs)), make([]string, len(docs)), make([]string, len(docs))
		for i, d := range docs {
			subjects[i], keys[i], titles[i], bodies[i] = d.Owner, d.OrderKey, d.Title, d.Body
		}
		return postgresIndexMany(ctx, tx, subjects, keys, titles, bodies)
	})
}

func (s *postgresStore) Delete(ctx context.Context, owner, id string) error {
	if err := checkSubject("owner", owner); err != nil {
		return err
	}
	if !validID(id) {
		return ErrNotFound
	}
	now := dbTime(s.now())
	return s.inTx(ctx, "delete", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE documents SET deleted_at = $1
WHERE id = $2 AND owner = $3 AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > $1)`, now, id, owner)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		// Soft delete: the row stays, its access rows go (see SQLite), and
		// their index entries with them (ON DELETE CASCADE).
		_, err = tx.Exec(ctx, `DELETE FROM document_access WHERE doc_id = $1`, id)
		return err
	})
}

func (s *postgresStore) Share(ctx context.Context, owner, id, grantee string) error {
	return s.setAccess(ctx, owner, id, grantee, true)
}

func (s *postgresStore) Unshare(ctx context.Context, owner, id, grantee string) error {
	return s.setAccess(ctx, owner, id, grantee, false)
}

func (s *postgresStore) setAccess(ctx context.Context, owner, id, grantee string, grant bool) error {
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
	return s.inTx(ctx, op, func(tx pgx.Tx) error {
		var key string
		err := tx.QueryRow(ctx, postgresOwned, id, owner, dbTime(s.now())).Scan(&key)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if !grant {
			// The index entry goes with the access row (ON DELETE CASCADE).
			_, err = tx.Exec(ctx, `DELETE FROM document_access WHERE subject = $1 AND order_key = $2`, grantee, key)
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO document_access (subject, order_key, doc_id)
VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, grantee, key, id)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		var title, body string
		if err := tx.QueryRow(ctx, `SELECT title, body FROM documents WHERE id = $1`, id).Scan(&title, &body); err != nil {
			return err
		}
		return postgresIndex(ctx, tx, grantee, key, title, body)
	})
}

// postgresReaders lists the subjects with access to a visible document of
// owner (see sqliteReaders).
const postgresReaders = `SELECT a.subject
FROM documents AS d JOIN document_access AS a ON a.doc_id = d.id AND a.order_key = d.order_key
WHERE d.id = $1 AND d.owner = $2 AND d.deleted_at IS NULL AND (d.expires_at IS NULL OR d.expires_at > $3)
ORDER BY a.subject COLLATE "C"`

func (s *postgresStore) Update(ctx context.Context, owner, id, body string) error {
	if err := checkOwned(owner, id); err != nil {
		return err
	}
	if err := checkBody(body); err != nil {
		return err
	}
	return s.inTx(ctx, "update", func(tx pgx.Tx) error {
		var key, title string
		err := tx.QueryRow(ctx, `UPDATE documents SET body = $1
WHERE id = $2 AND owner = $3 AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > $4)
RETURNING order_key, title`, body, id, owner, dbTime(s.now())).Scan(&key, &title)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		// Every reader's index entry gets the new words.
		rows, err := tx.Query(ctx, `SELECT subject FROM document_access WHERE doc_id = $1`, id)
		if err != nil {
			return err
		}
		readers, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, r := range readers {
			if err := postgresIndex(ctx, tx, r, key, title, body); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *postgresStore) Readers(ctx context.Context, owner, id string) ([]string, error) {
	if err := checkOwned(owner, id); err != nil {
		return nil, err
	}
	var out []string
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, postgresReaders, id, owner, dbTime(s.now()))
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, dbErr(ctx, "readers", err)
	}
	if len(out) == 0 {
		return nil, ErrNotFound
	}
	return out, nil
}

// inTx runs fn in a transaction and commits it. The package's sentinel
// errors pass through; a unique violation becomes ErrExists; anything else
// is wrapped for op.
func (s *postgresStore) inTx(ctx context.Context, op string, fn func(pgx.Tx) error) error {
	err := s.with(ctx, func(c *pgx.Conn) error { return pgx.BeginFunc(ctx, c, fn) })
	var pe *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrInvalid):
		return err
	case errors.As(err, &pe) && pe.Code == "23505": // unique_violation
		return ErrExists
	}
	return dbErr(ctx, op, err)
}

// nullTime is nil for the zero time, so it is stored as NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}
