package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/mcpkit/mcpkit/mcphttp/skills"
)

// Skills: each user may own skills (the MCP Skills extension), shared like
// documents. The shape is the documents' one:
//
//	skills(id PRIMARY KEY, owner, name, frontmatter, order_key UNIQUE)
//	skill_files(skill_id, path, mime_type, body, digest, size, PRIMARY KEY (skill_id, path))
//	skill_access(subject, order_key, skill_id, PRIMARY KEY (subject, order_key))
//	             + INDEX (skill_id, subject)
//
// A subject's visible skills are one range of skill_access's primary key
// (the keyset listing), and every read re-checks the access row. A file's
// digest and size are computed once, from the bytes stored, when the
// skill is created: what the listing says is what a read returns.

// Limits of a stored skill.
const (
	MaxSkillFiles       = skills.MaxFiles
	MaxSkillFileBytes   = 1 << 20
	MaxSkillPathBytes   = 512
	MaxSkillDescription = 1024
)

// SkillFile is one file of a stored skill, without its bytes.
type SkillFile struct {
	Path, MIMEType, Digest string
	Size                   int64
}

// Skill is a stored skill as listings and gets return it: its files'
// metadata, never their bytes.
type Skill struct {
	ID, Name, OrderKey string
	// Frontmatter is SKILL.md's frontmatter as a JSON object.
	Frontmatter string
	Files       []SkillFile // sorted by path; SKILL.md among them
}

// NewSkillFile is a file CreateSkill stores.
type NewSkillFile struct {
	Path, MIMEType string
	Body           []byte
}

// NewSkill is what CreateSkill stores. SKILL.md is written from Name,
// Description and Body (its frontmatter is exactly name and description).
type NewSkill struct {
	Owner       string
	Name        string // the Agent Skills naming rules (skills.ValidName)
	Description string // 1..MaxSkillDescription bytes of UTF-8 without control characters
	Body        string // the Markdown after the frontmatter
	Files       []NewSkillFile
	ID          string // normally empty: CreateSkill picks one
}

// SkillStore keeps skills. Every method checks the subject first and puts
// it in the query's WHERE clause; ErrNotFound covers a skill that does not
// exist and one the subject may not see alike.
type SkillStore interface {
	// ListSkills returns the next at most limit skills visible to subject
	// (owned or shared with it) after the order key after.
	ListSkills(ctx context.Context, subject, after string, limit int) ([]Skill, error)
	// GetSkill returns the skill id if subject may see it.
	GetSkill(ctx context.Context, subject, id string) (Skill, error)
	// ReadSkillFile returns the file at path of skill id, its MIME type and
	// the skill's name, if subject may see the skill.
	ReadSkillFile(ctx context.Context, subject, id, path string) (name, mimeType string, body []byte, err error)
	CreateSkill(ctx context.Context, ns NewSkill) (Skill, error)
	// ShareSkill lets grantee see owner's skill id.
	ShareSkill(ctx context.Context, owner, id, grantee string) error
	// UnshareSkill revokes what ShareSkill gave grantee: from the next
	// call on, grantee neither lists nor reads the skill. Unsharing a
	// skill that was not shared with grantee is no error; the owner's own
	// access cannot be removed (ErrInvalid).
	UnshareSkill(ctx context.Context, owner, id, grantee string) error
}

// OpenSkills returns the skill store of db (opened by Open), creating its
// tables if needed.
func OpenSkills(ctx context.Context, db DB) (SkillStore, error) {
	var r runner
	var schema []string
	var now func() time.Time
	switch d := db.(type) {
	case *sqliteStore:
		r, schema, now = sqliteRunner{d.db}, sqliteSkillSchema, d.now
	case *postgresStore:
		r, schema, now = postgresRunner{d}, postgresSkillSchema, d.now
	default:
		return nil, fmt.Errorf("%w: not a database of this package", ErrInvalid)
	}
	st := &skillStore{r: r, now: now}
	err := r.inTx(ctx, "migrate skills", func(exec execFunc) error {
		for _, q := range schema {
			if _, err := exec(q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

var sqliteSkillSchema = []string{
	`CREATE TABLE IF NOT EXISTS skills (
		id          TEXT COLLATE BINARY NOT NULL PRIMARY KEY,
		owner       TEXT COLLATE BINARY NOT NULL,
		name        TEXT NOT NULL,
		frontmatter TEXT NOT NULL,
		order_key   TEXT COLLATE BINARY NOT NULL UNIQUE
	) STRICT`,
	`CREATE TABLE IF NOT EXISTS skill_files (
		skill_id  TEXT COLLATE BINARY NOT NULL REFERENCES skills (id),
		path      TEXT COLLATE BINARY NOT NULL,
		mime_type TEXT NOT NULL,
		body      BLOB NOT NULL,
		digest    TEXT NOT NULL,
		size      INTEGER NOT NULL,
		PRIMARY KEY (skill_id, path)
	) STRICT, WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS skill_access (
		subject   TEXT COLLATE BINARY NOT NULL,
		order_key TEXT COLLATE BINARY NOT NULL,
		skill_id  TEXT COLLATE BINARY NOT NULL REFERENCES skills (id),
		PRIMARY KEY (subject, order_key)
	) STRICT, WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS skill_access_skill ON skill_access (skill_id, subject)`,
}

var postgresSkillSchema = []string{
	`SELECT pg_advisory_xact_lock(7240117315513447426)`,
	`CREATE TABLE IF NOT EXISTS skills (
		id          text COLLATE "C" NOT NULL PRIMARY KEY,
		owner       text COLLATE "C" NOT NULL,
		name        text NOT NULL,
		frontmatter text NOT NULL,
		order_key   text COLLATE "C" NOT NULL UNIQUE
	)`,
	`CREATE TABLE IF NOT EXISTS skill_files (
		skill_id  text COLLATE "C" NOT NULL REFERENCES skills (id),
		path      text COLLATE "C" NOT NULL,
		mime_type text NOT NULL,
		body      bytea NOT NULL,
		digest    text NOT NULL,
		size      bigint NOT NULL,
		PRIMARY KEY (skill_id, path)
	)`,
	`CREATE TABLE IF NOT EXISTS skill_access (
		subject   text COLLATE "C" NOT NULL,
		order_key text COLLATE "C" NOT NULL,
		skill_id  text COLLATE "C" NOT NULL REFERENCES skills (id),
		PRIMARY KEY (subject, order_key)
	)`,
	`CREATE INDEX IF NOT EXISTS skill_access_skill ON skill_access (skill_id, subject)`,
}

type skillStore struct {
	r   runner
	now func() time.Time
}

const skillsList = `SELECT s.id, s.name, s.frontmatter, a.order_key
FROM skill_access AS a JOIN skills AS s ON s.id = a.skill_id
WHERE a.subject = ? AND a.order_key > ?
ORDER BY a.order_key
LIMIT ?`

const skillsGet = `SELECT s.id, s.name, s.frontmatter, s.order_key
FROM skills AS s
WHERE s.id = ? AND EXISTS (SELECT 1 FROM skill_access AS a WHERE a.skill_id = s.id AND a.subject = ?)`

const skillsReadFile = `SELECT s.name, f.mime_type, f.body
FROM skills AS s JOIN skill_files AS f ON f.skill_id = s.id
WHERE s.id = ? AND f.path = ?
  AND EXISTS (SELECT 1 FROM skill_access AS a WHERE a.skill_id = s.id AND a.subject = ?)`

func (st *skillStore) ListSkills(ctx context.Context, subject, after string, limit int) ([]Skill, error) {
	if err := checkPage(subject, after, limit); err != nil {
		return nil, err
	}
	var out []Skill
	err := st.r.query(ctx, "list skills", skillsList, []any{subject, after, limit}, func(scan func(...any) error) error {
		var s Skill
		if err := scan(&s.ID, &s.Name, &s.Frontmatter, &s.OrderKey); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	return out, st.files(ctx, out)
}

// files fills in the files of skills, with one query.
func (st *skillStore) files(ctx context.Context, list []Skill) error {
	index := make(map[string]int, len(list))
	args := make([]any, len(list))
	for i := range list {
		index[list[i].ID] = i
		args[i] = list[i].ID
	}
	q := `SELECT skill_id, path, mime_type, digest, size FROM skill_files WHERE skill_id IN (` +
		strings.TrimSuffix(strings.Repeat("?,", len(list)), ",") + `) ORDER BY skill_id, path`
	return st.r.query(ctx, "list skill files", q, args, func(scan func(...any) error) error {
		var id string
		var f SkillFile
		if err := scan(&id, &f.Path, &f.MIMEType, &f.Digest, &f.Size); err != nil {
			return err
		}
		if i, ok := index[id]; ok {
			list[i].Files = append(list[i].Files, f)
		}
		return nil
	})
}

func (st *skillStore) GetSkill(ctx context.Context, subject, id string) (Skill, error) {
	if err := checkSubject("subject", subject); err != nil {
		return Skill{}, err
	}
	if !validID(id) {
		return Skill{}, ErrNotFound
	}
	var out []Skill
	err := st.r.query(ctx, "get skill", skillsGet, []any{id, subject}, func(scan func(...any) error) error {
		var s Skill
		if err := scan(&s.ID, &s.Name, &s.Frontmatter, &s.OrderKey); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return Skill{}, err
	}
	if len(out) == 0 {
		return Skill{}, ErrNotFound
	}
	return out[0], st.files(ctx, out)
}

func (st *skillStore) ReadSkillFile(ctx context.Context, subject, id, path string) (string, string, []byte, error) {
	if err := checkSubject("subject", subject); err != nil {
		return "", "", nil, err
	}
	if !validID(id) || !validSkillPath(path) {
		return "", "", nil, ErrNotFound
	}
	var name, mime string
	var body []byte
	found := false
	err := st.r.query(ctx, "read skill file", skillsReadFile, []any{id, path, subject}, func(scan func(...any) error) error {
		found = true
		return scan(&name, &mime, &body)
	})
	if err != nil {
		return "", "", nil, err
	}
	if !found {
		return "", "", nil, ErrNotFound
	}
	return name, mime, body, nil
}

// validSkillPath accepts a relative path of non-empty segments other than
// "." and "..", of printable ASCII without space, at most
// MaxSkillPathBytes.
func validSkillPath(p string) bool {
	if p == "" || len(p) > MaxSkillPathBytes || !printableASCII(p) || strings.ContainsAny(p, " ?#%\\") {
		return false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

func (st *skillStore) CreateSkill(ctx context.Context, ns NewSkill) (Skill, error) {
	if err := checkNewSkill(ns); err != nil {
		return Skill{}, err
	}
	id := ns.ID
	if id == "" {
		id = newID()
	} else if !validID(id) {
		return Skill{}, fmt.Errorf("%w: id", ErrInvalid)
	}
	fm, err := json.Marshal(struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}{ns.Name, ns.Description})
	if err != nil {
		return Skill{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	files, err := skillFiles(ns)
	if err != nil {
		return Skill{}, err
	}
	s := Skill{ID: id, Name: ns.Name, Frontmatter: string(fm), OrderKey: orderKey(dbTime(st.now()), id)}
	for _, f := range files {
		s.Files = append(s.Files, SkillFile{Path: f.Path, MIMEType: f.MIMEType, Digest: skills.Digest(f.Body), Size: int64(len(f.Body))})
	}
	slices.SortFunc(s.Files, func(a, b SkillFile) int { return strings.Compare(a.Path, b.Path) })
	err = st.r.inTx(ctx, "create skill", func(exec execFunc) error {
		if _, err := exec(`INSERT INTO skills (id, owner, name, frontmatter, order_key) VALUES (?, ?, ?, ?, ?)`,
			s.ID, ns.Owner, s.Name, s.Frontmatter, s.OrderKey); err != nil {
			return err
		}
		for _, f := range files {
			if _, err := exec(`INSERT INTO skill_files (skill_id, path, mime_type, body, digest, size) VALUES (?, ?, ?, ?, ?, ?)`,
				s.ID, f.Path, f.MIMEType, f.Body, skills.Digest(f.Body), int64(len(f.Body))); err != nil {
				return err
			}
		}
		_, err := exec(`INSERT INTO skill_access (subject, order_key, skill_id) VALUES (?, ?, ?)`, ns.Owner, s.OrderKey, s.ID)
		return err
	})
	if err != nil {
		return Skill{}, err
	}
	return s, nil
}

// checkNewSkill checks a new skill's owner, name, description and number
// of files.
func checkNewSkill(ns NewSkill) error {
	if err := checkSubject("owner", ns.Owner); err != nil {
		return err
	}
	if !skills.ValidName(ns.Name) {
		return fmt.Errorf("%w: skill name must follow the Agent Skills naming rules", ErrInvalid)
	}
	if ns.Description == "" || len(ns.Description) > MaxSkillDescription || !utf8.ValidString(ns.Description) ||
		strings.ContainsFunc(ns.Description, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("%w: description must be 1..%d bytes of printable UTF-8", ErrInvalid, MaxSkillDescription)
	}
	if len(ns.Files)+1 > MaxSkillFiles {
		return fmt.Errorf("%w: at most %d files", ErrInvalid, MaxSkillFiles)
	}
	return nil
}

// skillFiles returns the skill's files, its manifest first, each checked
// (path, MIME type, size, no path twice) and their total size within
// skills.MaxTotalSize.
func skillFiles(ns NewSkill) ([]NewSkillFile, error) {
	// The YAML frontmatter: description as a double-quoted scalar (JSON
	// string syntax is valid YAML), so that parsing it gives exactly
	// Description back.
	desc, _ := json.Marshal(ns.Description)
	manifest := []byte("---\nname: " + ns.Name + "\ndescription: " + string(desc) + "\n---\n\n" + ns.Body)
	files := append([]NewSkillFile{{Path: skills.ManifestName, MIMEType: "text/markdown", Body: manifest}}, ns.Files...)
	var total int64
	seen := map[string]bool{}
	for _, f := range files {
		if !validSkillPath(f.Path) || seen[f.Path] || !isMIMEType(f.MIMEType) || len(f.Body) > MaxSkillFileBytes {
			return nil, fmt.Errorf("%w: file %q", ErrInvalid, f.Path)
		}
		seen[f.Path] = true
		total += int64(len(f.Body))
	}
	if total > skills.MaxTotalSize {
		return nil, fmt.Errorf("%w: over %d bytes in all", ErrInvalid, skills.MaxTotalSize)
	}
	return files, nil
}

func (st *skillStore) ShareSkill(ctx context.Context, owner, id, grantee string) error {
	if err := checkShare(owner, id, grantee); err != nil {
		return err
	}
	return st.r.inTx(ctx, "share skill", func(exec execFunc) error {
		n, err := exec(`INSERT INTO skill_access (subject, order_key, skill_id)
SELECT ?, order_key, id FROM skills WHERE id = ? AND owner = ?
ON CONFLICT DO NOTHING`, grantee, id, owner)
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		// Already shared, or not the owner's: tell them apart.
		owned, err := exec(`UPDATE skills SET owner = owner WHERE id = ? AND owner = ?`, id, owner)
		if err != nil {
			return err
		}
		if owned == 0 {
			return ErrNotFound
		}
		return nil
	})
}

func (st *skillStore) UnshareSkill(ctx context.Context, owner, id, grantee string) error {
	if err := checkShare(owner, id, grantee); err != nil {
		return err
	}
	if grantee == owner {
		return fmt.Errorf("%w: the owner's access cannot be removed", ErrInvalid)
	}
	return st.r.inTx(ctx, "unshare skill", func(exec execFunc) error {
		owned, err := exec(`UPDATE skills SET owner = owner WHERE id = ? AND owner = ?`, id, owner)
		if err != nil {
			return err
		}
		if owned == 0 {
			return ErrNotFound // not the owner's, or none: the same answer
		}
		_, err = exec(`DELETE FROM skill_access WHERE skill_id = ? AND subject = ?`, id, grantee)
		return err
	})
}

// execFunc runs one statement (with ? placeholders) in a transaction and
// returns the rows affected.
type execFunc func(q string, args ...any) (int64, error)

// runner is what the skill store needs of a database: queries with ?
// placeholders (rewritten for PostgreSQL) and transactions.
type runner interface {
	query(ctx context.Context, op, q string, args []any, row func(scan func(...any) error) error) error
	inTx(ctx context.Context, op string, fn func(exec execFunc) error) error
}

type sqliteRunner struct{ db *sql.DB }

func (r sqliteRunner) query(ctx context.Context, op, q string, args []any, row func(scan func(...any) error) error) error {
	rows, err := r.db.QueryContext(ctx, q, args...)
	if err != nil {
		return dbErr(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return dbErr(ctx, op, err)
		}
	}
	return dbErr(ctx, op, rows.Err())
}

func (r sqliteRunner) inTx(ctx context.Context, op string, fn func(exec execFunc) error) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(ctx, op, err)
	}
	defer tx.Rollback()
	err = fn(func(q string, args ...any) (int64, error) {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
	switch {
	case err == nil:
		return dbErr(ctx, op, tx.Commit())
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrInvalid):
		return err
	case sqliteUnique(err):
		return ErrExists
	}
	return dbErr(ctx, op, err)
}

type postgresRunner struct{ s *postgresStore }

// dollars rewrites ? placeholders as $1, $2, … (the queries here hold no
// other question mark).
func dollars(q string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

func (r postgresRunner) query(ctx context.Context, op, q string, args []any, row func(scan func(...any) error) error) error {
	err := r.s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, dollars(q), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := row(rows.Scan); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	return dbErr(ctx, op, err)
}

func (r postgresRunner) inTx(ctx context.Context, op string, fn func(exec execFunc) error) error {
	return r.s.inTx(ctx, op, func(tx pgx.Tx) error {
		return fn(func(q string, args ...any) (int64, error) {
			tag, err := tx.Exec(ctx, dollars(q), args...)
			return tag.RowsAffected(), err
		})
	})
}
