// Package inventory is the registry behind an MCP resource server: static
// resources, resource templates, and list sources that show each signed-in
// caller their own records in resources/list, page by page, straight from
// the application's database.
//
// An application registers [Resource] values (fixed URIs) and [Template]
// values (URI patterns with a read handler) once, with [New]. The registry
// is immutable; the records behind it may change at any time. The transport
// (package mcphttp) calls [Inventory.List], [Inventory.Templates],
// [Inventory.Read] and [Inventory.Complete] with the authenticated caller
// and puts what they return on the wire; it maps the errors (see Errors
// below). The inventory decides in Go values only — list items ([Item]),
// the next cursor, contents, template descriptors — and knows no JSON:
// the byte budget is the transport's, which says item by item whether
// the next one still fits (a fit function that encodes it into the
// transport's own buffer), while the inventory decides which items, in
// which order, and the cursor after the last one accepted. Every entry a
// callback returns is validated just before it is offered. An
// application's own code and tests call the same methods:
//
//	next, err := inv.List(ctx, &alice, "", func(it *inventory.Item) bool {
//		fmt.Println(it.URI, it.Name)
//		return true // it fits
//	})
//	// next continues the traversal ("" on the last page).
//
// What each caller may see can change at run time through gates and
// per-subject grants (see Gates and grants).
//
// Every callback request names the caller the same way, as go-sdk's
// TokenInfo does: Principal *principal.Principal, nil for an anonymous
// caller. [ListRequest] and [SearchRequest] never carry nil (list and
// search sources are asked only for a signed-in caller); [ReadRequest]
// and [CompleteRequest] carry nil only for a Public resource or
// template; [Policy] receives nil for an anonymous caller. The principal
// is the kit's own: read it, never modify it.
//
// # The list contract
//
// A protected, discoverable template may have a List callback ([ListFunc]).
// It answers one bounded, ordered question: "the next at most Limit records
// of this caller, strictly after key After". The kit merges its answers
// with the static resources and with other sources, validates them, fills
// pages under an item and a byte limit, and seals the position in an
// opaque cursor. The callback must:
//
//   - query only the caller's records, with ownership in the query itself:
//     req.Principal.Key() for a template owned by the subject (the
//     default: the subject itself with one trusted issuer, issuer-qualified
//     with several), req.Principal.ClientKey() for one declared
//     Owner: OwnedByClient (a client-owned inventory; never ClientID for
//     user-owned data). The kit never calls the template for a caller
//     without that identity — a client-credentials token has no subject —
//     so the identity is never empty there, and a callback never falls
//     back to an unrestricted query. A server that trusts several issuers
//     keys its records on req.Principal.Key() (or ClientKey()), the
//     issuer-qualified identity, so that equal subjects of two issuers
//     never share records; with one issuer, Key() is the subject;
//   - give every record a unique, immutable key of 1–256 bytes in
//     0x21–0x7E, including its tie-breaker, and return entries in strictly
//     increasing byte order of keys, the first one strictly greater than
//     After (the database must compare the same way: byte order, such as
//     COLLATE "C" in PostgreSQL or BINARY in SQLite);
//   - return at most Limit entries, reading Limit+1 rows to learn whether
//     more exist (HasMore), and never fetch the whole collection to slice
//     it in memory, nor use OFFSET;
//   - return URIs (≤ 2048 characters) that match the template and that its
//     Read handler serves, unique across the traversal; a Name (1–512
//     characters of UTF-8 without the characters of the name rule, see
//     below; [ClipName] clips a longer title); a MIMEType that is empty (the template's is used)
//     or "type/subtype" (RFC 6838 names, optional parameters, ≤ 128
//     characters). Lengths are counted as the contract's seed counts them:
//     in UTF-16 code units, the length of a JavaScript string (an emoji
//     counts two, any other character one);
//   - stop backend work when ctx is done: it carries the request's
//     cancellation and a deadline (Options.CallbackTimeout, default 10 s,
//     or the request's own deadline if earlier).
//
// Names cannot spoof. One rule, from Unicode properties, says which
// characters no name or title may hold: the control characters (Cc) and
// the line and paragraph separators (U+2028, U+2029); the format
// characters (Cf), among them every bidirectional control (U+061C,
// U+200E–U+200F, U+202A–U+202E, U+2066–U+2069) and the zero-width ones
// (U+200B–U+200D, U+2060, U+FEFF, the soft hyphen U+00AD); and the
// Default_Ignorable_Code_Points, which renderers show as nothing (the
// Hangul fillers U+115F, U+1160, U+3164, U+FFA0, U+034F, U+17B4–U+17B5,
// the variation selectors U+180B–U+180F, U+FE00–U+FE0F,
// U+E0100–U+E01EF, the tags U+E0000–U+E0FFF). "invoice_\u202Efdp.exe"
// would show as "invoice_exe.pdf". A description may also break lines
// (tab, CR, LF, U+2028, U+2029). What the application registers is
// checked at start-up: New refuses such a resource or template name,
// title or description. What it lists is escaped on the way out: a listed
// entry's or a search hit's name holding such a character, or bytes that
// are not UTF-8, is served with U+FFFD in their place, so that a title
// stored before the rule existed, or by code that skips it, never makes
// the caller's list or search fail (and shows that something was there);
// [ValidatePage] and package inventorytest still report it to the
// developer (rule name-invalid), and [ClipName] does the same escaping
// for a List callback that wants it explicit. The price: names cannot
// hold emoji sequences joined by U+200D (families, professions with a
// skin tone), emoji with the presentation selector U+FE0F, flag tags,
// soft hyphens, nor the U+200C that some Persian and Indic words need:
// they show U+FFFD where the character was.
//
// Every page is checked with [ValidatePage]. A violation, an error, a
// panic or a missed deadline gives the client a generic internal error and
// the operator an Error-level slog record naming the method, the source
// (template name), the rule and the entry index (never URIs, names or the
// caller's token). Package inventorytest walks a callback with several page
// sizes and reports every violation from your own tests.
//
// A source backed by SQL (PostgreSQL syntax; the index serves the query, so
// a page costs the same on page 1 and page 10,000):
//
//	// CREATE TABLE documents (
//	//     id         text PRIMARY KEY,
//	//     owner      text NOT NULL,
//	//     order_key  text COLLATE "C" NOT NULL, -- e.g. created_at (RFC 3339 UTC) || '/' || id
//	//     title      text NOT NULL,
//	//     body       text NOT NULL
//	// );
//	// CREATE UNIQUE INDEX documents_owner_key ON documents (owner, order_key COLLATE "C");
//
//	func listDocuments(db *sql.DB) inventory.ListFunc {
//		return func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
//			owner := req.Principal.Key() // the subject; issuer-qualified with several issuers
//			if owner == "" {
//				return inventory.Page{}, errors.New("documents: no subject") // never list everything
//			}
//			rows, err := db.QueryContext(ctx, `
//				SELECT order_key, id, title FROM documents
//				WHERE owner = $1 AND order_key > $2
//				ORDER BY order_key COLLATE "C"
//				LIMIT $3 + 1`, owner, req.After, req.Limit)
//			if err != nil {
//				return inventory.Page{}, err
//			}
//			defer rows.Close()
//			var page inventory.Page
//			for rows.Next() {
//				var key, id, title string
//				if err := rows.Scan(&key, &id, &title); err != nil {
//					return inventory.Page{}, err
//				}
//				if len(page.Entries) == req.Limit { // the extra row: more exist
//					page.HasMore = true
//					break
//				}
//				uri, err := inventory.Expand("docs://documents/{id}", map[string]string{"id": id})
//				if err != nil {
//					return inventory.Page{}, err
//				}
//				page.Entries = append(page.Entries, inventory.Entry{Key: key, URI: uri, Name: title})
//			}
//			return page, rows.Err()
//		}
//	}
//
// Its Read handler applies the same ownership: "WHERE id = $1 AND owner =
// $2" with the principal's subject, returning [ErrNotFound] when no row
// comes back. A URI that was listed earlier grants nothing.
//
// # Search
//
// A protected, discoverable template may also have a Search callback
// ([SearchFunc]): "at most Limit records of this caller matching Query,
// best first", with ownership in the query exactly as in List. It backs
// [Inventory.Search], which the search and fetch tools of mcphttp's tools
// bridge call. A search source is usable by the same rule as a list source
// (the Owner's identity, RequiredScopes, gates and overrides); usable
// sources are asked in registration order, each for the room left. Every
// answer is checked like a list page (at most Limit hits, URIs that match
// the template and are unique, names of 1–512 characters); a violation is
// an internal error and an operator log record. A hit grants nothing:
// whatever reads it goes through [Inventory.Read] again. [Inventory.Reach]
// tells a transport which operations a caller may use at all.
//
// # resources/list
//
// Static resources the caller may see come first, in registration order,
// then the entries of each list source the caller may use, in registration
// order. Options.PageSize (default 50, at most 100) bounds both together;
// a callback's Limit is the room left in the page, and a source that ends
// with room to spare hands over to the next one in the same page. The
// transport's fit function ends a page where its byte budget does (mcphttp
// keeps the whole response, envelope, _meta and the longest possible
// nextCursor included, within its MaxResultBytes); an item it refuses on
// an empty page is an internal error, never an empty page or an endless
// loop.
//
// Once a list source is registered, every resources/list needs an
// authenticated caller ([principal.ErrUnauthenticated]); sources whose
// RequiredScopes the caller lacks are skipped, and a caller who may use
// none gets an [*principal.ScopeError] naming the scopes of the first source
// that misses the fewest. Without list sources, anonymous callers see the
// public static resources. Gates (below) hide statics and sources too.
//
// A page costs the same at any position. Without gates, the statics are
// indexed by access and scope set, so a cursor's place among the statics a
// caller may see is found by binary search over the few sets the caller
// holds, not by a walk over the statics before it; the cost grows with the
// number of distinct scope sets, not of statics. With gates, a page still
// decides every static for the caller (its cursor is bound to those
// decisions), in time linear in the statics. At most 1,048,576 static
// resources (1<<20) are registered.
//
// # Cursors
//
// nextCursor is present only when more may follow (never ""). It is sealed
// with package sealedcursor (AES-256-GCM) and holds only the position (the
// static offset or the source and its last key) and the time of the
// traversal's first page. It is bound, as associated data, to the method,
// the caller's client id, subject, sorted scopes and audience (or to
// "anonymous"), and to a fingerprint of the registry and page settings: a
// cursor replayed by another caller, after a scope change, or against a
// registry with other sources or page settings, fails with
// [*CursorError]{Reason: "invalid"}. In an inventory with gates or grants
// the binding also holds what the caller may see (one decision per static
// resource and list source; per template for resources/templates/list),
// so a cursor also fails as invalid after a grant or policy change that
// reveals or hides one of them. A traversal expires 15 minutes after
// its first page, however many pages follow ({Reason: "expired"}). The
// client starts again; the kit never restarts silently.
//
// By default the key is 32 random bytes drawn when the Inventory is built:
// nothing is stored, and cursors die with the process. Replicas behind a
// load balancer share a key ring instead: Options.Sealer =
// sealedcursor.New(sealedcursor.Options{Keys: ring}).
//
// Pages are live queries, not snapshots: a record inserted behind the
// cursor's key is not seen by that traversal, a deleted one disappears
// from later pages, and a record that exists for the whole traversal is
// listed exactly once.
//
// # URI templates
//
// Templates are RFC 6570 URI templates, levels 1 to 4: literals, and
// expressions with any operator — {x} (simple), {+x} (reserved), {#x}
// (fragment), {.x} (label), {/x} (path segment), {;x} (path-style
// parameter), {?x} (query), {&x} (query continuation) — each with one or
// more variables ({x,y}) and the modifiers :N (prefix) and * (explode).
// Variable names are RFC 6570 varnames (A-Z a-z 0-9 _ and %XX, joined by
// single dots: "tag", "page.size"). New refuses what RFC 6570 refuses
// (unbalanced braces, the operators = , ! @ | reserved for the future,
// malformed names or modifiers such as {x:0} {x:10000} {x*:3}, literal
// characters outside §2.1 such as space " ' < > \ ^ ` | and broken
// triplets), and what would make matching ambiguous: the empty template,
// one longer than 2048 characters or with more than 32 variables, a
// variable named twice, an expression without an operator character ({x},
// {+x}) directly after another expression ({a}{b}), and a literal starting
// with a percent-encoded triplet right after an expression.
//
// Every variable is one string: MCP reads, completion arguments and tool
// arguments carry one string per variable. Lists and associative arrays
// are not values (Expand takes a map of strings), so explode changes
// nothing (RFC 6570 §2.4.2 explodes only composite values): {/path*} is
// one segment, as {/path} is; a path of several segments is {+path}.
//
// A URI matches a template when string values expand to it by RFC 6570
// (up to the equivalences of RFC 3986 §6.2.2: case of hexadecimal digits,
// percent-encoded unreserved characters), and the values read from it
// expand back to it. This holds for resources/read, for a concrete URI as
// a completion reference, and for the URIs List and Search callbacks
// return. The rules where RFC 6570 leaves room:
//
//   - Characters. In {x} {.x} {/x} {;x} {?x} {&x} a value holds unreserved
//     characters (A-Z a-z 0-9 - . _ ~) and percent-encoded triplets; a
//     reserved character appears only encoded, as RFC 6570 writes it, so
//     docs://documents/{id} does not match "docs://documents/a:b" and reads
//     "docs://documents/a%3Ab" as id "a:b". In {+x} and {#x} reserved
//     characters (: / ? # [ ] @ ! $ & ' ( ) * + , ; =) appear raw too, and
//     a triplet of a reserved character does not match: RFC 6570 leaves
//     '/' raw in {+path}, so "%2F" there comes only from a value that held
//     "%2F" itself, and reading it as '/' would give two URIs one value.
//     For the same reason %25 followed by two hexadecimal digits (raw or
//     encoded) does not match in {+x} and {#x}. Triplets must encode UTF-8
//     (RFC 6570 values are Unicode): %FF, a truncated or overlong sequence,
//     an encoded surrogate do not match. Raw bytes beyond ASCII never match
//     a value (clients send them encoded). Values are percent-decoded;
//     literals, and the names of named expressions, match byte for byte.
//   - Present, empty, absent. In {x} and {+x} (and {x,y}) every variable
//     is present and non-empty: an absent and an empty value would both
//     leave no trace. In {#x} {.x} {/x} each variable may be absent or
//     empty: "x://a{/id}" matches "x://a" (id absent), "x://a/" (id "")
//     and "x://a/7"; the values present fill the variables from the left
//     ({/x,y} reads "/1" as x "1"). In {;x} {?x} {&x} any of the variables
//     may be present, each at most once, in template order, and no other
//     name: {?q,r} matches no query, "?q=1", "?r=2" and "?q=1&r=2", but not
//     "?r=2&q=1", "?q=1&q=2" or "?q=1&z=3". An empty value is "q=" in {?q}
//     and {&q} (not "q"), and ";p" in {;p} (not ";p="). '+' is a character
//     like any other, not a space. An absent variable has no entry in
//     [ReadRequest].Params nor in a completion's context; a Validate rule
//     runs for every variable, and gets "" for an absent one.
//   - Modifiers. {x:N} matches at most N characters of the decoded value
//     (the value read is the cut one; a prefix of 2048 or more is no
//     limit); {x*} matches as {x}.
//   - Splits. When a URI can be split several ways ("{name}.{ext}" on
//     "a.tar.gz", "{+a}/{+b}" on "x/y/z", "{+x,y}" on "a,b,c"), the choices
//     are made left to right: each variable takes the shortest value that
//     lets the rest match, a list takes its next variable rather than end,
//     and named variables are tried in template order (name "a", ext
//     "tar.gz"). [Expand] encodes an unreserved character of a value that
//     could otherwise end it early ("a%2Eb.c" for name "a.b", ext "c": an
//     equivalent URI), and fails where no equivalent URI would read back
//     (a '/' in a of "{+a}/{+b}").
//
// Two templates that could match the same URI are refused (New searches
// the product of their automata, which follow exactly these rules; the
// error names a URI both match), so a URI matches at most one template.
// A filtered listing beside the documents themselves:
//
//	docs := inventory.Template{Name: "document", URITemplate: "docs://documents/{id}", Read: readDocument}
//	tagged := inventory.Template{Name: "tagged", URITemplate: "docs://documents{?tag}", Read: readTagged}
//	// "docs://documents/7"         → document, Params {"id": "7"}
//	// "docs://documents"           → tagged, Params {} (no tag)
//	// "docs://documents?tag=go"    → tagged, Params {"tag": "go"}
//	// "docs://documents?tag=a%20b" → tagged, Params {"tag": "a b"}
//	// "docs://documents?tag="      → tagged, Params {"tag": ""}
//	// "docs://documents?tag", "?tag=a&tag=b", "?other=1" → not found
//	uri, err := inventory.Expand(tagged.URITemplate, map[string]string{"tag": "a b"}) // "docs://documents?tag=a%20b"
//
// # Gates and grants
//
// The registry never changes, but who may see what can. A [Gate] is a
// named [Policy] over the caller (and the request context), defined in
// Options.Gates and attached to static resources (Resource.Gates),
// templates (Template.Gates) or everything (Options.GlobalGates). A
// caller passes a gate when its policy says so, or when the caller's
// subject was authorized for it at run time with [Inventory.Authorize]
// (until [Inventory.Revoke]). Per subject, [Inventory.Enable] shows one
// static resource (by URI) or template (by name) whatever its gates say,
// and [Inventory.Disable] hides it. Grants live in a [grants.Store]: the
// in-process [grants.Memory] by default, or the application's database so
// that they survive restarts and hold across a fleet. Anonymous callers,
// and callers without a subject, have no grants: policies alone decide.
//
// What a caller may see is, for every static resource and template:
// Access and RequiredScopes as always, and then a Disable hides it, an
// Enable shows it, and otherwise every gate attached to it (its own and
// the global ones) must pass. The same decision holds everywhere:
//
//   - resources/list leaves out the statics the caller may not see and
//     skips the list sources hidden from it, as it skips sources whose
//     scopes are missing. The 403 stays for a caller held back by scopes
//     alone (a step-up would help); a caller from whom every source is
//     hidden gets the static resources it may see, without an error;
//   - resources/read of a hidden resource, or of a URI of a hidden
//     template, is [ErrNotFound], exactly as for an unknown URI, also for
//     anonymous callers: gates hide, they do not challenge;
//   - resources/templates/list leaves hidden templates out (in both
//     Discovery modes), and completion answers for a hidden template as
//     for an unknown one;
//   - [Inventory.CanRead] answers the same question for one URI, so that a
//     transport sends resource updates only to callers who may read them.
//
// Each request reads the caller's grants at most once, and an inventory
// with neither gates nor Options.Grants never does. A failing store or a
// panicking policy is [ErrInternal] for the client and an Error record
// for the operator (source "grants" or "gate NAME"). Policies run on
// every request, at most once per gate: keep them to the principal and
// the context.
//
// After a change that changed something, Options.Notifier learns which
// subject's view may have changed, so that the transport can send
// notifications/resources/list_changed to that principal's own streams.
// A "reports" template appears once the user has finished onboarding, and
// one static resource is shown to a single user:
//
//	inv, err := inventory.New(
//		[]inventory.Resource{{
//			URI: "docs://changelog/beta", Name: "Beta changelog", Access: inventory.Public,
//			Gates: []string{"beta"}, Read: inventory.TextReader("text/markdown", changelog),
//		}},
//		[]inventory.Template{{
//			Name: "reports", URITemplate: "docs://reports/{id}", RequiredScopes: []string{"docs:read"},
//			Gates: []string{"onboarding"}, Read: readReport,
//		}},
//		inventory.Options{
//			Gates: []inventory.Gate{
//				{Name: "onboarding"}, // no policy: only a grant opens it
//				{Name: "beta", Policy: inventory.AllOf(inventory.Authenticated, inventory.HasScopes("beta"))},
//			},
//			Grants: grantsInDB, // a grants.Store over the application's tables; nil: in memory
//		})
//	// Giving the notify.Hub to the endpoint's sessions part (sessions.New) makes it the
//	// inventory's Notifier too (see [Inventory.AttachNotifier]): grant
//	// changes then send list_changed to that subject's streams.
//
//	// When alice finishes the last onboarding step:
//	_, err = inv.Authorize(ctx, "alice", "onboarding") // reports appear for alice only
//	// Support lets bob read the beta changelog without the beta scope:
//	_, err = inv.Enable(ctx, "bob", "docs://changelog/beta")
//
// # Errors
//
// What the serving methods return, and what the transport makes of it:
//
//   - [ErrNotFound]: JSON-RPC -32002 (legacy eras) or -32602 (2026-07-28)
//     with data.uri. A record that does not exist, one the handler does
//     not show to this caller, and a resource hidden by gates look the
//     same.
//   - [principal.ErrUnauthenticated]: HTTP 401 with a Bearer challenge (resources/list
//     with list sources, or a protected resource or template, and no caller).
//   - [*principal.ScopeError]: HTTP 403 insufficient_scope naming Required (all
//     the scopes of the resource, template or closest list source, or those
//     a callback named: see Scopes per record).
//   - [*CursorError]: -32602 with data.reason "invalid" or "expired".
//   - [*ParamsError]: -32602; Problems name variables, never values.
//   - [ErrInternal] (anything else): -32603 with a generic message; the
//     cause is in the operator log.
//
// # Scopes per record
//
// RequiredScopes is static: every record of a template needs the same
// scopes. When one record needs more (project 7 needs proj:7), any
// callback — ReadFunc, ListFunc, SearchFunc, CompleteFunc, and a tool
// handler of mcphttp/tools — may return a [*principal.ScopeError] naming
// the scopes it needs, and the caller gets exactly the challenge of a
// static miss: HTTP 403, WWW-Authenticate: Bearer error="insufficient_scope",
// scope="<Required>", resource_metadata, error_description, in both
// protocol eras (never a JSON-RPC error or a tool result: a client steps
// up only on the HTTP challenge). Required is copied, sorted and
// de-duplicated. The whole request gets the challenge (for List and
// Search: the page or the answer, not only that source's part). A
// ScopeError naming no scope, a scope that is not an RFC 6749 scope-token,
// or only scopes the caller holds (a step-up could not help, and clients
// would loop) is a failed callback: logged, [ErrInternal]. For an
// anonymous caller (a public resource) it is [principal.ErrUnauthenticated]:
// the 401 challenge, sign in first. Name only scopes the authorization
// server can grant this client; "not found" stays the answer for a record
// the caller may never see (a ScopeError tells that the record exists).
//
// # Registry rules
//
// New fails (never panics) on: a missing Read; names or URIs that break
// the entry rules; duplicate static URIs or template names; a template
// RFC 6570 or the kit refuses (see URI templates) or one overlapping
// another (two templates can match the same URI only if one's literal
// beginning begins the other's and one's literal end ends the other's,
// so New searches only such pairs for a common URI: the check is linear
// in the templates but quadratic within a group that shares both its
// literal beginning and its literal end); more than 1<<20 static
// resources; List on a public or
// hidden template, and Search likewise; Validate or Complete keys that are not variables of the
// template, or nil functions; RequiredScopes on a public resource or
// scopes outside the RFC 6749 scope-token characters; bad annotations;
// PageSize outside 1..100; negative byte limits or timeout; byte limits
// too small for an empty page with the longest cursor; gate names that are
// empty, longer than 128 bytes, outside the scope-token characters or
// defined twice; attachments (Gates, GlobalGates) naming an unknown gate
// or one gate twice; and, when grants are in use, a template named like a
// static resource's URI (Enable could not tell them apart).
package inventory
