package inventory

import (
	"fmt"

	"github.com/mcpkit/mcpkit/inventory/internal/uritemplate"
)

// Expand fills a URI template with string values and returns the URI, by
// RFC 6570 (levels 1–4) exactly, so that the URI reads back as the same
// values. Every variable is a string: a variable missing from values is
// undefined (its part of the expression is left out), an empty string is
// defined and empty; values of variables the template does not have are
// ignored. Lists and associative arrays are not values here (so {x*}
// expands as {x}: RFC 6570 §2.4.2 explodes only composite values); see
// the URI templates section of the package documentation.
//
// One byte may differ from RFC 6570's own expansion: an unreserved
// character of a value that could also start what follows the value in the
// template (the '-' of "{a}-{b}", the '.' of "{name}.{ext}" or of
// "{.x,y}") is percent-encoded, an equivalent URI (RFC 3986 §6.2.2.2),
// so that matching cannot end the value early.
//
// Expand fails, rather than returning a URI that would not read back as
// the values: on a template New refuses; on a variable of {x} or {+x} (also
// in a list such as {x,y}) that is missing or empty; on a value that is
// not valid UTF-8; on a value of {+x} or {#x} holding "%" and two
// hexadecimal digits (RFC 6570 copies such a triplet into the URI, so the
// value would read back decoded: give these expressions the text itself);
// on values that would read back otherwise (a value of {/x,y} given for y
// but not x reads back as x; a '/' in a of {+a}/{+b} cannot be told from
// the separator); and on a URI longer than 2048 characters. A value
// longer than a prefix modifier allows ({x:3}) is cut, as RFC 6570 says,
// and reads back cut.
func Expand(uriTemplate string, values map[string]string) (string, error) {
	t, err := uritemplate.Parse(uriTemplate)
	if err != nil {
		return "", fmt.Errorf("inventory: %w", err)
	}
	return t.Expand(values)
}
