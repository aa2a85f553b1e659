package contract

import (
	"errors"
	"math"
	"slices"
	"time"

	"github.com/mcpkit/mcpkit/principal"
)

// Annotations checks a resource's annotations: an audience of "user" and
// "assistant" only, a priority between 0 and 1, an RFC 3339 lastModified.
func Annotations(audience []string, priority *float64, lastModified string) error {
	for _, s := range audience {
		if s != "user" && s != "assistant" {
			return errors.New(`annotation audience must be "user" or "assistant"`)
		}
	}
	if p := priority; p != nil && (math.IsNaN(*p) || *p < 0 || *p > 1) {
		return errors.New("annotation priority must be between 0 and 1")
	}
	if lastModified != "" {
		if _, err := time.Parse(time.RFC3339, lastModified); err != nil {
			return errors.New("annotation lastModified must be an RFC 3339 timestamp")
		}
	}
	return nil
}

// Scopes checks the required scopes of a resource or template (none for
// a public one; RFC 6749 scope tokens) and returns them sorted and
// de-duplicated, in a new slice.
func Scopes(scopes []string, public bool) ([]string, error) {
	if public && len(scopes) > 0 {
		return nil, errors.New("a public resource or template cannot require scopes")
	}
	for _, sc := range scopes {
		if !principal.ValidScope(sc) {
			return nil, errors.New("invalid scope: scopes are 1*( %x21 / %x23-5B / %x5D-7E ) (RFC 6749 §3.3)")
		}
	}
	out := slices.Clone(scopes)
	slices.Sort(out)
	return slices.Compact(out), nil
}
