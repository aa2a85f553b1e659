package jsonstrict

import "errors"

// DefaultMaxDepth is the nesting limit of the zero [Options].
const DefaultMaxDepth = 64

// Options are the bounds of a scan. The zero value is the default: depth
// [DefaultMaxDepth], no member cap. Options are plain values: copy them
// freely; their methods are safe for concurrent use.
type Options struct {
	// MaxDepth is the deepest nesting of objects and arrays allowed,
	// counting the outermost container as 1 (so {"a":[1]} has depth 2).
	// Zero or less means DefaultMaxDepth. Deeper documents fail with
	// ErrDepth.
	MaxDepth int

	// MaxMembers is the largest number of members any one object may have.
	// Zero or less means no cap (the size of the input is the only bound).
	// A bigger object fails with ErrMembers.
	MaxMembers int
}

// The classes of failure. Every error of this package matches exactly one
// of them with errors.Is; the error's text is fixed and never holds input.
var (
	// ErrSyntax: not exactly one RFC 8259 JSON value with optional white
	// space around it, invalid UTF-8, or a lone surrogate escape.
	ErrSyntax = errors.New("jsonstrict: not valid JSON")
	// ErrDepth: objects and arrays nested deeper than Options.MaxDepth.
	ErrDepth = errors.New("jsonstrict: nesting too deep")
	// ErrMembers: an object with more members than Options.MaxMembers.
	ErrMembers = errors.New("jsonstrict: too many members")
	// ErrDuplicate: an object repeats a member name (after unescaping and
	// case folding, see AppendFold).
	ErrDuplicate = errors.New("jsonstrict: duplicate member name")
	// ErrKind: valid JSON, but not the kind of value asked for (Members of
	// an array, Elements of an object).
	ErrKind = errors.New("jsonstrict: unexpected kind of value")
)

// ruleError is one failure: a class and a fixed reason.
type ruleError struct {
	class  error
	reason string
}

func (e *ruleError) Error() string {
	if e.reason == "" {
		return e.class.Error()
	}
	return e.class.Error() + ": " + e.reason
}
func (e *ruleError) Unwrap() error { return e.class }

// The failures, allocated once: returning one costs nothing.
var (
	errEnd                = &ruleError{ErrSyntax, "unexpected end"}
	errByte               = &ruleError{ErrSyntax, "unexpected byte"}
	errLiteral            = &ruleError{ErrSyntax, "bad literal"}
	errNumber             = &ruleError{ErrSyntax, "bad number"}
	errUnterminated       = &ruleError{ErrSyntax, "unterminated string"}
	errEscape             = &ruleError{ErrSyntax, "bad escape"}
	errControl            = &ruleError{ErrSyntax, "control character in string"}
	errUTF8               = &ruleError{ErrSyntax, "invalid UTF-8"}
	errUnterminatedArray  = &ruleError{ErrSyntax, "unterminated array"}
	errArraySep           = &ruleError{ErrSyntax, "expected , or ]"}
	errName               = &ruleError{ErrSyntax, "expected member name"}
	errColon              = &ruleError{ErrSyntax, "expected :"}
	errUnterminatedObject = &ruleError{ErrSyntax, "unterminated object"}
	errObjectSep          = &ruleError{ErrSyntax, "expected , or }"}
	errTrailing           = &ruleError{ErrSyntax, "bytes after the value"}
	errDeep               = &ruleError{ErrDepth, ""}
	errTooMany            = &ruleError{ErrMembers, ""}
	errDup                = &ruleError{ErrDuplicate, ""}
	errNotObject          = &ruleError{ErrKind, "not an object"}
	errNotArray           = &ruleError{ErrKind, "not an array"}
)

func (o Options) scanner(data []byte) scanner {
	s := scanner{data: data, maxDepth: o.MaxDepth, maxMembers: o.MaxMembers}
	if s.maxDepth <= 0 {
		s.maxDepth = DefaultMaxDepth
	}
	return s
}

// finish checks what follows the top-level value and returns the
// outcome of the scan, worst first: a fatal failure, trailing bytes, a
// duplicate name.
func (s *scanner) finish(ok bool) error {
	if s.stopped {
		return nil
	}
	if !ok {
		return s.fatal
	}
	s.ws()
	if s.i != len(s.data) {
		return errTrailing
	}
	return s.dup
}

// other scans a top-level value that is not of the kind asked for, so
// that its error is the right one: a syntax, depth or members error if it
// has one, else notKind (a duplicate name inside does not matter then).
func (s *scanner) other(notKind error) error {
	if err := s.finish(s.value(0)); err != nil && err != s.dup {
		return err
	}
	return notKind
}

// Members validates obj, which must be one JSON object, and calls fn for
// each of its members in order, with the member's name and value. name is
// the exact name, unescaped (case-sensitive: "URI" is not "uri"); it
// aliases obj or a scratch buffer and is valid only during the call. v
// aliases obj.
//
// fn is called as the scan goes, after each member's value has been
// validated, so a later part of obj can still fail: on any error, discard
// what fn collected. When fn returns false, Members stops at once and
// returns nil without looking at the rest of obj. Otherwise the result is
// nil, or an error matching ErrSyntax, ErrDepth, ErrMembers, ErrDuplicate
// (fn was still called for every member) or ErrKind (obj is JSON, but not
// an object; fn was never called).
//
// A walk over bytes that were already validated (the params of a message
// decoded by jsonrpc) validates them again, at about the speed of the
// first time; it allocates nothing unless a name is escaped. A nested
// object given as a Value is walked without validating again by
// [Value.Members].
func (o Options) Members(obj []byte, fn func(name []byte, v Value) bool) error {
	s := o.scanner(obj)
	s.ws()
	if s.at() != '{' {
		return s.other(errNotObject)
	}
	return s.finish(s.object(1, fn))
}

// Elements validates arr, which must be one JSON array, and calls fn for
// each of its elements in order. It follows the rules of [Options.Members]:
// fn is called as the scan goes, returning false stops at once (the
// result is nil), and a later part of arr can still fail. A value that is
// JSON but not an array gives ErrKind.
func (o Options) Elements(arr []byte, fn func(v Value) bool) error {
	s := o.scanner(arr)
	s.ws()
	if s.at() != '[' {
		return s.other(errNotArray)
	}
	return s.finish(s.array(1, fn))
}

// Parse validates data, which must be one JSON value of any kind, and
// returns it. The Value aliases data, without the white space around it.
// On error, the Value is zero.
func (o Options) Parse(data []byte) (Value, error) {
	s := o.scanner(data)
	s.ws()
	start := s.i
	ok := s.value(0)
	end := s.i
	if err := s.finish(ok); err != nil {
		return Value{}, err
	}
	return Value{data[start:end]}, nil
}

// Members is [Options.Members] with the default Options.
func Members(obj []byte, fn func(name []byte, v Value) bool) error {
	return Options{}.Members(obj, fn)
}

// Elements is [Options.Elements] with the default Options.
func Elements(arr []byte, fn func(v Value) bool) error {
	return Options{}.Elements(arr, fn)
}

// Parse is [Options.Parse] with the default Options.
func Parse(data []byte) (Value, error) {
	return Options{}.Parse(data)
}
