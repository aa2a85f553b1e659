package apicheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// repoModule is the path of the repository's root module.
const repoModule = "github.com/mcpkit/mcpkit"

// listed is one package as go list -json describes it.
type listed struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	Export     string
	Standard   bool
	DepOnly    bool
	Module     *struct{ Path, Dir string }
	Error      *struct{ Err string }
}

// checked is one of the repository's packages, type-checked from source.
type checked struct {
	*listed
	files   []*ast.File
	types   *types.Package
	imports map[string]string // name used in the package's files -> import path
}

// world is everything the tests load once: the workspace's packages and
// their dependencies, and the repository's packages type-checked.
type world struct {
	root     string // the repository root (go.work's directory)
	fset     *token.FileSet
	byPath   map[string]*listed
	imp      types.ImporterFrom // export data of every listed package
	repo     []*checked         // the repository's packages, sorted by path
	repoByIP map[string]*checked
	byName   map[string]*checked // the repository's non-main packages by name (unique names only)

	namesOnce sync.Once
	names     map[string]bool // the names of the repository's packages
}

var (
	loadOnce sync.Once
	loaded   *world
	loadErr  error
)

// load loads the world once for every test of the package.
func load(t *testing.T) *world {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = loadWorld() })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded
}

func loadWorld() (*world, error) {
	out, err := exec.Command("go", "env", "GOWORK").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOWORK: %v", err)
	}
	work := strings.TrimSpace(string(out))
	if work == "" || work == "off" {
		return nil, errors.New("no workspace: these tests read every module through the repository's go.work; run them from the repository without GOWORK=off")
	}
	w := &world{root: filepath.Dir(work), fset: token.NewFileSet(), byPath: map[string]*listed{}, repoByIP: map[string]*checked{}, byName: map[string]*checked{}}

	var patterns []string
	cmd := exec.Command("go", "work", "edit", "-json")
	cmd.Dir = w.root
	out, err = cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go work edit -json: %v", err)
	}
	var wf struct{ Use []struct{ DiskPath string } }
	if err := json.Unmarshal(out, &wf); err != nil {
		return nil, fmt.Errorf("go work edit -json: %v", err)
	}
	for _, u := range wf.Use {
		patterns = append(patterns, "./"+filepath.ToSlash(filepath.Clean(u.DiskPath))+"/...")
	}

	var stderr bytes.Buffer
	cmd = exec.Command("go", append([]string{"list", "-e", "-export", "-deps", "-json=ImportPath,Name,Dir,GoFiles,Export,Standard,DepOnly,Module,Error"}, patterns...)...)
	cmd.Dir = w.root
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export -deps %s: %v\n%s", strings.Join(patterns, " "), err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(listed)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %v", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		w.byPath[p.ImportPath] = p
	}
	w.imp = importer.ForCompiler(w.fset, "gc", func(path string) (io.ReadCloser, error) {
		p := w.byPath[path]
		if p == nil || p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	}).(types.ImporterFrom)

	names := map[string]int{}
	for _, p := range w.byPath {
		if !inRepo(p.ImportPath) {
			continue
		}
		c, err := w.check(p)
		if err != nil {
			return nil, err
		}
		w.repo = append(w.repo, c)
		w.repoByIP[p.ImportPath] = c
		if p.Name != "main" {
			names[p.Name]++
			w.byName[p.Name] = c
		}
	}
	for n, k := range names {
		if k > 1 {
			delete(w.byName, n) // ambiguous: mentions of it are not checked
		}
	}
	sort.Slice(w.repo, func(i, j int) bool { return w.repo[i].ImportPath < w.repo[j].ImportPath })
	return w, nil
}

// inRepo reports whether path is a package of this repository.
func inRepo(path string) bool {
	return path == repoModule || strings.HasPrefix(path, repoModule+"/")
}

// check parses and type-checks one of the repository's packages (its
// non-test files) with the export data of its dependencies.
func (w *world) check(p *listed) (*checked, error) {
	c := &checked{listed: p, imports: map[string]string{}}
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(w.fset, filepath.Join(p.Dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		c.files = append(c.files, f)
		for _, s := range f.Imports {
			path := strings.Trim(s.Path.Value, `"`)
			name := ""
			if s.Name != nil {
				name = s.Name.Name
			} else if d := w.byPath[path]; d != nil {
				name = d.Name
			}
			if name != "" && name != "_" && name != "." {
				c.imports[name] = path
			}
		}
	}
	conf := types.Config{Importer: w.imp}
	pkg, err := conf.Check(p.ImportPath, w.fset, c.files, nil)
	if err != nil {
		return nil, fmt.Errorf("type-checking %s: %v", p.ImportPath, err)
	}
	c.types = pkg
	return c, nil
}

// pkgTypes returns the types of the package at path: the repository's from
// source, any other listed one from its export data.
func (w *world) pkgTypes(path string) (*types.Package, error) {
	if c := w.repoByIP[path]; c != nil {
		return c.types, nil
	}
	if w.byPath[path] == nil {
		return nil, fmt.Errorf("package %s is not among the workspace's packages or their dependencies", path)
	}
	return w.imp.ImportFrom(path, w.root, 0)
}

// relPath is a package's path relative to the root module ("mcphttp/sessions").
func relPath(path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, repoModule), "/")
}

// resolveSel resolves name (and sel after it, when not "") in pkg: a
// declaration of the package, then a field or method of its type.
func resolveSel(pkg *types.Package, name, sel string) error {
	obj := pkg.Scope().Lookup(name)
	if obj == nil {
		return fmt.Errorf("%s has no %s", pkg.Path(), name)
	}
	if sel == "" {
		return nil
	}
	tn, ok := obj.(*types.TypeName)
	if !ok {
		return fmt.Errorf("%s.%s is a %s, not a type: it has no %s", pkg.Name(), name, kind(obj), sel)
	}
	if f, _, _ := types.LookupFieldOrMethod(tn.Type(), true, pkg, sel); f == nil {
		return fmt.Errorf("%s.%s has no field or method %s", pkg.Name(), name, sel)
	}
	return nil
}

func kind(obj types.Object) string {
	switch obj.(type) {
	case *types.Func:
		return "func"
	case *types.Var:
		return "var"
	case *types.Const:
		return "const"
	}
	return "declaration"
}
