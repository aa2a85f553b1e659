package inventory

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/internal/callback"
)

// Errors the transport maps to responses. Everything Inventory returns is
// one of these, an [*principal.ScopeError], a [*CursorError], a [*ParamsError],
// or [ErrInternal].
var (
	// ErrNotFound: no such resource, or the caller may not see it (the two
	// look the same). JSON-RPC -32002 (legacy) or -32602 (modern), with
	// data.uri.
	ErrNotFound = errors.New("inventory: resource not found")

	// ErrInternal: an application callback failed, panicked, timed out or
	// broke the contract, or a page could not be assembled. The details are
	// in the operator log; the client gets JSON-RPC -32603 with a generic
	// message. Inventory returns this very value, never a wrapped cause.
	ErrInternal = errors.New("inventory: internal error")
)

// Cursor failure reasons, the values of CursorError.Reason.
const (
	ReasonInvalid = "invalid"
	ReasonExpired = "expired"
)

// CursorError reports a cursor the server will not continue from: forged,
// tampered, issued to another caller or by another deployment or process
// ("invalid"), or older than the traversal lifetime ("expired"). JSON-RPC
// -32602 with data.reason; the client starts the listing again.
type CursorError struct {
	Reason string // ReasonInvalid or ReasonExpired
}

func (e *CursorError) Error() string {
	if e.Reason == ReasonExpired {
		return "inventory: expired cursor"
	}
	return "inventory: invalid cursor"
}

// ParamsError reports invalid request parameters: template variables
// rejected by Validate rules, an unknown completion reference or argument.
// Problems name variables but never echo values. JSON-RPC -32602.
type ParamsError struct {
	Problems []string
}

func (e *ParamsError) Error() string {
	return "inventory: invalid params: " + strings.Join(e.Problems, "; ")
}

// Rule names a rule of the list contract that a callback broke, or how a
// callback failed: the value of ContractError.Rule and of the "rule"
// attribute of operator log records.
type Rule string

// The rules of the list contract, and the ways a callback can fail.
const (
	RuleTooManyEntries  Rule = "too-many-entries"         // more than Limit entries
	RuleHasMoreEmpty    Rule = "has-more-without-entries" // HasMore with no entry
	RuleKeyLength       Rule = "key-length"               // key empty or over 256 bytes
	RuleKeyCharset      Rule = "key-charset"              // key byte outside 0x21–0x7E
	RuleKeyOrder        Rule = "key-order"                // key not greater than the previous one
	RuleKeyAfter        Rule = "key-not-after"            // first key not greater than After
	RuleURIEmpty        Rule = "uri-empty"                // empty URI
	RuleURILength       Rule = "uri-length"               // URI over 2048 UTF-16 code units
	RuleURIMatch        Rule = "uri-template-mismatch"    // URI does not match the template
	RuleURIDuplicate    Rule = "uri-duplicate"            // URI twice in one page
	RuleNameEmpty       Rule = "name-empty"               // empty name
	RuleNameLength      Rule = "name-length"              // name over 512 UTF-16 code units (see ClipName)
	RuleNameInvalid     Rule = "name-invalid"             // name not UTF-8, or with a character of the name rule (see the package documentation); reported by ValidatePage and New, escaped by List and Search
	RuleMIMELength      Rule = "mime-length"              // MIME type over 128 characters
	RuleMIMESyntax      Rule = "mime-syntax"              // MIME type not type/subtype[; params]
	RuleCallbackError   Rule = "callback-error"           // the callback returned an error
	RuleCallbackPanic   Rule = "callback-panic"           // the callback panicked
	RuleDeadline        Rule = "deadline"                 // the callback failed after its context ended
	RuleEntryTooLarge   Rule = "entry-too-large"          // one entry cannot fit in an empty page
	RuleContentsInvalid Rule = "contents-invalid"         // a read handler returned unusable contents
)

// Log-only classifications of failures that are not a source's fault.
const (
	ruleInternal   Rule = "internal"    // the kit itself failed (not expected)
	ruleGrantStore Rule = "grant-store" // the grants.Store returned an error
)

// ContractError reports the first rule a list callback's page broke.
// It names the source, the rule and the entry index, never the entry's
// contents. [ValidatePage] returns it; Inventory logs it and returns
// [ErrInternal] to the transport.
type ContractError struct {
	Source string // the template name
	Rule   Rule   // one of the Rule constants
	Entry  int    // index of the offending entry in the page, or -1 for the page
}

func (e *ContractError) Error() string {
	if e.Entry < 0 {
		return fmt.Sprintf("inventory: list source %q broke the contract: %s", e.Source, e.Rule)
	}
	return fmt.Sprintf("inventory: list source %q broke the contract: %s at entry %d", e.Source, e.Rule, e.Entry)
}

// panicError carries a recovered callback panic to the logger.
type panicError = callback.PanicError
