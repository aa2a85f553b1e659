package inventory

import (
	"encoding/base64"
	"strconv"

	"github.com/mcpkit/mcpkit/budget"
)

// Hand-written JSON encoders for the items of list results and the
// contents of read results: no reflection on the request path.

// appendEntry encodes a listed entry as an MCP Resource.
func appendEntry(dst []byte, e *Entry, mime string) []byte {
	dst = append(dst, `{"uri":`...)
	dst = budget.AppendString(dst, e.URI)
	dst = append(dst, `,"name":`...)
	dst = budget.AppendString(dst, e.Name)
	if e.MIMEType != "" {
		mime = e.MIMEType
	}
	if mime != "" {
		dst = append(dst, `,"mimeType":`...)
		dst = budget.AppendString(dst, mime)
	}
	return append(dst, '}')
}

// appendResource encodes a static resource (at construction).
func appendResource(dst []byte, r *Resource) []byte {
	dst = append(dst, `{"uri":`...)
	dst = budget.AppendString(dst, r.URI)
	dst = append(dst, `,"name":`...)
	dst = budget.AppendString(dst, r.Name)
	dst = appendOptional(dst, "title", r.Title)
	dst = appendOptional(dst, "description", r.Description)
	dst = appendOptional(dst, "mimeType", r.MIMEType)
	if a := r.Annotations; a != nil && (len(a.Audience) > 0 || a.Priority != nil || a.LastModified != "") {
		dst = append(dst, `,"annotations":{`...)
		sep := ""
		if len(a.Audience) > 0 {
			dst = append(dst, `"audience":[`...)
			for i, s := range a.Audience {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = budget.AppendString(dst, s)
			}
			dst = append(dst, ']')
			sep = ","
		}
		if a.Priority != nil {
			dst = append(dst, sep...)
			dst = append(dst, `"priority":`...)
			dst = strconv.AppendFloat(dst, *a.Priority, 'f', -1, 64)
			sep = ","
		}
		if a.LastModified != "" {
			dst = append(dst, sep...)
			dst = append(dst, `"lastModified":`...)
			dst = budget.AppendString(dst, a.LastModified)
		}
		dst = append(dst, '}')
	}
	if r.Size > 0 {
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, r.Size, 10)
	}
	return append(dst, '}')
}

// appendTemplate encodes a ResourceTemplate (at construction).
func appendTemplate(dst []byte, t *Template) []byte {
	dst = append(dst, `{"uriTemplate":`...)
	dst = budget.AppendString(dst, t.URITemplate)
	dst = append(dst, `,"name":`...)
	dst = budget.AppendString(dst, t.Name)
	dst = appendOptional(dst, "title", t.Title)
	dst = appendOptional(dst, "description", t.Description)
	dst = appendOptional(dst, "mimeType", t.MIMEType)
	return append(dst, '}')
}

func appendOptional(dst []byte, key, value string) []byte {
	if value == "" {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return budget.AppendString(dst, value)
}

// appendContents encodes one item of a read result.
func appendContents(dst []byte, c *Contents) []byte {
	dst = append(dst, `{"uri":`...)
	dst = budget.AppendString(dst, c.URI)
	dst = appendOptional(dst, "mimeType", c.MIMEType)
	if c.Blob != nil {
		dst = append(dst, `,"blob":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, c.Blob)
		dst = append(dst, '"')
	} else {
		dst = append(dst, `,"text":`...)
		dst = budget.AppendString(dst, c.Text)
	}
	return append(dst, '}')
}

// AppendReadResult appends the result object of a resources/read response,
// `{"contents":[…]`, without its closing brace, so that the caller can add
// members (such as caching hints) before closing it. The contents should
// come from [Inventory.Read]; [Inventory.ReadResponse] does all of this
// under the byte limit.
func AppendReadResult(dst []byte, contents []Contents) []byte {
	dst = append(dst, `{"contents":[`...)
	for i := range contents {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendContents(dst, &contents[i])
	}
	return append(dst, ']')
}
