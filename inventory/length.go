package inventory

import (
	"github.com/mcpkit/mcpkit/internal/display"
	"github.com/mcpkit/mcpkit/inventory/internal/contract"
)

// ClipName returns name clipped to the longest name a listed entry may
// have (512 UTF-16 code units, the seed's limit), ending in "…" when it
// was clipped, never splitting a rune: a List callback over titles the
// application does not control can pass every title through it, so that
// one long title never makes the caller's whole list fail. It also
// replaces each character of the name rule (control, format,
// bidirectional, default-ignorable: see the package documentation) and
// each byte that is not UTF-8 with U+FFFD, which a name may hold: the
// client sees that something was there, and the name passes for no
// other (List and Search do the same to what a callback returns). Names
// within the limit without such characters are returned unchanged.
func ClipName(name string) string {
	return contract.Clip(display.Defuse(name), contract.MaxNameLen)
}
