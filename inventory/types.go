package inventory

import (
	"context"

	"github.com/mcpkit/mcpkit/principal"
)

// Access says who may list and read a resource or template.
type Access uint8

const (
	// Protected (the zero value) requires an authenticated caller holding
	// every RequiredScopes entry. It is the default so that a forgotten field
	// fails closed.
	Protected Access = iota
	// Public admits anonymous callers.
	Public
)

// String returns "protected" or "public".
func (a Access) String() string {
	switch a {
	case Protected:
		return "protected"
	case Public:
		return "public"
	}
	return "invalid"
}

// Discovery decides which templates resources/templates/list shows.
type Discovery uint8

const (
	// DiscoveryOpen (the zero value) lists every discoverable template to
	// every caller, protected ones included: URI patterns are not secrets,
	// and seeing one grants nothing.
	DiscoveryOpen Discovery = iota
	// DiscoveryProtected lists a protected template only to an
	// authenticated caller holding its RequiredScopes.
	DiscoveryProtected
)

// Owner says whose records a protected template serves: the identity its
// List, Read and Complete callbacks key on. A caller without that identity
// is never handed to them — the template is skipped by resources/list,
// and its URIs and completions look unknown — so a callback never sees an
// empty identity and never falls back to an unrestricted query.
type Owner uint8

const (
	// OwnedBySubject (the zero value): the signed-in user's records,
	// keyed on Principal.Subject. Callers without a subject, such as
	// client-credentials and service tokens, do not reach the callbacks.
	OwnedBySubject Owner = iota
	// OwnedByClient: the client application's records, keyed on
	// Principal.ClientID (a client-owned inventory, which several users of
	// one client share). Callers without a client id do not reach the
	// callbacks.
	OwnedByClient
)

// String returns "subject" or "client".
func (o Owner) String() string {
	switch o {
	case OwnedBySubject:
		return "subject"
	case OwnedByClient:
		return "client"
	}
	return "invalid"
}

// has reports whether caller carries the identity o keys on.
func (o Owner) has(caller *principal.Principal) bool {
	if caller == nil {
		return false
	}
	if o == OwnedByClient {
		return caller.ClientID != ""
	}
	return caller.Subject != ""
}

// Annotations are the optional MCP resource annotations.
type Annotations struct {
	// Audience holds "user" and/or "assistant".
	Audience []string
	// Priority is between 0 and 1 (1 = most important); nil omits it.
	Priority *float64
	// LastModified is an RFC 3339 / ISO 8601 timestamp.
	LastModified string
}

// Resource is a static resource: one fixed URI, listed before every list
// source's entries to every caller allowed to see it.
type Resource struct {
	URI, Name, Title, Description, MIMEType string
	// Size is the size of the raw contents in bytes; 0 omits it.
	Size        int64
	Annotations *Annotations
	// Access is Protected unless set to Public. A protected static resource
	// is listed and readable only by an authenticated caller holding every
	// RequiredScopes entry.
	Access         Access
	RequiredScopes []string
	// Gates names gates (see [Gate]) the caller must pass, besides
	// Options.GlobalGates, to see the resource at all: a caller who does
	// not pass them neither lists nor reads it (not found).
	Gates []string
	// Read returns the contents. It is required; see [TextReader] and
	// [BlobReader] for constant contents.
	Read ReadFunc
}

// Template is a resource template: a family of URIs described by an
// RFC 6570 URI template (see the package documentation for the supported
// subset).
type Template struct {
	// Name identifies the template; it must be unique, and it names the
	// source in operator logs.
	Name, Title, Description string
	URITemplate              string
	// MIMEType is listed with the template, and given to listed entries
	// that leave theirs empty.
	MIMEType string
	// Access is Protected unless set to Public.
	Access Access
	// Owner says whose records a protected template serves (see [Owner]):
	// the subject's unless set to OwnedByClient. It is ignored for a
	// Public template, whose callbacks may get an anonymous caller.
	Owner Owner
	// Hidden templates are readable but not listed by
	// resources/templates/list; they cannot have a List callback.
	Hidden         bool
	RequiredScopes []string
	// Gates names gates (see [Gate]) the caller must pass, besides
	// Options.GlobalGates, to see the template at all: in
	// resources/templates/list, as a list source, in reads of its URIs
	// and in completion.
	Gates []string
	// Validate holds per-variable rules run on the percent-decoded value
	// before Read. A rule's error text is never shown to the client; the
	// client learns which variable was rejected.
	Validate map[string]func(value string) error
	// Read is required. It receives the principal and must apply record
	// ownership: a URI that was listed earlier grants nothing.
	Read ReadFunc
	// List, when set, makes the template a list source of resources/list.
	// Only a Protected template that is not Hidden may have one.
	List ListFunc
	// Complete holds per-variable completion callbacks.
	Complete map[string]CompleteFunc
	// Search, when set, makes the template a search source of
	// [Inventory.Search] (the search and fetch tools of mcphttp's tools
	// bridge). Like List, it is allowed only on a Protected template that
	// is not Hidden, and it must put record ownership in its query.
	Search SearchFunc
}

// ReadRequest is what a ReadFunc receives.
type ReadRequest struct {
	// URI is the requested URI, exactly as the client sent it.
	URI string
	// Params holds the template's variables, percent-decoded; nil for a
	// static resource.
	Params map[string]string
	// Principal is the caller; nil means anonymous (possible only for a
	// Public resource or template). It is the kit's own: read it, do not
	// modify it.
	Principal *principal.Principal
}

// ReadFunc returns the contents of a resource. Returning [ErrNotFound] (or
// an error wrapping it) makes the client see "resource not found"; any other
// error is logged and the client sees a generic internal error.
//
// Returning a [*principal.ScopeError] says this one record needs a scope
// the caller lacks (proj:7 of a template whose RequiredScopes cannot name
// every project): the caller gets the 403 insufficient_scope challenge
// naming its Required scopes, as for a static RequiredScopes miss, so a
// client can step up (see "Scopes per record" in the package
// documentation).
type ReadFunc func(ctx context.Context, req ReadRequest) ([]Contents, error)

// Contents is one item of a resources/read result: text when Blob is nil,
// binary (sent base64-encoded) otherwise.
type Contents struct {
	URI, MIMEType, Text string
	Blob                []byte
	// Title is the resource's display title, optional: resources/read
	// never sends it (MCP contents have none), so it is not checked
	// here; the fetch tool of mcphttp's tools bridge reports it, clipped
	// like a name (see ClipName), or when it is empty or not printable
	// UTF-8 the resource's registered title (a static resource's Title or
	// Name, a template's Title), else the URI.
	Title string
}

// ListRequest is what a ListFunc receives.
type ListRequest struct {
	// After is the exclusive lower bound on keys; empty on the first call.
	After string
	// Limit is the most entries the page may hold, 1..100.
	Limit int
	// Principal is the authenticated caller, never nil here: a list
	// source is asked only for a signed-in caller (an anonymous one gets
	// principal.ErrUnauthenticated from [Inventory.List] first). Query
	// only records it may see. The identity the template's Owner names
	// (Subject by default, or ClientID) is never empty here. It is the
	// kit's own: read it, do not modify it.
	Principal *principal.Principal
}

// ListFunc returns the next at most Limit records of the caller, in
// strictly increasing key order, strictly after After. See the package
// documentation for the complete contract.
//
// Returning a [*principal.ScopeError] says this one record needs a scope
// the caller lacks (proj:7 of a template whose RequiredScopes cannot name
// every project): the caller gets the 403 insufficient_scope challenge
// naming its Required scopes, as for a static RequiredScopes miss, so a
// client can step up (see "Scopes per record" in the package
// documentation).
type ListFunc func(ctx context.Context, req ListRequest) (Page, error)

// Page is one answer of a ListFunc.
type Page struct {
	Entries []Entry
	// HasMore says that records after the last entry may exist. It
	// requires at least one entry.
	HasMore bool
}

// Entry is one listed record: its ordering key and the resource metadata
// the client sees.
type Entry struct {
	// Key is the record's unique, immutable ordering key: 1–256 bytes of
	// 0x21–0x7E. It never reaches the client (it travels sealed in cursors).
	Key string
	// URI must match the template and be unique in the traversal.
	URI string
	// Name is required (≤ 512 bytes).
	Name string
	// MIMEType is optional; empty inherits the template's.
	MIMEType string
}

// CompleteRequest is what a CompleteFunc receives.
type CompleteRequest struct {
	// Argument is the variable being completed, Value its partial value.
	Argument, Value string
	// Context holds previously resolved variables of the same template
	// (only names of the template's variables are passed on).
	Context map[string]string
	// Principal is the caller; nil means anonymous (possible only for a
	// Public template). It is the kit's own: read it, do not modify it.
	Principal *principal.Principal
}

// CompleteFunc suggests values for one variable of a template.
//
// Returning a [*principal.ScopeError] says this one record needs a scope
// the caller lacks (proj:7 of a template whose RequiredScopes cannot name
// every project): the caller gets the 403 insufficient_scope challenge
// naming its Required scopes, as for a static RequiredScopes miss, so a
// client can step up (see "Scopes per record" in the package
// documentation).
type CompleteFunc func(ctx context.Context, req CompleteRequest) (Completion, error)

// Completion is a completion result. The kit keeps at most 100 values
// and sets HasMore when it drops some.
type Completion struct {
	// Values are the suggestions, in the order to show them.
	Values []string
	// Total is the number of matches in all, when known. A callback that
	// returns every match may leave it zero: with HasMore false the kit
	// sets it to the number of values returned (before it drops any
	// beyond 100). A callback that returns only some sets HasMore and,
	// if it knows it, Total; zero with HasMore means the total is
	// unknown, and the kit raises a known Total to at least the number of
	// values returned. On the wire an unknown total is left out.
	Total int
	// HasMore says there are matches beyond Values.
	HasMore bool
}

// TextReader returns a ReadFunc for constant text contents: one item with
// the requested URI.
func TextReader(mimeType, text string) ReadFunc {
	return func(_ context.Context, req ReadRequest) ([]Contents, error) {
		return []Contents{{URI: req.URI, MIMEType: mimeType, Text: text}}, nil
	}
}

// BlobReader returns a ReadFunc for constant binary contents. It keeps b;
// the caller must not modify it afterwards.
func BlobReader(mimeType string, b []byte) ReadFunc {
	if b == nil {
		b = []byte{}
	}
	return func(_ context.Context, req ReadRequest) ([]Contents, error) {
		return []Contents{{URI: req.URI, MIMEType: mimeType, Blob: b}}, nil
	}
}
