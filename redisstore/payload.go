package redisstore

import (
	"errors"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/notify"
)

// MaxPayloadBytes bounds a [Broker]'s messages: an event that encodes
// longer is not published (ErrPayloadTooLarge), and a longer message
// received is ignored. (A subject and a URI within mcpkit's own limits
// always fit.)
const MaxPayloadBytes = 8 << 10

var (
	// ErrPayloadTooLarge: the encoded event is longer than
	// MaxPayloadBytes; nothing was published.
	ErrPayloadTooLarge = errors.New("redisstore: payload too large")
	// ErrInvalidEvent: the event has no subject, an unknown kind, a URI
	// missing (updates) or present (list changes), or invalid UTF-8.
	ErrInvalidEvent = errors.New("redisstore: invalid event")
)

// The wire names of the event kinds (those of the documents example's
// PostgreSQL broker, so both carry the same messages).
const (
	kindListChanged     = "list_changed"
	kindResourceUpdated = "resource_updated"
	// kindElicitationComplete carries the elicitation id in "uri".
	kindElicitationComplete = "elicitation_complete"
)

// appendPayload appends the compact JSON message of e to dst:
//
//	{"subject":"bob","kind":"list_changed","id":"1764680000000-0"}
//	{"subject":"alice","kind":"resource_updated","uri":"docs://documents/x"}
//
// "id" is the event's id in the hubs' event log, absent when it has none;
// instances of earlier versions ignore it, and deliver the event without.
func appendPayload(dst []byte, e notify.Event) ([]byte, error) {
	var kind string
	switch e.Kind {
	case notify.ListChanged:
		kind = kindListChanged
	case notify.ResourceUpdated:
		kind = kindResourceUpdated
	case notify.ElicitationComplete:
		kind = kindElicitationComplete
	}
	if !validEvent(e.Subject, kind, e.URI) {
		return dst, ErrInvalidEvent
	}
	start := len(dst)
	dst = append(dst, `{"subject":`...)
	dst = jsonrpc.AppendString(dst, e.Subject)
	dst = append(dst, `,"kind":"`...)
	dst = append(dst, kind...)
	dst = append(dst, '"')
	if e.URI != "" {
		dst = append(dst, `,"uri":`...)
		dst = jsonrpc.AppendString(dst, e.URI)
	}
	if notify.ValidID(e.ID) {
		dst = append(dst, `,"id":`...)
		dst = jsonrpc.AppendString(dst, e.ID)
	}
	dst = append(dst, '}')
	if len(dst)-start > MaxPayloadBytes {
		return dst[:start], ErrPayloadTooLarge
	}
	return dst, nil
}

// decodePayload parses and checks a received message with the kit's
// strict JSON reader: one object, no repeated or case-variant member
// names, exact names; unknown members are ignored (an instance of a newer
// version may add some during a rolling upgrade), everything the event
// needs must be there and valid.
func decodePayload(payload []byte) (notify.Event, bool) {
	if len(payload) > MaxPayloadBytes {
		return notify.Event{}, false
	}
	var subject, kind, uri, id string
	var hasSubject, hasKind, ok bool
	ok = true
	err := jsonrpc.Members(payload, func(name string, value []byte) bool {
		var p *string
		switch name {
		case "subject":
			p, hasSubject = &subject, true
		case "kind":
			p, hasKind = &kind, true
		case "uri":
			p = &uri
		case "id":
			p = &id
		default:
			return true
		}
		*p, ok = jsonrpc.String(value)
		return ok
	})
	if err != nil || !ok || !hasSubject || !hasKind || !validEvent(subject, kind, uri) {
		return notify.Event{}, false
	}
	if !notify.ValidID(id) {
		id = "" // none, or one no log gives: the event goes without
	}
	e := notify.Event{Subject: subject, URI: uri, Kind: notify.ListChanged, ID: id}
	switch kind {
	case kindResourceUpdated:
		e.Kind = notify.ResourceUpdated
	case kindElicitationComplete:
		e.Kind = notify.ElicitationComplete
	}
	return e, true
}

// validEvent reports whether the parts name a deliverable event: a
// subject, a known kind, a URI exactly for updates, all valid UTF-8.
func validEvent(subject, kind, uri string) bool {
	if subject == "" || !utf8.ValidString(subject) || !utf8.ValidString(uri) {
		return false
	}
	switch kind {
	case kindListChanged:
		return uri == ""
	case kindResourceUpdated, kindElicitationComplete:
		return uri != ""
	}
	return false
}
