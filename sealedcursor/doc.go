// Package sealedcursor turns server-side pagination state into opaque cursor
// strings that clients can store and return but cannot read, forge, alter, or
// use on behalf of somebody else.
//
// A [Sealer] encrypts and authenticates a payload with AES-256-GCM under a
// server-held key. The caller's binding (for a private listing: client id,
// subject, scopes, audience and a fingerprint of the registry) is used as
// associated data: it is authenticated but never stored in the cursor, so a
// cursor only opens for a request that recomputes the very same binding.
// The time of the first page of a traversal travels inside the sealed
// payload; a traversal expires a fixed TTL after its first page however many
// pages are fetched or replayed.
//
//	s, err := sealedcursor.New(sealedcursor.Options{}) // random per-process key, 15-minute TTL
//	if err != nil {
//		log.Fatal(err)
//	}
//	c, err := s.Seal(binding, position, first)          // put c in the response
//	position, first, err = s.Open(binding, c)           // read it back from the next request
//	switch {
//	case errors.Is(err, sealedcursor.ErrExpired):       // authentic but too old: restart the traversal
//	case err != nil:                                    // ErrInvalid: never say which check failed
//	}
//
// # Security properties
//
// Open returns the single error [ErrInvalid] for every failure an attacker
// controls: a cursor that is too long, not canonical base64url, of another
// version, sealed under an unknown key, tampered with, or sealed for another
// binding. Only a cursor that authenticated can report [ErrExpired]: its holder
// already knows its age. Cursors are confidential and tamper-evident but not
// single-use: a client can replay one until it expires, so a cursor must never
// grant anything; callers re-check authorization on every page.
//
// # Keys
//
// By default each [Sealer] draws a fresh 32-byte key from crypto/rand: nothing
// is stored, and a restart (or another replica) rejects earlier cursors, which
// clients see as invalid and answer by listing again. A fleet behind a load
// balancer shares a [KeyRing] instead: several keys with one-byte ids, the
// first one active for sealing, all of them accepted for opening, so a key can
// be rotated without breaking traversals in flight. See [ParseKeyRing] for the
// configuration format.
//
// # Wire format
//
// A cursor is the base64url encoding, without padding, of
//
//	version (1 byte, 0x01) ‖ key id (1) ‖ nonce (12) ‖ AES-256-GCM(first page time (8) ‖ payload) ‖ tag (16)
//
// with the version byte, the key id and the binding as associated data. Only
// the canonical encoding is accepted, and the length is checked before any
// decoding.
package sealedcursor
