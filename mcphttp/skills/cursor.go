package skills

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// Cursor purposes: a cursor of one method never opens for another.
const (
	purposeList = "skills/list"
	purposeDir  = "resources/directory/read"
)

const payloadVersion = 1

// binding is what a cursor is bound to: the purpose, the caller's
// identity (principal.Principal.AppendBinding: issuer, client, subject, scopes,
// audience), the catalog's settings and, for a directory read, the
// directory, each length-prefixed.
func (c *Catalog) binding(purpose string, caller *principal.Principal, dir string) []byte {
	b := make([]byte, 0, 128+len(dir))
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	str(purpose)
	b = caller.AppendBinding(b)
	str(c.fp)
	str(dir)
	return b
}

// seal returns the cursor continuing after key.
func (c *Catalog) seal(purpose string, caller *principal.Principal, dir, key string, first time.Time) (string, error) {
	payload := append([]byte{payloadVersion}, key...)
	cur, err := c.sealer.Seal(c.binding(purpose, caller, dir), payload, first)
	if err != nil {
		c.log.Error("skills: cannot seal a cursor", "purpose", purpose)
		return "", inventory.ErrInternal
	}
	return cur, nil
}

// openCursor returns the key a cursor continues after and the time of
// its traversal's first page; failures are *inventory.CursorError.
func (c *Catalog) openCursor(purpose string, caller *principal.Principal, dir, cursor string) (string, time.Time, error) {
	payload, first, err := c.sealer.Open(c.binding(purpose, caller, dir), cursor)
	switch {
	case errors.Is(err, sealedcursor.ErrExpired):
		return "", time.Time{}, &inventory.CursorError{Reason: inventory.ReasonExpired}
	case err != nil || len(payload) < 2 || payload[0] != payloadVersion:
		return "", time.Time{}, &inventory.CursorError{Reason: inventory.ReasonInvalid}
	}
	return string(payload[1:]), first, nil
}

// maxCursorLen is the length of the longest cursor a Catalog issues (a
// key of 256 bytes or a directory child name of 2048), which a transport's
// byte budget keeps room for.
func maxCursorLen() int { return sealedcursor.SealedLen(1 + 2048) }
