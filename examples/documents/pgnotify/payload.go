package pgnotify

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/notify"
)

// MaxPayloadBytes is the largest payload PostgreSQL accepts in its default
// configuration: a payload must be shorter than 8000 bytes.
const MaxPayloadBytes = 7999

var (
	// ErrPayloadTooLarge: the encoded event is MaxPayloadBytes long or
	// longer; nothing was sent.
	ErrPayloadTooLarge = errors.New("pgnotify: payload too large")
	// ErrInvalidEvent: the event has no subject, an unknown kind, a URI
	// missing (updates) or present (list changes), or invalid UTF-8.
	ErrInvalidEvent = errors.New("pgnotify: invalid event")
)

// The wire names of the event kinds.
const (
	kindListChanged     = "list_changed"
	kindResourceUpdated = "resource_updated"
	// kindElicitationComplete carries the elicitation id in "uri".
	kindElicitationComplete = "elicitation_complete"
)

// wire is the JSON payload of a notification.
type wire struct {
	Subject string `json:"subject"`
	Kind    string `json:"kind"`
	URI     string `json:"uri,omitempty"`
	// ID is the event's id in the hubs' event log (notify.Event.ID),
	// absent when it has none; instances of earlier versions ignore it.
	ID string `json:"id,omitempty"`
}

// encodePayload returns the compact JSON payload of e.
func encodePayload(e notify.Event) ([]byte, error) {
	w := wire{Subject: e.Subject, URI: e.URI}
	if notify.ValidID(e.ID) {
		w.ID = e.ID
	}
	switch e.Kind {
	case notify.ListChanged:
		w.Kind = kindListChanged
	case notify.ResourceUpdated:
		w.Kind = kindResourceUpdated
	case notify.ElicitationComplete:
		w.Kind = kindElicitationComplete
	}
	if !w.valid() {
		return nil, ErrInvalidEvent
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, ErrInvalidEvent
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if len(out) > MaxPayloadBytes {
		return nil, ErrPayloadTooLarge
	}
	return out, nil
}

// decodePayload parses and checks a received payload. Unknown members are
// ignored, so that instances of a newer version may add some during a
// rolling upgrade; everything the event needs must be there and valid.
func decodePayload(payload string) (notify.Event, bool) {
	if len(payload) > MaxPayloadBytes || !utf8.ValidString(payload) {
		return notify.Event{}, false
	}
	var w wire
	if err := json.Unmarshal([]byte(payload), &w); err != nil || !w.valid() {
		return notify.Event{}, false
	}
	e := notify.Event{Subject: w.Subject, URI: w.URI}
	if notify.ValidID(w.ID) {
		e.ID = w.ID // else none, or one no log gives: the event goes without
	}
	switch w.Kind {
	case kindListChanged:
		e.Kind = notify.ListChanged
	case kindResourceUpdated:
		e.Kind = notify.ResourceUpdated
	case kindElicitationComplete:
		e.Kind = notify.ElicitationComplete
	}
	return e, true
}

// valid reports whether w names a deliverable event: a subject, a known
// kind, a URI exactly for updates, all valid UTF-8 (JSON would replace
// invalid bytes with U+FFFD and so change the addressee).
func (w wire) valid() bool {
	if w.Subject == "" || !utf8.ValidString(w.Subject) || !utf8.ValidString(w.URI) {
		return false
	}
	switch w.Kind {
	case kindListChanged:
		return w.URI == ""
	case kindResourceUpdated, kindElicitationComplete:
		return w.URI != ""
	}
	return false
}
