package sealedcursor

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// KeySize is the size of every key in bytes (AES-256).
const KeySize = 32

// Key is one secret of a [KeyRing].
type Key struct {
	// ID names the key inside cursors; 1..255 for configured keys
	// (0 is the id of a Sealer's own random key).
	ID uint8
	// Secret holds KeySize random bytes.
	Secret []byte
}

// KeyRing holds the keys a [Sealer] uses: one active key for sealing and any
// number of older keys that are still accepted for opening during a rotation.
// A KeyRing is immutable and safe for concurrent use.
type KeyRing struct {
	active uint8
	aeads  [256]cipher.AEAD
}

// NewKeyRing returns a KeyRing that seals with active and opens cursors
// sealed with active or any of previous. Ids must be unique.
func NewKeyRing(active Key, previous ...Key) (*KeyRing, error) {
	kr := &KeyRing{active: active.ID}
	for i, k := range append([]Key{active}, previous...) {
		if kr.aeads[k.ID] != nil {
			return nil, fmt.Errorf("sealedcursor: key %d: duplicate key id %d", i+1, k.ID)
		}
		a, err := newAEAD(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("sealedcursor: key %d (id %d): %w", i+1, k.ID, err)
		}
		kr.aeads[k.ID] = a
	}
	return kr, nil
}

// ParseKeyRing parses a key ring from one configuration string, as an
// operator puts it in an environment variable or a secret store:
//
//	ID:SECRET[,ID:SECRET]...
//
// ID is a decimal key id from 1 to 255 and SECRET is 32 bytes encoded as
// base64url without padding or as standard base64 with padding (as printed by
// [GenerateKey]). The first entry is the active key, used for sealing; the
// others are accepted for opening only. Spaces around entries are ignored.
// To rotate: put a new key first, keep the old one after it for at least the
// cursor TTL, then remove it. Errors name the entry but never echo secrets.
func ParseKeyRing(s string) (*KeyRing, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("sealedcursor: key ring is empty")
	}
	var keys []Key
	for i, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		idText, secretText, ok := strings.Cut(entry, ":")
		if !ok {
			return nil, fmt.Errorf("sealedcursor: key ring entry %d: want ID:SECRET", i+1)
		}
		id, err := strconv.ParseUint(strings.TrimSpace(idText), 10, 8)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("sealedcursor: key ring entry %d: key id must be a number from 1 to 255", i+1)
		}
		secret, err := decodeSecret(strings.TrimSpace(secretText))
		if err != nil {
			return nil, fmt.Errorf("sealedcursor: key ring entry %d: %w", i+1, err)
		}
		keys = append(keys, Key{ID: uint8(id), Secret: secret})
	}
	return NewKeyRing(keys[0], keys[1:]...)
}

// GenerateKey returns a new "ID:SECRET" entry for [ParseKeyRing] with 32
// bytes from crypto/rand.
func GenerateKey(id uint8) (string, error) {
	if id == 0 {
		return "", errors.New("sealedcursor: key id must be from 1 to 255")
	}
	secret := make([]byte, KeySize)
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("sealedcursor: reading random key: %w", err)
	}
	return strconv.Itoa(int(id)) + ":" + base64.RawURLEncoding.EncodeToString(secret), nil
}

func decodeSecret(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding.Strict(), base64.StdEncoding.Strict()} {
		if b, err := enc.DecodeString(s); err == nil && !strings.ContainsAny(s, "\r\n") {
			if len(b) != KeySize {
				return nil, fmt.Errorf("secret must decode to %d bytes, got %d", KeySize, len(b))
			}
			return b, nil
		}
	}
	return nil, errors.New("secret is not base64url (no padding) or standard base64")
}

func newAEAD(secret []byte) (cipher.AEAD, error) {
	if len(secret) != KeySize {
		return nil, fmt.Errorf("secret must be %d bytes, got %d", KeySize, len(secret))
	}
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// processKeyRing returns a ring holding one fresh random key with id 0.
func processKeyRing() (*KeyRing, error) {
	secret := make([]byte, KeySize)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("sealedcursor: reading random key: %w", err)
	}
	return NewKeyRing(Key{ID: 0, Secret: secret})
}
