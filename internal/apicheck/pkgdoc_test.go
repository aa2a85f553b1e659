package apicheck

import (
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docEnv declares the names that package docs' code blocks use without
// declaring them, as readmeEnv does for the READMEs: a request's context,
// the service's mux, inventory and authenticator, a legacy handler... One
// var a line: a block that declares one of these names at the top level
// (func auth(...)) compiles without that line.
const docEnv = `package doc

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/upstream"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/audit"
	"github.com/mcpkit/mcpkit/mcphttp/origin"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
)

type sessionUserT struct {
	ID     string
	Scopes []string
}

var (
	ctx         context.Context                                       // a request's context
	t           *testing.T                                            // a test of the service
	db          *sql.DB                                               // the service's database
	dsn         string                                                // its connection string
	addr        string                                                // the address the service listens on
	issuer      string                                                // the authorization server's issuer URL
	mux         *http.ServeMux                                        // the service's mux
	w           http.ResponseWriter                                   // a response being written
	body        []byte                                                // a request's body
	result      json.RawMessage                                       // a method's result
	mcpHandler  http.Handler                                          // the service's MCP handler
	api         http.Handler                                          // the service's other handlers
	legacy      http.Handler                                          // a legacy MCP server's handler (go-sdk, mcp-go)
	serviceAuth func(http.Handler) http.Handler                       // the service's own auth middleware
	sessionUser func(*http.Request) (sessionUserT, bool)               // the service's session lookup
	logger      *slog.Logger                                          // the service's logger
	f           *os.File                                              // an open log file
	v           authn.Verifier                                        // the bearer verifier
	cache       authn.Verifier                                        // the verifier behind its cache
	auth        *authn.Authenticator                                  // the service's authenticator
	inv         *inventory.Inventory                                  // the service's inventory
	opts        mcphttp.Options                                       // the endpoint's options
	part        mcphttp.Part                                          // a part (tools.New, sessions.New)
	toolsPart   mcphttp.Part                                          // from tools.New
	myTool      tools.Tool                                            // a tool of the service's own
	guard       *origin.Guard                                         // the service's Origin guard
	limiter     *ratelimit.Limiter                                    // its rate limiter
	lim         *ratelimit.Limiter                                    // the same
	tracing     mcphttp.Observer                                      // an otelmcp observer
	trail       *audit.Audit                                          // an audit trail
	hub         *notify.Hub                                           // the notification hub
	broker      notify.Broker                                         // a fleet's broker
	sharedLog   notify.EventLog                                       // a fleet's event log
	lastID      string                                                // a stream's Last-Event-ID
	alice       principal.Principal                                   // a caller
	caller      principal.Principal                                   // the caller
	req         inventory.ListRequest                                 // a List callback's request
	id          string                                                // a record's id
	changelog   string                                                // a resource's text
	readDocument inventory.ReadFunc                                   // a template's Read callback
	readTagged  inventory.ReadFunc                                    // another
	readReport  inventory.ReadFunc                                    // another
	grantsInDB  grants.Store                                          // grants in the application's tables
	binding     []byte                                                // what a cursor is bound to
	position    []byte                                                // a cursor's payload
	photosOpts  upstream.GrantOptions                                 // an upstream's grant options
	first       time.Time                                             // a traversal's first page time

	openTestDB         func(testing.TB) *sql.DB                        // a test's seeded database
	documentsTemplate  func(*sql.DB) inventory.Template                // the service's template
	newSkillsInventory func(testing.TB) (*inventory.Inventory, skills.Source) // a test's seeded skills
)
`

// docBlock is one code block of a package doc comment.
type docBlock struct {
	block
	pkg *checked
}

// packageDocBlocks returns the code blocks of the doc comments of every
// package the world holds: each file's package doc, and the docs of its
// declarations (types, functions, methods, fields, vars, consts).
func (w *world) packageDocBlocks() []docBlock {
	var out []docBlock
	for _, c := range w.repo {
		for _, g := range docComments(c.files) {
			var p comment.Parser
			from := 0 // comment line to search from, so repeated lines keep their order
			for _, b := range p.Parse(g.Text()).Content {
				code, ok := b.(*comment.Code)
				if !ok {
					continue
				}
				file, line, next := w.codeLine(g, code.Text, from)
				from = next
				out = append(out, docBlock{block: block{file: file, line: line, code: code.Text}, pkg: c})
			}
		}
	}
	return out
}

// codeLine returns the file and line of code's first non-empty line in g,
// searching g's comments from index from, and the index after it.
func (w *world) codeLine(g *ast.CommentGroup, code string, from int) (string, int, int) {
	first := ""
	for _, l := range strings.Split(code, "\n") {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(l)
			break
		}
	}
	pos, next := g.Pos(), from
	for i := from; i < len(g.List); i++ {
		if strings.Contains(g.List[i].Text, first) {
			pos, next = g.List[i].Pos(), i+1
			break
		}
	}
	p := w.fset.Position(pos)
	return strings.TrimPrefix(p.Filename, w.root+"/"), p.Line, next
}

// looksGo matches what only Go text holds among the non-Go blocks of the
// package docs (shell commands, route and error tables, SQL, formats): a
// short variable declaration, a func keyword, an err variable, or a call
// of a package's function (pkg.Name().
var looksGo = regexp.MustCompile(`:=|\bfunc\b|\berr\b|(^|[^\w./-])[a-z][a-z0-9]*\.[A-Z]\w*\(`)

// classify says what a package doc block is: "file" (it has a package
// clause), "decls" (it parses as top-level declarations), "body" (it
// parses as a function body) or "text" (it parses as none: not Go).
func classify(code string) string {
	fset := token.NewFileSet()
	if regexp.MustCompile(`(?m)^package \w+`).MatchString(code) {
		return "file"
	}
	if _, err := parser.ParseFile(fset, "", "package p\n"+code, 0); err == nil {
		return "decls"
	}
	f, err := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+code+"\n}\n", 0)
	if err != nil {
		return "text"
	}
	// Statements that are all expressions but no call (a path list like
	// DIR/alice/SKILL.md parses as divisions) or labels (a URL list:
	// https://... is a label and a comment) are not Go either: Go refuses
	// an unused expression and a label without use.
	for _, st := range f.Decls[0].(*ast.FuncDecl).Body.List {
		if !notGoStmt(st) {
			return "body"
		}
	}
	return "text"
}

// notGoStmt reports whether st is what text parsed as Go gives: an
// expression statement that is no call or receive, a label, or nothing.
func notGoStmt(st ast.Stmt) bool {
	switch st := st.(type) {
	case *ast.EmptyStmt:
		return true
	case *ast.LabeledStmt:
		return notGoStmt(st.Stmt)
	case *ast.ExprStmt:
		switch x := st.X.(type) {
		case *ast.CallExpr:
			return false
		case *ast.UnaryExpr:
			return x.Op != token.ARROW
		}
		return true
	}
	return false
}

// TestPackageDocCodeBlocks compiles the code blocks of every doc comment
// (package docs and declarations' docs) of every package of every module
// (see the package documentation for the scheme).
func TestPackageDocCodeBlocks(t *testing.T) {
	w := load(t)
	blocks := w.packageDocBlocks()
	count := map[string]int{}
	for _, b := range blocks {
		kind := classify(b.code)
		count[kind]++
		if kind == "text" {
			if m := looksGo.FindString(b.code); m != "" {
				_, err := parser.ParseFile(token.NewFileSet(), "", "package p\nfunc _() {\n"+b.code+"\n}\n", 0)
				t.Errorf("%s:%d: a block with Go in it (%q) does not parse as Go: %v", b.file, b.line, m, err)
			} else {
				t.Logf("%s:%d: not Go, not compiled", b.file, b.line)
			}
			continue
		}
		if err := w.compileDocBlock(b, kind); err != nil {
			t.Errorf("%v", err)
		}
	}
	t.Logf("%d packages, %d code blocks of doc comments: %d compiled as files, %d as declarations, %d as function bodies, %d not Go",
		len(w.repo), len(blocks), count["file"], count["decls"], count["body"], count["text"])
	if count["body"] == 0 || count["decls"] == 0 || count["text"] == 0 {
		t.Error("a kind of package doc block was not found: the scan is broken")
	}
}

// compileDocBlock compiles one Go block of a package doc: a file with a
// package clause alone; declarations as a file beside docEnv; statements
// as the body of func _() beside docEnv. The block's imports are the
// packages whose names it uses: its own package, then the packages its
// package imports, then as for README blocks, then any of the
// repository's packages (internal ones included) whose name is unique.
func (w *world) compileDocBlock(b docBlock, kind string) error {
	directive := fmt.Sprintf("//line %s:%d\n", b.file, b.line)
	if kind == "file" {
		return w.compile("doc", []string{directive + b.code})
	}
	declared := map[string]bool{}
	if kind == "decls" {
		f, _ := parser.ParseFile(token.NewFileSet(), "", "package p\n"+b.code, 0)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					declared[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							declared[n.Name] = true
						}
					case *ast.TypeSpec:
						declared[s.Name.Name] = true
					}
				}
			}
		}
	}
	var env strings.Builder
	envNames := map[string]bool{}
	nameRE := regexp.MustCompile(`^\t(\w+)\s`)
	for _, l := range strings.Split(docEnv, "\n") {
		if m := nameRE.FindStringSubmatch(l); m != nil {
			if declared[m[1]] {
				continue
			}
			envNames[m[1]] = true
		}
		env.WriteString(l + "\n")
	}

	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`(^|[^\w.])([a-z][a-z0-9]*)\.[A-Za-z_]`).FindAllStringSubmatch(b.code, -1) {
		used[m[2]] = true
	}
	var imports []string
	for name := range used {
		if envNames[name] || declared[name] {
			continue
		}
		path := ""
		switch {
		case name == b.pkg.Name && b.pkg.Name != "main":
			path = b.pkg.ImportPath
		case b.pkg.imports[name] != "":
			path = b.pkg.imports[name]
		default:
			path = w.importFor(name)
			if path == "" && w.byName[name] != nil {
				path = w.byName[name].ImportPath // an internal package of the repository's, named uniquely
			}
		}
		if path != "" {
			imports = append(imports, fmt.Sprintf("%s %q", name, path))
		}
	}
	sort.Strings(imports)
	var src strings.Builder
	src.WriteString("package doc\n\nimport (\n")
	for _, imp := range imports {
		src.WriteString("\t" + imp + "\n")
	}
	src.WriteString(")\n\n")
	if kind == "body" {
		src.WriteString("func _() {\n" + directive + b.code + "}\n")
	} else {
		src.WriteString(directive + b.code)
	}
	return w.compile("doc", []string{env.String(), src.String()})
}

// TestClassifyDocBlocks pins the rule that tells Go blocks of package docs
// from the others, and that a Go block broken into a fragment is caught.
func TestClassifyDocBlocks(t *testing.T) {
	for _, tc := range []struct{ code, kind string }{
		{"hub := notify.New(notify.Options{})\n", "body"},
		{"hub.ListChanged(ctx, \"alice\")\n", "body"},
		{"func auth(next http.Handler) http.Handler { return next }\n", "decls"},
		{"package main\n\nfunc main() {}\n", "file"},
		{"go run ./examples/documents -h\n", "text"},
		{"POST /mcp   the MCP endpoint\n", "text"},
		{"DIR/alice/pdf-processing/SKILL.md\n", "text"},
		{"https://api.example.com/mcp    → /.well-known/oauth-protected-resource/mcp\n", "text"},
		{"otel.SetErrorHandler(otelmcp.ErrorHandler(logger))\n", "body"},
		{"SELECT id FROM documents\nWHERE owner = $1\n", "text"},
		{"{\"subject\":\"bob\",\"kind\":\"list_changed\"}\n", "text"},
		{"x, err := f()\nif err != nil { ... }\n", "text"}, // caught by looksGo below
	} {
		if got := classify(tc.code); got != tc.kind {
			t.Errorf("classify(%q) = %s, want %s", tc.code, got, tc.kind)
		}
	}
	for _, code := range []string{
		"x, err := f()\nif err != nil { ... }\n",
		"ep, err := mcphttp.New(inv, mcphttp.Options{…}, part)\n",
		"srv := mcphttp.NewServer(addr, ep)\n... srv.Shutdown(ctx)\n",
	} {
		if classify(code) != "text" || !looksGo.MatchString(code) {
			t.Errorf("the fragment %q is not reported as Go that does not parse", code)
		}
	}
	for _, code := range []string{
		"go run ./examples/bench -rounds 9 -duration 3s\n",
		"CodeParseError  -32700  the body is not JSON\n",
		"version (1 byte, 0x01) ‖ key id (1) ‖ AES-256-GCM(first page time (8) ‖ payload)\n",
	} {
		if looksGo.MatchString(code) {
			t.Errorf("the text %q is taken for Go", code)
		}
	}
}

// TestDocBlockBrokenFails shows that a package doc block that stops
// compiling fails the check: principal's own doc block, with the
// function it calls renamed.
func TestDocBlockBrokenFails(t *testing.T) {
	w := load(t)
	var found bool
	for _, b := range w.packageDocBlocks() {
		if b.pkg.ImportPath != repoModule+"/principal" || !strings.Contains(b.code, "principal.NewContext(") {
			continue
		}
		found = true
		if err := w.compileDocBlock(b, classify(b.code)); err != nil {
			t.Fatalf("principal's doc block does not compile as it is: %v", err)
		}
		b.code = strings.Replace(b.code, "principal.NewContext(", "principal.NewCtx(", 1)
		err := w.compileDocBlock(b, classify(b.code))
		if err == nil || !strings.Contains(err.Error(), "principal.NewCtx") || !strings.Contains(err.Error(), "principal/doc.go:") {
			t.Errorf("a broken block compiled, or its error names neither the name nor the file: %v", err)
		}
	}
	if !found {
		t.Error("principal's doc has no block calling principal.NewContext: the scan is broken")
	}
}
