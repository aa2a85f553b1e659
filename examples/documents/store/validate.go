package store

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// orderKeyTimeLayout is fixed-width (zeros are kept), UTC and ASCII, so the
// byte order of formatted times is their chronological order.
const orderKeyTimeLayout = "2006-01-02T15:04:05.000000Z"

// newID returns 22 random URL-safe characters (128 bits).
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// orderKey is the listing key of a document created at t with id: creation
// time first (so listings run oldest first), the id as the tie-breaker
// (so the key is unique). Both parts never change.
func orderKey(t time.Time, id string) string {
	return t.UTC().Format(orderKeyTimeLayout) + "/" + id
}

// dbTime truncates t to what both databases store: UTC microseconds.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// checkSubject rejects what could not be an authenticated identity key,
// above all the empty one: no query ever runs without an owner to
// restrict it. A key is a subject of at most MaxSubjectLen UTF-16 code
// units, or, on a server that trusts several issuers, such a subject
// qualified by its issuer (principal.SubjectKey: issuer + "#" + subject, the
// issuer a URL of printable ASCII without "#"), at most MaxOwnerLen code
// units in all.
func checkSubject(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty %s", ErrInvalid, what)
	case !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: %s is not printable UTF-8", ErrInvalid, what)
	case len(s) <= 3*MaxSubjectLen && utf16Len(s) <= MaxSubjectLen:
		return nil
	}
	issuer, subject, ok := strings.Cut(s, "#")
	if !ok || len(issuer) > MaxOwnerLen-MaxSubjectLen-1 || !printableASCII(issuer) || !strings.Contains(issuer, "://") ||
		subject == "" || len(subject) > 3*MaxSubjectLen || utf16Len(subject) > MaxSubjectLen {
		return fmt.Errorf("%w: %s longer than %d UTF-16 code units", ErrInvalid, what, MaxSubjectLen)
	}
	return nil
}

// utf16Len is the length of s in UTF-16 code units: two for a rune outside
// the Basic Multilingual Plane, one for any other (invalid bytes count
// one each; checkSubject refuses them anyway).
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// checkPage checks the arguments of a listing: the subject, the key to
// list after, and the page size.
func checkPage(subject, after string, limit int) error {
	if err := checkSubject("subject", subject); err != nil {
		return err
	}
	if err := checkAfter(after); err != nil {
		return err
	}
	return checkLimit(limit)
}

// checkAfter accepts "" or a possible key: 1–256 bytes in 0x21–0x7E.
func checkAfter(after string) error {
	if len(after) > MaxKeyBytes || !printableASCII(after) {
		return fmt.Errorf("%w: after is not a key", ErrInvalid)
	}
	return nil
}

func checkLimit(limit int) error {
	if limit < 1 || limit > MaxListLimit {
		return fmt.Errorf("%w: limit %d not in 1..%d", ErrInvalid, limit, MaxListLimit)
	}
	return nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// validID reports whether id could name a document: 1–64 of [A-Za-z0-9_-].
// Ids that cannot exist are answered with ErrNotFound without a query.
func validID(id string) bool {
	if id == "" || len(id) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// idRange returns the bounds of the ids that start with prefix, lo <= id <
// hi in byte order, and false when no id can (see validID). Every id byte
// is below '{' (0x7B, after 'z'), so prefix+"{" is above every id that
// starts with prefix and below every greater id that does not.
func idRange(prefix string) (lo, hi string, ok bool) {
	if prefix != "" && !validID(prefix) {
		return "", "", false
	}
	return prefix, prefix + "{", true
}

// isMIMEType accepts "type/subtype" made of RFC 6838 restricted-name
// characters, and nothing else (no parameters).
func isMIMEType(s string) bool {
	if len(s) > MaxMIMETypeBytes {
		return false
	}
	typ, sub, ok := strings.Cut(s, "/")
	return ok && isRestrictedName(typ) && isRestrictedName(sub)
}

func isRestrictedName(s string) bool {
	if s == "" || len(s) > 127 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$&-^_.+", c) >= 0) {
			return false
		}
	}
	return true
}

// prepare validates doc, stamps it with now and fills in the id and key.
func prepare(doc NewDocument, now time.Time) (Document, error) {
	if err := checkSubject("owner", doc.Owner); err != nil {
		return Document{}, err
	}
	switch {
	case doc.Title == "" || len(doc.Title) > MaxTitleBytes:
		return Document{}, fmt.Errorf("%w: title must be 1–%d bytes", ErrInvalid, MaxTitleBytes)
	case !utf8.ValidString(doc.Title) || strings.IndexFunc(doc.Title, unicode.IsControl) >= 0:
		return Document{}, fmt.Errorf("%w: title is not printable UTF-8", ErrInvalid)
	case checkBody(doc.Body) != nil:
		return Document{}, checkBody(doc.Body)
	case !isMIMEType(doc.MIMEType):
		return Document{}, fmt.Errorf("%w: MIME type must be type/subtype", ErrInvalid)
	case doc.ID != "" && !validID(doc.ID):
		return Document{}, fmt.Errorf("%w: id must be 1–%d of [A-Za-z0-9_-]", ErrInvalid, MaxIDBytes)
	}
	created := dbTime(now)
	if y := created.Year(); y < 1970 || y > 9999 {
		return Document{}, fmt.Errorf("%w: clock outside 1970–9999", ErrInvalid)
	}
	var expires time.Time
	if !doc.ExpiresAt.IsZero() {
		expires = dbTime(doc.ExpiresAt)
		if !expires.After(created) {
			return Document{}, fmt.Errorf("%w: expiry not after creation", ErrInvalid)
		}
	}
	id := doc.ID
	if id == "" {
		id = newID()
	}
	return Document{
		ID: id, Owner: doc.Owner, Title: doc.Title, Body: doc.Body, MIMEType: doc.MIMEType,
		OrderKey: orderKey(created, id), CreatedAt: created, ExpiresAt: expires,
	}, nil
}

// checkShare validates Share/Unshare arguments. A malformed id is reported
// as ErrNotFound (no such document can exist).
func checkShare(owner, id, grantee string) error {
	if err := checkSubject("owner", owner); err != nil {
		return err
	}
	if err := checkSubject("grantee", grantee); err != nil {
		return err
	}
	if !validID(id) {
		return ErrNotFound
	}
	return nil
}

// checkBody accepts a document body: at most MaxBodyBytes of UTF-8 without
// NUL bytes.
func checkBody(body string) error {
	if len(body) > MaxBodyBytes || !utf8.ValidString(body) || strings.IndexByte(body, 0) >= 0 {
		return fmt.Errorf("%w: body must be at most %d bytes of UTF-8 without NUL", ErrInvalid, MaxBodyBytes)
	}
	return nil
}

// checkOwned validates the arguments of Update and Readers. A malformed id
// is reported as ErrNotFound (no such document can exist).
func checkOwned(owner, id string) error {
	if err := checkSubject("owner", owner); err != nil {
		return err
	}
	if !validID(id) {
		return ErrNotFound
	}
	return nil
}
