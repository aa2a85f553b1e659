package apicheck

import (
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/types"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinks checks every doc link and every mention of one of this
// repository's packages in every doc comment of every package (see the
// package documentation).
func TestDocLinks(t *testing.T) {
	w := load(t)
	links, mentions := 0, 0
	for _, c := range w.repo {
		for _, g := range docComments(c.files) {
			text := g.Text()
			for _, l := range docLinks(text, w.linkPackage(c)) {
				links++
				if err := w.resolveLink(c, l); err != nil {
					t.Errorf("%s: doc link [%s]: %v", w.lineOf(g, "["+l.text+"]"), l.text, err)
				}
			}
			for _, m := range w.mentions(text) {
				mentions++
				if err := w.resolveMention(m); err != nil {
					t.Errorf("%s: %s: %v", w.lineOf(g, m.text), m.text, err)
				}
			}
		}
	}
	t.Logf("%d packages: %d doc links and %d mentions of the repository's packages checked", len(w.repo), links, mentions)
	if links == 0 || mentions == 0 {
		t.Errorf("found %d doc links and %d mentions: the scan is broken", links, mentions)
	}
}

// lineOf returns file:line of the first line of g that holds s (of g's
// start if none does: s spans lines).
func (w *world) lineOf(g *ast.CommentGroup, s string) string {
	pos := g.Pos()
	for _, c := range g.List {
		if strings.Contains(c.Text, s) {
			pos = c.Pos()
			break
		}
	}
	p := w.fset.Position(pos)
	return fmt.Sprintf("%s:%d", strings.TrimPrefix(p.Filename, w.root+"/"), p.Line)
}

// linkPackage returns the package lookup of c's doc links: a name is a
// package (and [name] or [name.X] a link to check) when it is an
// identifier that c imports or declares as its own name, a single-element
// standard library path, or the name of one of the repository's packages
// (which c then does not import: such a link renders as plain text, and
// fails the test). Any other [word] is left as text, as go/doc does.
func (w *world) linkPackage(c *checked) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if !isIdent(name) {
			return "", false
		}
		if c.imports[name] != "" || name == c.Name || w.byPath[name] != nil {
			return name, true
		}
		return name, w.anyName(name)
	}
}

// anyName reports whether one of the repository's packages is named name.
func (w *world) anyName(name string) bool {
	w.namesOnce.Do(func() {
		w.names = map[string]bool{}
		for _, c := range w.repo {
			if c.Name != "main" {
				w.names[c.Name] = true
			}
		}
	})
	return w.names[name]
}

// docComments returns every doc comment of the files: the package's, and
// those of declarations, specs, struct fields and interface methods.
func docComments(files []*ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	add := func(g *ast.CommentGroup) {
		if g != nil {
			out = append(out, g)
		}
	}
	for _, f := range files {
		add(f.Doc)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GenDecl:
				add(n.Doc)
			case *ast.FuncDecl:
				add(n.Doc)
			case *ast.TypeSpec:
				add(n.Doc)
			case *ast.ValueSpec:
				add(n.Doc)
			case *ast.Field:
				add(n.Doc)
			}
			return true
		})
	}
	return out
}

// link is one doc link: [pkg.Recv.Name] with each part possibly empty.
type link struct {
	text            string
	pkg, recv, name string
}

// docLinks returns the doc links of a doc comment's text: everything the
// go/doc/comment parser would make a link if every package name and every
// symbol existed (the real parser leaves a link that does not resolve as
// plain text, which is how links rot unseen).
func docLinks(text string, lookupPackage func(string) (string, bool)) []link {
	p := comment.Parser{
		LookupPackage: lookupPackage,
		LookupSym:     func(recv, name string) bool { return true },
	}
	var out []link
	var walkText func([]comment.Text)
	walkText = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case *comment.DocLink:
				var b strings.Builder
				for _, x := range t.Text {
					if p, ok := x.(comment.Plain); ok {
						b.WriteString(string(p))
					}
				}
				out = append(out, link{text: b.String(), pkg: t.ImportPath, recv: t.Recv, name: t.Name})
			case *comment.Link:
				walkText(t.Text)
			case *comment.Italic, comment.Plain:
			}
		}
	}
	for _, b := range p.Parse(text).Content {
		switch b := b.(type) {
		case *comment.Paragraph:
			walkText(b.Text)
		case *comment.Heading:
			walkText(b.Text)
		case *comment.List:
			for _, it := range b.Items {
				for _, c := range it.Content {
					if p, ok := c.(*comment.Paragraph); ok {
						walkText(p.Text)
					}
				}
			}
		}
	}
	return out
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(unicode.IsLetter(r) || r == '_' || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

// resolveLink resolves a doc link of package c as go/doc does: a link
// without a package names a declaration of c (or a predeclared one); a
// package name is one c imports, c's own, a single-element standard
// library path, or a full import path.
func (w *world) resolveLink(c *checked, l link) error {
	if l.pkg == "" {
		if l.recv != "" {
			return resolveSel(c.types, l.recv, l.name)
		}
		if c.types.Scope().Lookup(l.name) != nil || types.Universe.Lookup(l.name) != nil {
			return nil
		}
		return fmt.Errorf("%s declares no %s", c.ImportPath, l.name)
	}
	path := l.pkg
	if !strings.Contains(path, "/") {
		switch {
		case c.imports[path] != "":
			path = c.imports[path]
		case path == c.Name:
			path = c.ImportPath
		case w.byPath[path] != nil && w.byPath[path].Standard:
		default:
			if l.name == "" {
				return fmt.Errorf("no package %s: %s imports no package of that name (a link to another package needs its import, or its full path: [%s/...])", path, c.ImportPath, repoModule)
			}
			return fmt.Errorf("no package %s: %s imports no package of that name (write [path/to/%s.%s], or import it)", path, c.ImportPath, path, l.name)
		}
	}
	pkg, err := w.pkgTypes(path)
	if err != nil {
		return err
	}
	if l.name == "" {
		return nil
	}
	if l.recv != "" {
		return resolveSel(pkg, l.recv, l.name)
	}
	return resolveSel(pkg, l.name, "")
}

// mention is pkg.Name or pkg.Name.Sel in text, pkg one of the repository's
// packages.
type mention struct {
	text           string
	pkg            *checked
	name, selector string
}

var mentionRE = regexp.MustCompile(`(^|[^\w./-])([a-z][a-z0-9]*)\.([A-Z]\w*)(\.[A-Z]\w*)?`)

// mentions returns the mentions of the repository's packages in text.
func (w *world) mentions(text string) []mention {
	var out []mention
	for _, m := range mentionRE.FindAllStringSubmatch(text, -1) {
		c := w.byName[m[2]]
		if c == nil {
			continue
		}
		out = append(out, mention{text: m[2] + "." + m[3] + m[4], pkg: c, name: m[3], selector: strings.TrimPrefix(m[4], ".")})
	}
	return out
}

func (w *world) resolveMention(m mention) error {
	err := resolveSel(m.pkg.types, m.name, m.selector)
	if err != nil && m.selector != "" {
		// pkg.Func.Something in prose ("mcphttp.New.") is no selector.
		if obj := m.pkg.types.Scope().Lookup(m.name); obj != nil {
			if _, isType := obj.(*types.TypeName); !isType {
				return nil
			}
		}
	}
	return err
}

// readmeMentions returns the mentions in README text, sorted and unique.
func (w *world) readmeMentions(text string) []mention {
	seen := map[string]bool{}
	var out []mention
	for _, m := range w.mentions(text) {
		if !seen[m.text] {
			seen[m.text] = true
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].text < out[j].text })
	return out
}
