package budget

import "github.com/mcpkit/mcpkit/internal/jsonstrict"

// AppendString appends s to dst as a JSON string. Like encoding/json it
// replaces invalid UTF-8 with U+FFFD and escapes control characters, the
// quote, the backslash, U+2028 and U+2029; unlike encoding/json it leaves
// '<', '>' and '&' alone. It allocates only when dst must grow.
//
// It is the kit's one JSON string encoder, the one jsonrpc writes error
// messages and ids with: runs of bytes that need no escaping are copied
// eight bytes at a time.
func AppendString(dst []byte, s string) []byte {
	return jsonstrict.AppendString(dst, s)
}
