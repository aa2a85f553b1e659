package apicheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// readmeEnv declares the names that README.md's prose introduces and its
// Go blocks use without declaring them: the service's database, the
// inventory and authenticator built in an earlier block, a request's
// context, alice's principal... A block that declares one of them itself
// (notes := ...) shadows it.
const readmeEnv = `package readme

import (
	"context"
	"database/sql"
	"net/http"
	"testing"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
)

var (
	ctx        context.Context      // a request's context
	db         *sql.DB              // the service's database
	t          *testing.T           // a test of the service
	handler    http.Handler         // the service's handler
	issuer     string               // the authorization server's issuer URL
	auth       *authn.Authenticator // the service's bearer verifier
	inv        *inventory.Inventory // the service's inventory
	hub        *notify.Hub          // the notification hub
	alice      principal.Principal  // a caller
	statics    []inventory.Resource // the service's static resources
	notes      inventory.Template   // the List callback's template (the first block)
	reports    inventory.Template   // a template the gates block opens
	docs       inventory.Template   // a template the search block gives a Search callback
	readNote   inventory.ReadFunc   // notes' Read callback
	countWords tools.Tool           // a tool of the service's own

	readSkillFile    inventory.ReadFunc                                       // the skills' files' Read callback
	skillNamesAfter  func(owner, after string, limit int) []string            // the skills section's store
	filesOf          func(owner, name string) []skills.SourceFile             // the skills section's store
)
`

// block is one fenced Go code block of a README.
type block struct {
	file string // the README's path from the repository root
	line int    // README line of the block's first code line
	code string
	skip string // the reason of an <!-- apicheck: skip REASON --> marker
}

var skipRE = regexp.MustCompile(`^<!--\s*apicheck:\s*skip\s+(.+?)\s*-->\s*$`)

// readmeBlocks returns README's fenced Go blocks (```go).
func readmeBlocks(text string) []block {
	var out []block
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		b := block{line: i + 2}
		if i > 0 {
			if m := skipRE.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				b.skip = m[1]
			}
		}
		var code []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			code = append(code, lines[i])
		}
		b.code = strings.Join(code, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

func readREADME(t *testing.T, w *world) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readme is one README.md of the repository: its path from the root and
// its text.
type readme struct{ path, text string }

// readmes returns every README.md of the repository (the root's first),
// outside .git, node_modules and testdata.
func readmes(t *testing.T, w *world) []readme {
	t.Helper()
	out := []readme{{"README.md", readREADME(t, w)}}
	err := filepath.WalkDir(w.root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != w.root) {
			return filepath.SkipDir
		}
		if d.Name() != "README.md" || filepath.Dir(path) == w.root {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.root, path)
		out = append(out, readme{filepath.ToSlash(rel), string(b)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestREADMECodeBlocks compiles every Go block of every README (see the
// package documentation for the scheme).
func TestREADMECodeBlocks(t *testing.T) {
	w := load(t)
	for _, r := range readmes(t, w) {
		blocks := readmeBlocks(r.text)
		compiled, skipped := 0, 0
		var wrapped []block
		for _, b := range blocks {
			b.file = r.path
			switch {
			case b.skip != "":
				skipped++
				t.Logf("%s:%d: not compiled: %s", r.path, b.line, b.skip)
			case regexp.MustCompile(`(?m)^package \w+`).MatchString(b.code):
				compiled++
				if err := w.compile("readme", []string{fmt.Sprintf("//line %s:%d\n%s", r.path, b.line, b.code)}); err != nil {
					t.Errorf("%v", err)
				}
			default:
				compiled++
				wrapped = append(wrapped, b)
			}
		}
		// The wrapped blocks are compiled one by one, each with the
		// environment, so that an error names its own block.
		for _, b := range wrapped {
			src, err := w.wrap(b)
			if err == nil {
				err = w.compile("readme", []string{readmeEnv, src})
			}
			if err != nil {
				t.Errorf("%v", err)
			}
		}
		t.Logf("%s: %d Go blocks, %d compiled (%d as function bodies), %d skipped", r.path, len(blocks), compiled, len(wrapped), skipped)
		if r.path == "README.md" && compiled == 0 {
			t.Error("no Go block found in README.md: the scan is broken")
		}
	}
}

// wrap makes block b the body of func _() in package readme, importing
// the packages whose names it uses.
func (w *world) wrap(b block) (string, error) {
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`(^|[^\w.])([a-z][a-z0-9]*)\.[A-Za-z_]`).FindAllStringSubmatch(b.code, -1) {
		used[m[2]] = true
	}
	env := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\t(\w+)\s`).FindAllStringSubmatch(readmeEnv, -1) {
		env[m[1]] = true
	}
	var imports []string
	for name := range used {
		if env[name] {
			continue
		}
		if path := w.importFor(name); path != "" {
			imports = append(imports, fmt.Sprintf("%s %q", name, path))
		}
	}
	sort.Strings(imports)
	var src strings.Builder
	src.WriteString("package readme\n\nimport (\n")
	for _, imp := range imports {
		src.WriteString("\t" + imp + "\n")
	}
	src.WriteString(")\n\nfunc _() {\n")
	file := b.file
	if file == "" {
		file = "README.md"
	}
	fmt.Fprintf(&src, "//line %s:%d\n", file, b.line)
	src.WriteString(b.code)
	src.WriteString("}\n")
	return src.String(), nil
}

// importFor returns the import path of the package a README block means by
// name: one of this repository's (not main, not internal), else a standard
// library package, else a workspace dependency; "" when none or several.
func (w *world) importFor(name string) string {
	var repo, std, other []string
	for path, p := range w.byPath {
		if p.Name != name || p.Name == "main" || strings.Contains(path, "internal") || strings.Contains(path, "vendor/") {
			continue
		}
		switch {
		case inRepo(path):
			repo = append(repo, path)
		case p.Standard:
			std = append(std, path)
		default:
			other = append(other, path)
		}
	}
	for _, set := range [][]string{repo, std, other} {
		if len(set) == 1 {
			return set[0]
		}
		if len(set) > 1 {
			return ""
		}
	}
	return ""
}

// compile type-checks the sources as one package. Unused variables and
// imports are allowed (a block shows a step, not a program); every other
// error is returned, at its README line.
func (w *world) compile(pkgName string, sources []string) error {
	var files []*ast.File
	for i, src := range sources {
		f, err := parser.ParseFile(w.fset, fmt.Sprintf("readme%d.go", i), src, parser.ParseComments)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	var errs []string
	conf := types.Config{
		Importer: w.imp,
		Error: func(err error) {
			te, ok := err.(types.Error)
			if ok && te.Soft && (strings.Contains(te.Msg, "declared and not used") || strings.Contains(te.Msg, "imported and not used")) {
				return
			}
			errs = append(errs, err.Error())
		},
	}
	_, _ = conf.Check(pkgName, w.fset, files, nil)
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// TestREADMENames checks that every pkg.Name (and pkg.Name.Selector) of
// one of this repository's packages that a README mentions resolves.
func TestREADMENames(t *testing.T) {
	w := load(t)
	for _, r := range readmes(t, w) {
		ms := w.readmeMentions(r.text)
		for _, m := range ms {
			if err := w.resolveMention(m); err != nil {
				line := 1 + strings.Count(r.text[:strings.Index(r.text, m.text)], "\n")
				t.Errorf("%s:%d: %s: %v", r.path, line, m.text, err)
			}
		}
		t.Logf("%s: %d distinct names of the repository's packages checked", r.path, len(ms))
		if r.path == "README.md" && len(ms) == 0 {
			t.Error("no name found in README.md: the scan is broken")
		}
	}
}
