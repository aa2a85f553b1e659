package skills

import (
	"context"
	"errors"
	"strconv"

	"github.com/mcpkit/mcpkit/internal/callback"
	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/principal"
)

// The seam to mcphttp: this file alone knows the endpoint's part API and
// the wire. Everything else of the package decides in Go values.

var _ mcphttp.Part = (*Catalog)(nil)

// Setup makes the Catalog a part of an mcphttp endpoint serving the same
// inventory: it registers skills/list, skills/get and (with
// Options.DirectoryRead) resources/directory/read in both protocol eras,
// and declares the extension under capabilities.extensions in initialize
// and server/discover. Every result is private (cacheScope "private",
// ttlMs 0 in 2026-07-28): what a caller sees depends on who it is.
func (c *Catalog) Setup(s *mcphttp.Setup) error {
	if s.Inventory() != c.inv {
		return errors.New("skills: the endpoint serves another inventory than the Catalog's")
	}
	if !c.ownLog {
		c.log = s.Logger()
		c.runner = callback.New(c.timeout, c.log) // before serving: late returns go to the endpoint's log
	}
	s.Handle("skills/list", c.serveList, mcphttp.MethodOptions{Class: classOf(mcphttp.ClassList)})
	s.Handle("skills/get", c.serveGet, mcphttp.MethodOptions{Class: classOf(mcphttp.ClassRead)})
	settings := `{}`
	if c.dirRead {
		s.Handle("resources/directory/read", c.serveDir, mcphttp.MethodOptions{Class: classOf(mcphttp.ClassList)})
		settings = `{"directoryRead":true}`
	}
	caps := `{"` + ExtensionID + `":` + settings + `}`
	s.Capability("extensions", func(bool) string { return caps })
	return nil
}

// classOf is a MethodOptions.Class that answers class for every call.
func classOf(class string) func([]byte) string {
	return func([]byte) string { return class }
}

// notFound is the answer for a skill or directory that does not exist or
// that the caller may not see: -32602 in both eras, as the extension
// says, with data.uri.
func notFound(uri, message string) error {
	return &mcphttp.Error{Code: jsonrpc.CodeInvalidParams, Message: message, Data: struct {
		URI string `json:"uri"`
	}{uri}}
}

// pageReserve is what a page's members take after its items: `]` and the
// longest `,"nextCursor":"…"`.
func pageReserve() int { return len(`],"nextCursor":""`) + maxCursorLen() }

func (c *Catalog) serveList(ctx context.Context, call *mcphttp.Request) (mcphttp.Result, error) {
	if call.Principal == nil {
		return mcphttp.Result{}, principal.ErrUnauthenticated // before looking at params
	}
	cursor, err := mcpwire.CursorParam(call.Params())
	if err != nil {
		return mcphttp.Result{}, err
	}
	room := membersRoom(call) - pageReserve()
	b, next, items, err := c.appendPage(ctx, call.Principal, cursor, append(make([]byte, 0, 4096), `"skills":[`...), room)
	if err != nil {
		return mcphttp.Result{}, err
	}
	call.NoteEntries(items)
	return seam.Answer[mcphttp.Result](call, endPage(b, next), true)
}

func (c *Catalog) serveGet(ctx context.Context, call *mcphttp.Request) (mcphttp.Result, error) {
	uri, err := callURI(call)
	if err != nil {
		return mcphttp.Result{}, err
	}
	s, err := c.Get(ctx, call.Principal, uri)
	if errors.Is(err, inventory.ErrNotFound) {
		return mcphttp.Result{}, notFound(uri, "Skill not found")
	}
	if err != nil {
		return mcphttp.Result{}, err
	}
	b := appendSkill(append(make([]byte, 0, 1024), `"skill":`...), &s)
	if len(b) > membersRoom(call) {
		call.Logger().Error("skills: skills/get answer over the byte limit", "source", c.src.Template, "bytes", len(b))
		return mcphttp.Result{}, mcpwire.ResultTooLarge{}
	}
	return seam.Answer[mcphttp.Result](call, b, true)
}

func (c *Catalog) serveDir(ctx context.Context, call *mcphttp.Request) (mcphttp.Result, error) {
	uri, err := callURI(call)
	if err != nil {
		return mcphttp.Result{}, err
	}
	cursor, err := mcpwire.CursorParam(call.Params())
	if err != nil {
		return mcphttp.Result{}, err
	}
	room := membersRoom(call) - pageReserve()
	b := append(make([]byte, 0, 2048), `"resources":[`...)
	items := 0
	next, err := c.ReadDir(ctx, call.Principal, uri, cursor, func(it *inventory.Item) bool {
		mark := len(b)
		if items > 0 {
			b = append(b, ',')
		}
		b = mcpwire.AppendItem(b, it)
		if len(b) > room {
			b = b[:mark]
			return false
		}
		items++
		return true
	})
	if errors.Is(err, inventory.ErrNotFound) {
		return mcphttp.Result{}, notFound(uri, "Not a directory resource")
	}
	if err != nil {
		return mcphttp.Result{}, err
	}
	call.NoteEntries(items)
	return seam.Answer[mcphttp.Result](call, endPage(b, next), true)
}

// appendPage appends to b the skills of caller's page after cursor, comma
// separated, as many as keep b within room bytes; it returns b, the next
// cursor and how many skills it appended.
func (c *Catalog) appendPage(ctx context.Context, caller *principal.Principal, cursor string, b []byte, room int) ([]byte, string, int, error) {
	items := 0
	next, err := c.List(ctx, caller, cursor, func(s *Skill) bool {
		mark := len(b)
		if items > 0 {
			b = append(b, ',')
		}
		b = appendSkill(b, s)
		if len(b) > room {
			b = b[:mark]
			return false
		}
		items++
		return true
	})
	return b, next, items, err
}

// callURI returns the uri parameter of a call about one resource (noted
// for the observer); the call needs a caller.
func callURI(call *mcphttp.Request) (string, error) {
	if call.Principal == nil {
		return "", principal.ErrUnauthenticated
	}
	uri, err := mcpwire.URIParam(call.Params())
	if err != nil {
		return "", err
	}
	call.NoteURI(uri)
	return uri, nil
}

func endPage(b []byte, next string) []byte {
	b = append(b, ']')
	if next != "" {
		b = append(append(append(b, `,"nextCursor":"`...), next...), '"')
	}
	return b
}

// appendSkill appends the JSON Skill object of s (validated: its
// frontmatter is a strict JSON object, sent as it is but for the
// characters no displayed text may hold, see appendFrontmatter).
func appendSkill(dst []byte, s *Skill) []byte {
	dst = append(dst, `{"uri":`...)
	dst = jsonstrict.AppendString(dst, s.URI)
	dst = append(dst, `,"frontmatter":`...)
	dst = appendFrontmatter(dst, s.Frontmatter)
	if s.Dynamic {
		return append(dst, `,"resources":"dynamic"}`...)
	}
	dst = append(dst, `,"resources":[`...)
	for i := range s.Files {
		f := &s.Files[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"uri":`...)
		dst = jsonstrict.AppendString(dst, f.URI)
		dst = append(dst, `,"digest":"`...)
		dst = append(dst, f.Digest...)
		dst = append(dst, `","size":`...)
		dst = strconv.AppendInt(dst, f.Size, 10)
		dst = append(dst, '}')
	}
	return append(dst, ']', '}')
}

// membersRoom is the room of a private result's members (Room counts the
// braces).
func membersRoom(call *mcphttp.Request) int { return call.Room(mcphttp.CachePrivate) - len("{}") }
