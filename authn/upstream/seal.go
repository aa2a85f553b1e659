package upstream

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/sealedcursor"
)

// A sealed row is "u1." followed by the base64url row id and the
// sealedcursor seals of the payload's chunks, joined by dots. Each chunk
// is bound to the row's binding (its purpose, the upstream and the user),
// the row id, its index and the number of chunks: a chunk moved to
// another row, another position or another user does not open, and a row
// cut short does not either.
const (
	rowPrefix = "u1."
	chunkSize = sealedcursor.MaxPayload
	maxChunks = 16
)

var errSealed = errors.New("upstream: sealed row does not open")

// sealRow seals payload bound to binding.
func sealRow(s *sealedcursor.Sealer, binding, payload []byte, now time.Time) (string, error) {
	n := (len(payload) + chunkSize - 1) / chunkSize
	if n == 0 {
		n = 1
	}
	if n > maxChunks {
		return "", errors.New("upstream: value too large to seal")
	}
	var id [16]byte
	_, _ = rand.Read(id[:])
	var b strings.Builder
	b.WriteString(rowPrefix)
	b.WriteString(base64.RawURLEncoding.EncodeToString(id[:]))
	for i := range n {
		chunk := payload[i*chunkSize : min((i+1)*chunkSize, len(payload))]
		c, err := s.Seal(chunkBinding(binding, id[:], i, n), chunk, now)
		if err != nil {
			return "", err
		}
		b.WriteByte('.')
		b.WriteString(c)
	}
	return b.String(), nil
}

// openRow opens a row sealed by sealRow for binding: errSealed for any
// row that was not sealed for it, sealedcursor.ErrExpired for one older
// than the sealer's TTL.
func openRow(s *sealedcursor.Sealer, binding []byte, row string) ([]byte, error) {
	rest, ok := strings.CutPrefix(row, rowPrefix)
	if !ok || len(row) > maxChunks*(sealedcursor.SealedLen(chunkSize)+1)+64 {
		return nil, errSealed
	}
	parts := strings.Split(rest, ".")
	if len(parts) < 2 || len(parts)-1 > maxChunks {
		return nil, errSealed
	}
	id, err := base64.RawURLEncoding.Strict().DecodeString(parts[0])
	if err != nil || len(id) != 16 {
		return nil, errSealed
	}
	n := len(parts) - 1
	var payload []byte
	for i, c := range parts[1:] {
		p, _, err := s.Open(chunkBinding(binding, id, i, n), c)
		if errors.Is(err, sealedcursor.ErrExpired) {
			return nil, err
		}
		if err != nil {
			return nil, errSealed
		}
		payload = append(payload, p...)
	}
	return payload, nil
}

func chunkBinding(binding, id []byte, i, n int) []byte {
	b := make([]byte, 0, len(binding)+32)
	b = append(b, binding...)
	b = append(b, id...)
	b = binary.AppendUvarint(b, uint64(i))
	return binary.AppendUvarint(b, uint64(n))
}

// bindingOf is the associated data of a sealed value: its purpose, the
// upstream and the user, each length-prefixed.
func bindingOf(purpose, upstream, user string) []byte {
	var b []byte
	for _, s := range []string{"mcpkit/upstream", purpose, upstream, user} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}
