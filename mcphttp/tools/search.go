package tools

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
)

// search and fetch, in the contract of ChatGPT connectors and deep
// research: one text item holding JSON each.

// search is the search tool: one text item holding
// {"results":[{"id","title","url"}]}. The id is the resource URI, which
// fetch reads. Results past the byte limit are left out (they come last:
// the least relevant).
func (b *builtins) search(ctx context.Context, req *Request) (Result, error) {
	c := req.call
	hits, err := b.inv.Search(ctx, c.Principal, req.Args["query"], b.searchLimit)
	if err != nil {
		return Result{}, err
	}
	room := membersRoom(c) - textResultOverhead
	inner := append(make([]byte, 0, 128*len(hits)+16), `{"results":[`...)
	used := len(inner) + len(`]}`) // escaped, these take no more bytes
	var item, esc []byte
	for i := range hits {
		h := &hits[i]
		item = append(item[:0], `{"id":`...)
		item = mcpwire.AppendString(item, h.URI)
		item = append(item, `,"title":`...)
		item = mcpwire.AppendString(item, h.Name)
		item = append(item, `,"url":`...)
		item = mcpwire.AppendString(item, b.cite(h.URI))
		item = append(item, '}')
		esc = mcpwire.AppendString(esc[:0], string(item))
		n := len(esc) - 2
		if i > 0 {
			n++ // the comma
		}
		if used+n > room {
			break
		}
		used += n
		if i > 0 {
			inner = append(inner, ',')
		}
		inner = append(inner, item...)
	}
	return TextResult(string(append(inner, `]}`...))), nil
}

// fetch is the fetch tool: resources/read of the id (a search result's
// URI), its access checks included, as one text item holding
// {"id","title","text","url","metadata"}. text joins the text contents;
// title is the first non-empty one, clipped and escaped like a listed
// name (inventory.ClipName), of: the contents' Title, the
// resource's own as registered (see listedTitles), and the URI. A text too
// long for the byte limit is cut at a character boundary, and
// metadata.truncated says so.
func (b *builtins) fetch(ctx context.Context, req *Request) (Result, error) {
	c := req.call
	id := req.Args["id"]
	c.NoteURI(id)
	contents, err := b.inv.Read(ctx, c.Principal, id)
	if err != nil {
		return Result{}, err
	}
	var text []byte
	title, mime, n := "", "", 0
	for i := range contents {
		ct := &contents[i]
		if title == "" {
			title = ct.Title
		}
		if mime == "" {
			mime = ct.MIMEType
		}
		if ct.Blob == nil {
			if n > 0 {
				text = append(text, '\n')
			}
			text = append(text, ct.Text...)
			n++
		}
	}
	title = usableTitle(title)
	for _, t := range b.listedTitles(id) {
		if title != "" {
			break
		}
		title = usableTitle(t)
	}
	if title == "" {
		title = id
	}
	url := b.cite(id)
	room := membersRoom(c) - textResultOverhead
	doc := func(text []byte, truncated bool) []byte {
		d := append(make([]byte, 0, len(text)+len(id)*2+len(title)+128), `{"id":`...)
		d = mcpwire.AppendString(d, id)
		d = append(d, `,"title":`...)
		d = mcpwire.AppendString(d, title)
		d = append(d, `,"text":`...)
		d = mcpwire.AppendString(d, string(text))
		d = append(d, `,"url":`...)
		d = mcpwire.AppendString(d, url)
		d = append(d, `,"metadata":{"uri":`...)
		d = mcpwire.AppendString(d, id)
		if mime != "" {
			d = append(d, `,"mimeType":`...)
			d = mcpwire.AppendString(d, mime)
		}
		if truncated {
			d = append(d, `,"truncated":true`...)
		}
		return append(d, `}}`...)
	}
	escLen := func(d []byte) int { return len(mcpwire.AppendString(nil, string(d))) - 2 }
	inner := doc(text, false)
	if escLen(inner) > room {
		// The longest prefix of text, at a character boundary, that fits:
		// a binary search over byte offsets. (If not even the empty text
		// fits, the part answers the result over the limit.)
		fits := func(k int) bool { return escLen(doc(text[:runeStart(text, k)], true)) <= room }
		lo, hi := 0, len(text)
		for lo < hi {
			if mid := (lo + hi + 1) / 2; fits(mid) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		inner = doc(text[:runeStart(text, lo)], true)
	}
	return TextResult(string(inner)), nil
}

// listedTitles returns what the inventory knows to call the resource at
// uri, best first: a static resource's Title and Name (as listed); for a
// URI a template matches, the template's Title. (A template's Name is an
// identifier, and the name a list callback gives an entry is not known to
// a read.) Called only after a read of uri succeeded, so it names nothing
// the caller may not see.
func (b *builtins) listedTitles(uri string) []string {
	for _, it := range b.inv.StaticItems() {
		if it.URI == uri {
			return []string{it.Title, it.Name}
		}
	}
	if name, ok := b.inv.Target(uri); ok {
		if ti, ok := b.inv.Template(name); ok {
			return []string{ti.Title}
		}
	}
	return nil
}

// usableTitle returns t clipped like a name, or "" when that is empty or
// not printable UTF-8.
func usableTitle(t string) string {
	if t = inventory.ClipName(t); t == "" || !printableText(t) {
		return ""
	}
	return t
}

// printableText reports valid UTF-8 without control characters.
func printableText(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

// runeStart returns the largest offset ≤ i that starts a character of b.
func runeStart(b []byte, i int) int {
	i = min(i, len(b))
	for i > 0 && i < len(b) && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}
