package app

import (
	"context"
	"errors"

	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// FilteredTemplate is the URI template of a filtered listing of the
// caller's documents: an RFC 6570 query expression. Reading
// "docs://documents?q=quarterly" gives the caller's documents (its own and
// those shared with it, as resources/list shows them) whose title or body
// holds every word of q; "docs://documents" (no q, or an empty one) gives
// the caller's documents in listing order. Documents have no tags, so the
// filter is the store's full-text search, which both backends already
// serve from an index with the owner in the query (store.Store.Search):
// a tag filter would need a new column and query in each.
const FilteredTemplate = "docs://documents{?q}"

// MaxFiltered is the most documents one filtered listing holds; the byte
// limit of a response may hold fewer. Past it, "truncated" is true: page
// with resources/list, or narrow the query.
const MaxFiltered = 100

// filteredReserve is the room a filtered listing leaves, besides its URI,
// for what the endpoint wraps around the text: the JSON-RPC envelope (an
// id of at most 256 bytes), the contents item's uri and mimeType, and
// _meta.
const filteredReserve = 2048

// FilteredDocumentsTemplate returns the protected template of
// FilteredTemplate (scope documents:read), served from st. Its contents
// are one application/json text item,
//
//	{"documents":[{"uri":"docs://documents/ID","title":"…"}],"truncated":false}
//
// at most MaxFiltered documents, best matches first for a query, and only
// as many as keep the whole response within maxResultBytes (the
// endpoint's mcphttp.Options.MaxResultBytes; zero means
// mcphttp.DefaultMaxResultBytes): the rest are left out and truncated
// says so. It has no List: resources/list shows the documents
// themselves. Another user's documents are never in it: the store puts the
// caller in the query, exactly as for List and Read.
func FilteredDocumentsTemplate(st store.Store, maxResultBytes int) inventory.Template {
	if maxResultBytes == 0 {
		maxResultBytes = mcphttp.DefaultMaxResultBytes
	}
	return inventory.Template{
		Name: "filtered", Title: "Your documents, filtered",
		Description: "Your documents (and those shared with you) whose title or body holds every word of q; without q, the first of them",
		URITemplate: FilteredTemplate, MIMEType: "application/json",
		RequiredScopes: []string{ScopeRead},
		Validate:       map[string]func(string) error{"q": validateQuery},
		Read:           readFiltered(st, maxResultBytes),
	}
}

// validateQuery accepts a query of at most inventory.MaxQueryLen UTF-16
// code units, the search tool's limit ("" for an absent q).
func validateQuery(q string) error {
	n := 0
	for _, r := range q {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	if n > inventory.MaxQueryLen {
		return errors.New("query length")
	}
	return nil
}

func readFiltered(st store.Store, maxResultBytes int) inventory.ReadFunc {
	return func(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
		if req.Principal == nil || req.Principal.Subject == "" {
			return nil, inventory.ErrNotFound // never list without an owner
		}
		var rows []store.Entry
		var err error
		if q := req.Params["q"]; q == "" {
			rows, err = st.List(ctx, req.Principal.Key(), "", MaxFiltered+1)
		} else {
			rows, err = st.Search(ctx, req.Principal.Key(), q, MaxFiltered+1)
		}
		if err != nil {
			return nil, err
		}
		text := filteredText(rows, maxResultBytes-filteredReserve-len(req.URI))
		return []inventory.Contents{{URI: req.URI, MIMEType: "application/json", Text: text}}, nil
	}
}

// filteredText encodes the first rows (at most MaxFiltered) whose text,
// once escaped as the JSON string of a read result, takes at most room
// bytes; truncated is true when some were left out.
func filteredText(rows []store.Entry, room int) string {
	const head, tail = `{"documents":[`, `],"truncated":`
	escLen := func(b []byte) int { return len(jsonrpc.AppendString(nil, string(b))) - 2 }
	used := len(head) + len(tail) + len("false}") // these escape to themselves
	text := append(make([]byte, 0, 96*min(len(rows), MaxFiltered)+32), head...)
	var item []byte
	truncated := len(rows) > MaxFiltered
	for i := range rows[:min(len(rows), MaxFiltered)] {
		item = append(item[:0], `{"uri":`...)
		item = jsonrpc.AppendString(item, documentPrefix+rows[i].ID)
		item = append(item, `,"title":`...)
		item = jsonrpc.AppendString(item, inventory.ClipName(rows[i].Title))
		item = append(item, '}')
		n := escLen(item)
		if i > 0 {
			n++ // the comma
		}
		if used+n > room {
			truncated = true
			break
		}
		used += n
		if i > 0 {
			text = append(text, ',')
		}
		text = append(text, item...)
	}
	text = append(text, tail...)
	if truncated {
		return string(append(text, "true}"...))
	}
	return string(append(text, "false}"...))
}
