// Package budget assembles one JSON response page under two limits: a
// number of items and an exact byte size of the whole response.
//
// A page is
//
//	head ‖ "[" item "," item … "]" ‖ trailer ‖ tail
//
// where head and tail are everything around the array (for an MCP
// resources/list response: the JSON-RPC envelope and the result members) and
// the trailer is an optional member that is only known once the page is full,
// such as `,"nextCursor":"…"`. Limits.Reserve bytes are kept free for the
// trailer from the start, so the page never has to be undone.
//
// Items arrive already encoded. [Page.Add] says whether the next one fits;
// [Page.Finish] returns the response bytes without re-encoding anything. The
// size of the result is exactly predictable ([Page.Size]), and an item that
// cannot fit even in an empty page is an [*ItemTooLargeError], never an empty
// page or an endless loop.
//
//	p, err := budget.New(head, tail, budget.Limits{MaxItems: 50, MaxBytes: 1 << 20, Reserve: 80})
//	for _, item := range encoded {
//		if err := p.Add(item); errors.Is(err, budget.ErrFull) {
//			break // the rest goes on the next page
//		} else if err != nil {
//			return err // *ItemTooLargeError
//		}
//	}
//	body, err := p.Finish(trailer) // len(trailer) <= Reserve
//
// [AppendString] encodes a Go string as a JSON string for callers that build
// items by hand.
package budget
