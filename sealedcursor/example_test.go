package sealedcursor_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/sealedcursor"
)

func Example() {
	s, err := sealedcursor.New(sealedcursor.Options{}) // random key, 15-minute traversals
	if err != nil {
		panic(err)
	}
	alice := []byte("client-1\x00alice\x00docs:read")
	first := time.Now()
	cursor, err := s.Seal(alice, []byte("last-key=doc-0042"), first)
	if err != nil {
		panic(err)
	}

	position, _, err := s.Open(alice, cursor)
	fmt.Println(string(position), err)

	// Bob cannot use (or read) alice's cursor.
	_, _, err = s.Open([]byte("client-1\x00bob\x00docs:read"), cursor)
	fmt.Println(errors.Is(err, sealedcursor.ErrInvalid))
	// Output:
	// last-key=doc-0042 <nil>
	// true
}

func ExampleParseKeyRing() {
	// Shared by every replica, e.g. from MCPKIT_CURSOR_KEYS. The first key
	// seals; the second still opens cursors sealed before the rotation.
	ring, err := sealedcursor.ParseKeyRing(
		"2:q7sT0a9w8jB5Hc3yV6nR1mK4pL2dF0gS8uX7eZ5iA3o, 1:Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmE")
	if err != nil {
		panic(err)
	}
	s, err := sealedcursor.New(sealedcursor.Options{Keys: ring})
	fmt.Println(s != nil, err)
	_, err = sealedcursor.ParseKeyRing("1:short")
	fmt.Println(err)
	// Output:
	// true <nil>
	// sealedcursor: key ring entry 1: secret is not base64url (no padding) or standard base64
}

// AppendSeal and AppendOpen write into buffers the caller keeps, for a
// server that seals and opens a cursor per request without allocating.
func ExampleSealer_AppendOpen() {
	s := sealedcursor.MustNew(sealedcursor.Options{})
	binding := []byte("client-1\x00alice\x00docs:read")
	cursor, err := s.AppendSeal(make([]byte, 0, 256), binding, []byte("last-key=doc-0042"), time.Now())
	if err != nil {
		panic(err)
	}
	payload, _, err := s.AppendOpen(make([]byte, 0, 64), binding, string(cursor))
	fmt.Println(string(payload), err)
	// Output: last-key=doc-0042 <nil>
}
