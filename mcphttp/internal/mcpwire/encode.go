// Package mcpwire is the plumbing mcphttp and its parts share: the one
// encoder of MCP objects, the one params reader, the protocol versions,
// and the HTTP and context marks the parts agree on. It is internal: what
// users need of it is exported by mcphttp and the parts themselves.
package mcpwire

import (
	"encoding/base64"
	"strconv"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/inventory"
)

// AppendString appends s as a JSON string (escaping what JSON and
// JavaScript need escaped) to dst and returns the extended slice.
func AppendString(dst []byte, s string) []byte { return jsonstrict.AppendString(dst, s) }

// AppendItem appends the MCP Resource object of a list item.
func AppendItem(dst []byte, it *inventory.Item) []byte {
	dst = appendHead(dst, `{"uri":`, it.URI, it.Name, it.Title, it.Description, it.MIMEType)
	if a := it.Annotations; a != nil && (len(a.Audience) > 0 || a.Priority != nil || a.LastModified != "") {
		dst = appendAnnotations(dst, a)
	}
	if it.Size > 0 {
		dst = strconv.AppendInt(append(dst, `,"size":`...), it.Size, 10)
	}
	return append(dst, '}')
}

func appendAnnotations(dst []byte, a *inventory.Annotations) []byte {
	dst = append(dst, `,"annotations":{`...)
	sep := ""
	if len(a.Audience) > 0 {
		dst = append(dst, `"audience":[`...)
		for i, s := range a.Audience {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, s)
		}
		dst = append(dst, ']')
		sep = ","
	}
	if a.Priority != nil {
		dst = append(append(dst, sep...), `"priority":`...)
		dst = strconv.AppendFloat(dst, *a.Priority, 'f', -1, 64)
		sep = ","
	}
	if a.LastModified != "" {
		dst = append(append(dst, sep...), `"lastModified":`...)
		dst = AppendString(dst, a.LastModified)
	}
	return append(dst, '}')
}

// AppendTemplateItem appends the MCP ResourceTemplate object of a
// template.
func AppendTemplateItem(dst []byte, it *inventory.TemplateItem) []byte {
	dst = appendHead(dst, `{"uriTemplate":`, it.URITemplate, it.Name, it.Title, it.Description, it.MIMEType)
	return append(dst, '}')
}

// appendHead opens a Resource or ResourceTemplate object: its URI (or
// template) after open, its name, and the title, description and MIME
// type when not empty.
func appendHead(dst []byte, open, uri, name, title, description, mimeType string) []byte {
	dst = AppendString(append(dst, open...), uri)
	dst = AppendString(append(dst, `,"name":`...), name)
	dst = appendOptional(dst, `,"title":`, title)
	dst = appendOptional(dst, `,"description":`, description)
	return appendOptional(dst, `,"mimeType":`, mimeType)
}

// AppendContents appends one item of a read result: text, or the blob
// base64-encoded.
func AppendContents(dst []byte, c *inventory.Contents) []byte {
	dst = append(dst, `{"uri":`...)
	dst = AppendString(dst, c.URI)
	dst = appendOptional(dst, `,"mimeType":`, c.MIMEType)
	if c.Blob != nil {
		dst = append(dst, `,"blob":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, c.Blob)
		dst = append(dst, '"')
	} else {
		dst = append(dst, `,"text":`...)
		dst = AppendString(dst, c.Text)
	}
	return append(dst, '}')
}

func appendOptional(dst []byte, member, value string) []byte {
	if value == "" {
		return dst
	}
	return AppendString(append(dst, member...), value)
}
