// Package jsonrpc reads and writes JSON-RPC 2.0 messages the way MCP uses
// them, strictly enough that no two parsers can disagree about what a
// message said.
//
// [Decode] validates a body in one pass over its bytes with the kit's
// strict JSON engine (not encoding/json, which matches names
// case-insensitively, lets the last duplicate win and replaces invalid
// UTF-8), the same engine authn reads tokens with, and returns a [Message]
// whose params and result are the raw, undecoded JSON, already found
// strict: no duplicate or case-variant member names at any depth, valid
// UTF-8 (mcphttp reads them by exact member name with the same engine).
// Responses are written from already-encoded results with
// [AppendResult], [ResultEnvelope] and [AppendError], without
// re-encoding.
//
//	msg, err := jsonrpc.Limits{}.Decode(body) // zero Limits: 4 MiB body, 256-byte id, batches of 100
//	var tooLarge *jsonrpc.TooLargeError
//	var rpcErr *jsonrpc.Error
//	switch {
//	case errors.As(err, &tooLarge):
//		// 413
//	case errors.As(err, &rpcErr):
//		w.Write(jsonrpc.AppendError(nil, msg.ID, rpcErr)) // msg.ID: echoed when it could be read
//	case msg.Kind == jsonrpc.KindRequest:
//		w.Write(jsonrpc.AppendResult(nil, msg.ID, result))
//	}
//
// # Strictness
//
// In this order:
//
//   - A body longer than the limit is a *[TooLargeError], before any other check.
//   - The body must be one JSON value (RFC 8259) with nothing but white space
//     around it, valid UTF-8 throughout, and no \u escape of a lone or
//     reversed surrogate; otherwise: [CodeParseError]. Nothing is repaired.
//   - Objects and arrays may nest at most [MaxDepth] (64) deep, counting the
//     message itself; deeper: [CodeInvalidRequest], found at the 65th level
//     without reading further.
//   - No object, at any depth, may repeat a member name. Names are compared
//     after unescaping and after case folding as encoding/json folds them,
//     so "m\u0065thod" repeats "method", and "URI" repeats "uri".
//   - The value must be an object (a batch array is [CodeInvalidRequest]
//     here; see [DecodeBatch]) with only the members jsonrpc, id, method,
//     params, result and error, spelled exactly so. A case variant of one
//     of them ("Method", "ID", "jſonrpc") is [CodeInvalidRequest] whether
//     or not the member itself is there too: peers such as mcp-go match
//     names case-insensitively and would read it as that member. A message
//     with a variant of id echoes no id.
//   - jsonrpc is the string "2.0". method is a non-empty string. params,
//     when present, is an object (MCP uses named params only). A request's
//     id is a string or an integer (no fraction, no exponent; any size; never
//     null). A result is an object; an error is an object with an integer
//     code, a string message and optionally data, and nothing else.
//   - An id's JSON text (quotes and escapes included) is at most
//     [Limits.MaxIDBytes] bytes, 256 by default; a longer id makes the
//     message [CodeInvalidRequest] and is not echoed.
//   - method and id: a request. method and no id: a notification. result or
//     error (not both), no method, no params, and an id (null only with an
//     error): a response. Anything else is [CodeInvalidRequest].
//
// Every rule but the first three is checked only once the whole body is
// known to be JSON, so a body that is not JSON is always a parse error.
// Errors from Decode carry the fixed messages "Parse error" and "Invalid
// Request" and never any part of the input; only the id is echoed.
//
// Ids are kept as the exact text received: 123456789012345678901234567890
// and "\u00e9" come back byte for byte in the response.
//
// # Batches
//
// The 2025-03-26 protocol allows a body to be an array of messages; later
// ones do not. Callers that negotiated 2025-03-26 check [IsBatch] and call
// [DecodeBatch], which applies the same rules to each element (at most
// [MaxBatch]) and returns one [BatchItem] per element.
//
// # Body memory
//
// [Decoder], [Limits.ReadBody] and [Limits.ReadBodyFor] (and
// [Limits.ReadRawFor], for a server's other routes) read a body into
// storage that grows with the bytes received, charged to the caller's
// account in a [BodyBudget]: a client address's in the anonymous pool, a
// principal's in the signed-in pool. No crowd takes a whole pool: each
// keeps a reserve for accounts holding little (a caller holding nothing
// is admitted whoever holds the rest), and the rest is shared max-min,
// each account's share shrinking as more accounts hold some. Its limits:
// memory held is not taken back (a newcomer's large body may wait while
// a crowd holds the unreserved part), and a crowd of more accounts than
// the reserve has light amounts (about 120 identities, or 128 addresses,
// with the default budget) fills the reserve too. A refusal is 503 with
// Retry-After and a rate-limited WARN line naming the pool, never the
// caller. See [BodyBudget].
//
// # Error codes
//
//	CodeParseError                 -32700  the body is not JSON
//	CodeInvalidRequest             -32600  JSON, but not a valid message
//	CodeMethodNotFound             -32601
//	CodeInvalidParams              -32602
//	CodeInternalError              -32603  send no details
//	CodeResourceNotFound           -32002  MCP, up to 2025-11-25
//	CodeHeaderMismatch             -32020  MCP 2026-07-28
//	CodeMissingClientCapability    -32021  MCP 2026-07-28
//	CodeUnsupportedProtocolVersion -32022  MCP 2026-07-28
//
// [Error.Is] compares codes: errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}).
//
// All functions are safe for concurrent use. Decoded Params, Result and
// Error.Data alias the input bytes.
package jsonrpc
