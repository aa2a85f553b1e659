// Package jsonstrict is the kit's one strict JSON engine and its one JSON
// string encoder. jsonrpc reads messages with it, authn reads JOSE headers,
// JWT claims and introspection responses with it, and transports read
// params with its walker, so that every part of the kit sees the same
// document the same way, and no two parsers can disagree about it.
//
// # Strictness
//
// A document is accepted only when all of these hold, and rejected with
// the error named otherwise:
//
//   - It is exactly one JSON value (RFC 8259) with nothing but JSON white
//     space around it: no byte order mark, comments, trailing commas,
//     single quotes, NaN, leading zeros or trailing data ([ErrSyntax]).
//   - It is valid UTF-8 throughout, and no \u escape is a lone or reversed
//     surrogate ([ErrSyntax]). Nothing is repaired or replaced.
//   - Objects and arrays nest at most [Options.MaxDepth] deep, counting
//     the outermost as 1 ([ErrDepth], found at the first level too deep,
//     without reading further).
//   - No object has more than [Options.MaxMembers] members, when that is
//     set ([ErrMembers], found at the first member too many).
//   - No object, at any depth, repeats a member name ([ErrDuplicate]).
//     Names are compared after unescaping and after case folding as
//     encoding/json folds them when it matches struct fields (ASCII letters
//     fold to upper case, other runes to the smallest rune of their
//     simple-fold orbit), so "m\u0065thod" repeats "method", "URI" repeats
//     "uri" and "\u212aind" (KELVIN SIGN) repeats "kind". An object whose
//     names pass this rule means the same thing to this package, to gjson
//     (first wins), to encoding/json (case-insensitive, last wins) and to
//     peers such as mcp-go (case-insensitive).
//
// A syntax error anywhere wins over a duplicate name found earlier, so a
// document that is not JSON is always [ErrSyntax] (or [ErrDepth] or
// [ErrMembers], which stop the scan where they are found). Errors match
// these sentinels with [errors.Is]; their text is fixed and never holds
// input bytes.
//
// # Reading
//
// [Members] validates an object and calls a function for each of its
// top-level members, in order, with the exact (case-sensitive, unescaped)
// name and the member's [Value]; [Elements] does the same for the elements
// of an array, and [Parse] validates any document and returns its Value.
// A Value is a validated value's exact bytes: its [Value.Kind], its
// [Value.Raw] text, and, for strings, numbers and booleans, the decoded
// scalar ([Value.Str], [Value.AppendStr], [Value.EqualStr], [Value.Int],
// [Value.Bool]). Nested objects and arrays are read with [Value.Members]
// and [Value.Elements], which do not validate again (a Value is only ever
// made from validated bytes), or with Members and Elements on [Value.Raw],
// which do. Nothing uses reflection, and a walk over a small object
// allocates nothing.
//
// [AppendFold] gives a name's folded form, for callers that must match
// names the way encoding/json does (to find the case variants it would
// accept).
//
// The package-level functions use the default [Options] (depth 64, no
// member cap); methods on Options use others.
//
// # Writing
//
// [AppendString] writes a Go string as a JSON string, the way
// encoding/json does (invalid UTF-8 becomes U+FFFD; U+2028 and U+2029 are
// escaped) but without HTML escaping.
//
// Everything here is safe for concurrent use; nothing keeps state between
// calls.
package jsonstrict
