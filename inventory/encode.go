package inventory

import (
	"strconv"

	"github.com/mcpkit/mcpkit/budget"
)

// Hand-written JSON encoders for the items of list results and the
// contents of read results: no reflection on the request path.

// appendEntry encodes a listed entry of source src as an MCP Resource: the
// entry's MIME type, else the template's. The entry has been validated
// against src's template (validatePage): with a plain template its URI,
// and with plainName its name, are copied between quotes, as they need no
// escaping.
func appendEntry(dst []byte, e *Entry, src *registered, plainName bool) []byte {
	if src.ut.plain {
		dst = append(dst, `{"uri":"`...)
		dst = append(dst, e.URI...)
		dst = append(dst, `",`...)
	} else {
		dst = append(dst, `{"uri":`...)
		dst = budget.AppendString(dst, e.URI)
		dst = append(dst, ',')
	}
	if plainName {
		dst = append(dst, `"name":"`...)
		dst = append(dst, e.Name...)
		dst = append(dst, '"')
	} else {
		dst = append(dst, `"name":`...)
		dst = budget.AppendString(dst, e.Name)
	}
	if e.MIMEType == "" {
		return append(dst, src.end...)
	}
	dst = append(dst, `,"mimeType":`...)
	dst = budget.AppendString(dst, e.MIMEType)
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
