package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors callers branch on with errors.Is.
var (
	// ErrNotFound: the document does not exist, is deleted, has expired,
	// is not visible to the subject, or (for Delete, Update, Share, Unshare,
	// Readers) is not owned by the caller. The cases are deliberately indistinguishable.
	ErrNotFound = errors.New("store: not found")
	// ErrInvalid: an argument is malformed (an empty subject, a limit out
	// of range, a bad key, title or MIME type). No query was run.
	ErrInvalid = errors.New("store: invalid argument")
	// ErrExists: Create was given an ID that is already taken.
	ErrExists = errors.New("store: already exists")
)

// MaxListLimit is the largest limit List accepts. The kit asks for at most
// 100 entries a page, so a List callback asks the store for at most 101.
const MaxListLimit = 1000

// Limits on stored text, checked before any query runs.
const (
	// MaxSubjectLen bounds a subject in UTF-16 code units (the length of a
	// JavaScript string), as authn and the inventory count a subject: any
	// subject a verified token can carry fits, whatever its script.
	MaxSubjectLen = 256
	// MaxOwnerLen bounds an owner or grantee key in UTF-16 code units: on
	// a server that trusts several issuers, a subject qualified by its
	// issuer (principal.SubjectKey: issuer + "#" + subject; see checkSubject).
	MaxOwnerLen      = 1280
	MaxKeyBytes      = 256     // an inventory entry key
	MaxIDBytes       = 64      // caller-chosen ids; generated ids have 22
	MaxTitleBytes    = 8 << 10 // a title; a listing clips it to the kit's name limit (inventory.ClipName)
	MaxMIMETypeBytes = 128     // an inventory entry MIME type
	MaxBodyBytes     = 1 << 20 // a document body
)

// Entry is one row of a listing: metadata only, never the body.
type Entry struct {
	ID       string
	Title    string
	MIMEType string
	// OrderKey is the document's unique, immutable listing key: printable
	// ASCII, compared byte by byte. Pass the last one back as List's after.
	OrderKey string
}

// Document is a whole document, as Read returns it.
type Document struct {
	ID, Owner, Title, Body, MIMEType, OrderKey string
	CreatedAt                                  time.Time // UTC, microsecond precision
	ExpiresAt                                  time.Time // zero: kept until deleted
}

// NewDocument is what Create stores.
type NewDocument struct {
	// Owner is the subject that owns the document; required.
	Owner string
	// Title is required: 1–MaxTitleBytes bytes of UTF-8 without control
	// characters. It may be longer than a listed name may be: listings clip
	// it.
	Title string
	// Body may be empty; at most MaxBodyBytes of UTF-8 without NUL bytes.
	Body string
	// MIMEType is "type/subtype", e.g. "text/plain"; required.
	MIMEType string
	// ExpiresAt, when non-zero, is the end of the retention period: from
	// then on the document is neither listed nor readable. It must be
	// after the creation time.
	ExpiresAt time.Time
	// ID is normally empty, and Create picks 22 random URL-safe characters.
	// An importer may set its own: 1–64 characters of [A-Za-z0-9_-].
	ID string
}

// Store is the storage a documents server needs: a keyset listing of the
// documents a subject may see, a read that re-checks visibility, and the
// writes. Implementations are safe for concurrent use; every method stops
// its query when ctx is done and then returns an error wrapping ctx.Err().
type Store interface {
	// List returns the next at most limit (1..MaxListLimit) documents
	// visible to subject (owned or shared with it, not deleted, not
	// expired) whose OrderKey is strictly greater than after (empty: from
	// the start), in increasing byte order of OrderKey. Its cost depends on
	// limit, not on how many documents the subject or the system has.
	List(ctx context.Context, subject, after string, limit int) ([]Entry, error)
	// IDsWithPrefix returns the ids of the documents visible to subject
	// (those List returns) that start with prefix, in increasing byte
	// order, at most limit (1..MaxListLimit): what completion suggests. An
	// index on the access table's (subject, id) serves the range, so its
	// cost depends on limit, not on how many documents the subject has. A
	// prefix no id can start with (other characters than [A-Za-z0-9_-], or
	// longer than MaxIDBytes) gets none, without a query.
	IDsWithPrefix(ctx context.Context, subject, prefix string, limit int) ([]string, error)
	// Read returns document id if subject may see it now, else ErrNotFound.
	Read(ctx context.Context, subject, id string) (Document, error)
	// Search returns at most limit (1..MaxListLimit) documents visible to
	// subject (as List) whose title or body holds every word of query
	// (letters and digits; each word also as a prefix), best matches
	// first, through a full-text index (see search.go). A query without
	// a word finds nothing.
	Search(ctx context.Context, subject, query string, limit int) ([]Entry, error)
	// Create stores a new document, visible to its owner only.
	Create(ctx context.Context, doc NewDocument) (Document, error)
	// Delete marks a document of owner deleted: it disappears from every
	// listing and read at once. Anyone else gets ErrNotFound.
	Delete(ctx context.Context, owner, id string) error
	// Share makes owner's document visible to grantee (no-op if it already
	// is). Unshare takes that away again (no-op if it was not shared); the
	// owner's own access cannot be removed.
	Share(ctx context.Context, owner, id, grantee string) error
	Unshare(ctx context.Context, owner, id, grantee string) error
	// Update replaces the body of owner's document (at most MaxBodyBytes of
	// UTF-8 without NUL bytes, else ErrInvalid). Anyone else, grantees
	// included, gets ErrNotFound. Title, MIME type and order key stay.
	Update(ctx context.Context, owner, id, body string) error
	// Readers returns every subject that may read owner's document now:
	// the owner and the grantees, in byte order. Anyone else gets
	// ErrNotFound. It is what a server notifies after an Update; a share
	// made after the call is not in the answer (its grantee is told about
	// the new document by the share itself).
	Readers(ctx context.Context, owner, id string) ([]string, error)
}

// DB is an open database: a Store plus its lifecycle.
type DB interface {
	Store
	// Migrate creates the tables and indexes if they are missing. It is
	// idempotent, and Open calls it unless Options.SkipMigrate is set.
	Migrate(ctx context.Context) error
	// Close releases the connections.
	Close() error
}

// Options configures OpenOptions. The zero value is valid.
type Options struct {
	// Now returns the current time, used for creation times, order keys and
	// expiry checks. Nil means time.Now.
	Now func() time.Time
	// MaxConns caps the connection pool. Zero means 4 for an SQLite file
	// and pgxpool's default for PostgreSQL; an in-memory SQLite database
	// always uses a single connection.
	MaxConns int
	// SkipMigrate leaves the schema alone at open, for deployments that
	// migrate separately with a more privileged role.
	SkipMigrate bool
}

// Open opens the database named by dsn with default Options:
//
//	sqlite:/path/to/documents.db   an SQLite file (created if missing)
//	sqlite::memory:                a private in-memory SQLite database
//	postgres://user@host/db?…      PostgreSQL (postgresql:// works too)
//
// It checks the connection and runs Migrate.
func Open(ctx context.Context, dsn string) (DB, error) {
	return OpenOptions(ctx, dsn, Options{})
}

// OpenOptions is Open with Options.
func OpenOptions(ctx context.Context, dsn string, opts Options) (DB, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxConns < 0 {
		return nil, fmt.Errorf("%w: negative MaxConns", ErrInvalid)
	}
	var (
		db  DB
		err error
	)
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		db, err = openSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"), opts)
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		db, err = openPostgres(ctx, dsn, opts)
	default:
		// The dsn is not echoed: it may hold a password.
		return nil, fmt.Errorf("%w: database must be sqlite:PATH, sqlite::memory: or postgres://…", ErrInvalid)
	}
	if err != nil {
		return nil, err
	}
	if !opts.SkipMigrate {
		if err := db.Migrate(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// dbErr wraps a driver error for op. When ctx is done the result also wraps
// ctx.Err(), whatever the driver made of the cancellation.
func dbErr(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if ce := ctx.Err(); ce != nil && !errors.Is(err, ce) {
		err = errors.Join(ce, err)
	}
	return fmt.Errorf("store: %s: %w", op, err)
}
