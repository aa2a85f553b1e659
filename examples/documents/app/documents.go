package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
)

// The resources the server publishes.
const (
	// ScopeRead is the scope needed to list and read documents (and all
	// the MCP endpoint needs).
	ScopeRead = "documents:read"
	// ScopeShare is the scope of the REST API: sharing, unsharing and
	// updating one's own documents.
	ScopeShare = "documents:share"
	// DocumentTemplate is the URI template of a document.
	DocumentTemplate = "docs://documents/{id}"
	// AboutURI is the public resource describing the server.
	AboutURI = "docs://about"

	documentPrefix = "docs://documents/"
)

const instructions = "Lists and reads the signed-in user's own documents and those shared with them (" + DocumentTemplate +
	"), page by page. Requires the scope " + ScopeRead + ". Subscribe to learn when the list or a document changes."

const aboutText = `# mcpkit documents

An example MCP resource server built with mcpkit. Every signed-in user sees
their **own** documents and those shared with them, and nobody else's:

- ` + "`resources/list`" + ` lists the caller's documents as ` + "`" + DocumentTemplate + "`" + `,
  a few per page; follow ` + "`nextCursor`" + ` to the end. Cursors are sealed, bound
  to the caller and expire 15 minutes after the first page.
- ` + "`resources/read`" + ` returns one document, if the caller may see it now;
  a document of somebody else's is "not found", exactly like a missing one.
- ` + "`resources/read`" + ` of ` + "`" + FilteredTemplate + "`" + ` (e.g. ` + "`docs://documents?q=quarterly`" + `)
  returns the caller's documents whose title or body holds every word of q,
  as JSON: their URIs and titles, at most 100.
- ` + "`completion/complete`" + ` suggests the caller's own document ids.
- Tools, for clients that only call tools: ` + "`list_resources`" + ` (the pages of
  resources/list), ` + "`read_resource`" + `, ` + "`read_document`" + ` (by id), and ` + "`search`" + ` /
  ` + "`fetch`" + ` (full-text search over the titles and bodies the caller may read, in
  the shape ChatGPT connectors and deep research expect).
- Notifications: a legacy session's GET stream, or ` + "`subscriptions/listen`" + `,
  receives ` + "`notifications/resources/list_changed`" + ` when a document is shared
  with the caller or unshared, and ` + "`notifications/resources/updated`" + ` when a
  subscribed document changes; nobody else hears of it.

Listing and reading need a bearer token for this server (its audience) with
the scope ` + "`" + ScopeRead + "`" + `; who may read one of your documents is
` + "`" + ReadersTemplate + "`" + ` (scope ` + "`" + ScopeShare + "`" + ` too). Owners share, unshare and edit their documents
through the REST API under /api (scope ` + "`" + ScopeShare + "`" + `). This page is public.
`

// DocumentsTemplate returns the protected, discoverable template of the
// caller's documents, served from st: List asks the store for the next
// Limit+1 documents of the caller after the cursor's key, Read re-checks
// visibility in the store, Validate rejects ids that cannot exist, and
// Complete suggests the caller's own ids.
func DocumentsTemplate(st store.Store) inventory.Template {
	return inventory.Template{
		Name: "documents", Title: "Documents", Description: "Your documents",
		URITemplate: DocumentTemplate, MIMEType: "text/plain",
		RequiredScopes: []string{ScopeRead},
		Validate:       map[string]func(string) error{"id": validateID},
		List:           listDocuments(st),
		Read:           readDocument(st),
		Complete:       map[string]inventory.CompleteFunc{"id": completeIDs(st)},
		Search:         searchDocuments(st),
	}
}

// ReadDocumentTool is the name of the typed tool of DocumentTemplate.
const ReadDocumentTool = "read_document"

// Tools returns the server's tools: the inventory's built-in ones
// (list_resources, read_resource, search and fetch over the caller's
// documents, and read_document(id)), and one of its own, count_words.
func Tools(inv *inventory.Inventory) ([]tools.Tool, error) {
	builtin, err := tools.Builtin(inv, tools.BuiltinOptions{Templates: map[string]tools.TemplateTool{
		"documents": {Name: ReadDocumentTool, Title: "Read a document", Description: "Reads one of your documents (or one shared with you) by its id."},
	}})
	if err != nil {
		return nil, err
	}
	return append(builtin, CountWordsTool(inv)), nil
}

// CountWordsTool is a tool of the server's own, next to the built-in
// ones: the words and lines of one of the caller's documents. It reads
// through the inventory, so it sees exactly what resources/read would
// (access checked again, another user's document not found), and it is
// listed, scoped, rate-limited (as a read) and observed like the others.
func CountWordsTool(inv *inventory.Inventory) tools.Tool {
	return tools.Tool{
		Name: CountWordsToolName, Title: "Count words",
		Description:    "Counts the words and lines of one of your documents (or one shared with you), by its id.",
		Args:           []tools.Arg{{Name: "id", Description: "The document's id.", Required: true, MaxLen: 64}},
		ReadOnly:       true,
		RequiredScopes: []string{ScopeRead},
		Class:          mcphttp.ClassRead,
		Handler: func(ctx context.Context, req *tools.Request) (tools.Result, error) {
			uri := documentPrefix + req.Args["id"]
			req.NoteURI(uri)
			contents, err := inv.Read(ctx, req.Principal, uri)
			if err != nil {
				return tools.Result{}, err // not found, a challenge: answered as for every tool
			}
			words, lines := 0, 0
			for _, c := range contents {
				words += len(strings.Fields(c.Text))
				lines += strings.Count(c.Text, "\n")
				if c.Text != "" && !strings.HasSuffix(c.Text, "\n") {
					lines++
				}
			}
			return tools.TextResult(fmt.Sprintf("%d words, %d lines", words, lines)), nil
		},
	}
}

// CountWordsToolName is the name of CountWordsTool.
const CountWordsToolName = "count_words"

// AboutResource returns the public static resource describing the server.
func AboutResource() inventory.Resource {
	return inventory.Resource{
		URI: AboutURI, Name: "about", Title: "About this server",
		Description: "What this server offers and how to use it", MIMEType: "text/markdown",
		Size: int64(len(aboutText)), Access: inventory.Public,
		Read: inventory.TextReader("text/markdown", aboutText),
	}
}

func (a *App) newInventory() (*inventory.Inventory, error) {
	sealer, err := a.newSealer()
	if err != nil {
		return nil, err
	}
	inv, err := inventory.New([]inventory.Resource{AboutResource()}, []inventory.Template{
		DocumentsTemplate(a.mcpStore()), DocumentReadersTemplate(a.mcpStore()),
		FilteredDocumentsTemplate(a.mcpStore(), 0), // the endpoint's byte limit is the default too
		SkillFilesTemplate(a.skills),
	},
		inventory.Options{PageSize: a.cfg.PageSize, Sealer: sealer, Logger: a.log, Notifier: a.hub})
	if err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	return inv, nil
}

var errNoSubject = errors.New("documents: caller has no subject")

// listDocuments is the keyset List callback: the next Limit documents of
// the caller strictly after req.After, in the order of their keys. It
// reads Limit+1 rows to learn whether more exist; the store puts the owner
// in the query's WHERE clause, and an index serves it, so every page costs
// the same however deep it is and however many documents the caller has.
func listDocuments(st store.Store) inventory.ListFunc {
	return func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
		rows, more, err := ownedRows(ctx, req, st.List)
		if err != nil {
			return inventory.Page{}, err
		}
		page := inventory.Page{HasMore: more, Entries: make([]inventory.Entry, len(rows))}
		for i, r := range rows {
			page.Entries[i] = inventory.Entry{
				Key: r.OrderKey, // unique, immutable, printable ASCII: the cursor's position
				// Ids are [A-Za-z0-9_-], unreserved in URIs: this is what
				// inventory.Expand(DocumentTemplate, {"id": r.ID}) returns.
				URI: documentPrefix + r.ID,
				// A title may be longer than a listed name may be: clipped,
				// so that one long title never fails the caller's whole list.
				Name: inventory.ClipName(r.Title), MIMEType: r.MIMEType,
			}
		}
		return page, nil
	}
}

// ownedRows reads, with list, the caller's next req.Limit rows strictly
// after req.After and whether more exist (it reads Limit+1 rows to learn
// that); it never lists without an owner. Records are owned by identity
// key: the subject, or with several issuers the issuer-qualified subject
// (principal.Principal.Key). The documents' and the skills' listings
// share it.
func ownedRows[R any](ctx context.Context, req inventory.ListRequest, list func(ctx context.Context, owner, after string, limit int) ([]R, error)) (rows []R, more bool, err error) {
	if req.Principal == nil || req.Principal.Subject == "" {
		return nil, false, errNoSubject // never list without an owner
	}
	rows, err = list(ctx, req.Principal.Key(), req.After, req.Limit+1)
	if err != nil {
		return nil, false, err
	}
	return rows[:min(len(rows), req.Limit)], len(rows) > req.Limit, nil
}

// readDocument returns a document if the caller may see it now. A URI
// listed earlier grants nothing: the store checks visibility again.
func readDocument(st store.Store) inventory.ReadFunc {
	return func(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
		if req.Principal == nil {
			return nil, inventory.ErrNotFound
		}
		doc, err := st.Read(ctx, req.Principal.Key(), req.Params["id"])
		if errors.Is(err, store.ErrNotFound) {
			return nil, inventory.ErrNotFound // absent and not visible look the same
		}
		if err != nil {
			return nil, err
		}
		return []inventory.Contents{{URI: req.URI, MIMEType: doc.MIMEType, Text: doc.Body, Title: inventory.ClipName(doc.Title)}}, nil
	}
}

// searchDocuments is the Search callback: the store's full-text search
// over the title and body of the documents the caller may see (its own and
// those shared with it), with the owner in the query as in List.
func searchDocuments(st store.Store) inventory.SearchFunc {
	return func(ctx context.Context, req inventory.SearchRequest) ([]inventory.SearchHit, error) {
		if req.Principal == nil || req.Principal.Subject == "" {
			return nil, errNoSubject // never search without an owner
		}
		rows, err := st.Search(ctx, req.Principal.Key(), req.Query, req.Limit)
		if err != nil {
			return nil, err
		}
		hits := make([]inventory.SearchHit, len(rows))
		for i, r := range rows {
			hits[i] = inventory.SearchHit{URI: documentPrefix + r.ID, Name: inventory.ClipName(r.Title)}
		}
		return hits, nil
	}
}

// validateID accepts what the store can hold as an id: 1–64 characters of
// [A-Za-z0-9_-].
func validateID(id string) error {
	if id == "" || len(id) > store.MaxIDBytes {
		return errors.New("id length")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return errors.New("id character")
		}
	}
	return nil
}

// completeIDs suggests the ids of the caller's documents (their own and
// those shared with them, as List shows them) that start with the typed
// prefix, never anybody else's: a bounded prefix query on the store's
// (subject, id) index, however many documents the caller has. It asks for
// one more than a result carries, to learn whether there are more.
func completeIDs(st store.Store) inventory.CompleteFunc {
	return func(ctx context.Context, req inventory.CompleteRequest) (inventory.Completion, error) {
		if req.Principal == nil || req.Principal.Subject == "" {
			return inventory.Completion{}, nil
		}
		ids, err := st.IDsWithPrefix(ctx, req.Principal.Key(), req.Value, inventory.MaxCompletionValues+1)
		if err != nil {
			return inventory.Completion{}, err
		}
		out := inventory.Completion{Values: ids[:min(len(ids), inventory.MaxCompletionValues)], HasMore: len(ids) > inventory.MaxCompletionValues}
		if !out.HasMore {
			out.Total = len(out.Values)
		}
		return out, nil
	}
}
