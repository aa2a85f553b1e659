package apicheck

import (
	"flag"
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "TestAPI: rewrite the api/ files from the packages (after a reviewed API change)")

const updateCommand = "go test ./internal/apicheck -update"

// apiPackage reports whether the package at path has an api/ file: every
// package of every module but the examples module and internal packages.
func apiPackage(c *checked) bool {
	rel := relPath(c.ImportPath)
	if c.Name == "main" || rel == "examples" || strings.HasPrefix(rel, "examples/") {
		return false
	}
	for _, part := range strings.Split(rel, "/") {
		if part == "internal" {
			return false
		}
	}
	return true
}

// TestAPI compares every package's exported API with its api/ file (see
// the package documentation).
func TestAPI(t *testing.T) {
	w := load(t)
	dir := filepath.Join(w.root, "api")
	want := map[string]string{} // file (relative to api/) -> content
	for _, c := range w.repo {
		if !apiPackage(c) {
			continue
		}
		lines := apiLines(c.types)
		want[relPath(c.ImportPath)+".txt"] = strings.Join(lines, "\n") + "\n"
		t.Logf("%-28s %3d lines, %3d exported top-level names", relPath(c.ImportPath), len(lines), topLevel(c.types))
	}
	have := readAPIFiles(dir)
	if *update {
		writeAPIFiles(t, dir, want, have)
		return
	}
	compareAPIFiles(t, want, have)
}

// readAPIFiles returns the api/ files under dir: name (relative, with
// slashes) -> content.
func readAPIFiles(dir string) map[string]string {
	have := map[string]string{}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".txt") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err == nil {
			rel, _ := filepath.Rel(dir, path)
			have[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	return have
}

// writeAPIFiles makes the api/ files under dir what want says: removes
// those of packages gone and writes those that differ.
func writeAPIFiles(t *testing.T, dir string, want, have map[string]string) {
	for name := range have {
		if _, ok := want[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, content := range want {
		if have[name] == content {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote api/%s", name)
	}
}

// compareAPIFiles fails t for each api/ file that differs from want,
// naming the lines added and removed.
func compareAPIFiles(t *testing.T, want, have map[string]string) {
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	failed := false
	for _, name := range names {
		w, h := want[name], have[name]
		if w == h {
			continue
		}
		failed = true
		switch {
		case h == "" && w != "":
			t.Errorf("api/%s is missing (a new package?)", name)
		case w == "":
			t.Errorf("api/%s describes a package that no longer exists", name)
		default:
			added, removed := lineDiff(strings.Split(h, "\n"), strings.Split(w, "\n"))
			var b strings.Builder
			for _, l := range removed {
				fmt.Fprintf(&b, "\n\t- %s", l)
			}
			for _, l := range added {
				fmt.Fprintf(&b, "\n\t+ %s", l)
			}
			t.Errorf("api/%s differs from the package's exported API:%s", name, b.String())
		}
	}
	if failed {
		t.Errorf("the exported API changed: review it, then rewrite the files with\n\t%s\nand commit api/ with the change", updateCommand)
	}
}

// lineDiff returns the lines of b not in a, and of a not in b (both
// sorted line lists, so a set difference is the diff).
func lineDiff(a, b []string) (added, removed []string) {
	in := func(s []string) map[string]bool {
		m := map[string]bool{}
		for _, l := range s {
			if l != "" {
				m[l] = true
			}
		}
		return m
	}
	ma, mb := in(a), in(b)
	for _, l := range b {
		if l != "" && !ma[l] {
			added = append(added, l)
		}
	}
	for _, l := range a {
		if l != "" && !mb[l] {
			removed = append(removed, l)
		}
	}
	return added, removed
}

func topLevel(pkg *types.Package) int {
	n := 0
	for _, name := range pkg.Scope().Names() {
		if obj := pkg.Scope().Lookup(name); obj.Exported() {
			n++
		}
	}
	return n
}

// apiLines returns pkg's exported API, sorted, one line per exported
// identifier: each constant (type and value), variable, function, type
// (its underlying type, or struct / interface), exported struct field,
// interface method and method of a type's method set (promoted ones
// included), each with its signature. Other packages are named by their
// names (http.Handler), pkg's own names unqualified.
func apiLines(pkg *types.Package) []string {
	a := &apiWriter{pkg: pkg, prefix: "pkg " + relPath(pkg.Path()) + ", "}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			a.add("const %s %s = %s", name, a.ts(o.Type()), o.Val().ExactString())
		case *types.Var:
			a.add("var %s %s", name, a.ts(o.Type()))
		case *types.Func:
			a.add("func %s%s", name, a.sig(o.Type().(*types.Signature)))
		case *types.TypeName:
			a.typeName(name, o)
		}
	}
	sort.Strings(a.lines)
	return a.lines
}

// apiWriter collects the API lines of pkg.
type apiWriter struct {
	pkg    *types.Package
	prefix string
	lines  []string
}

func (a *apiWriter) add(format string, args ...any) {
	a.lines = append(a.lines, a.prefix+fmt.Sprintf(format, args...))
}

// q names other packages by their names, pkg's own names unqualified.
func (a *apiWriter) q(p *types.Package) string {
	if p == a.pkg {
		return ""
	}
	return p.Name()
}

func (a *apiWriter) ts(t types.Type) string        { return types.TypeString(t, a.q) }
func (a *apiWriter) sig(s *types.Signature) string { return signature(s, a.q) }

// typeName adds the lines of an exported type: alias, underlying type,
// struct fields or interface methods, and its method set.
func (a *apiWriter) typeName(name string, o *types.TypeName) {
	if o.IsAlias() {
		a.add("type %s = %s", name, a.ts(types.Unalias(o.Type())))
		return
	}
	named, ok := o.Type().(*types.Named)
	if !ok {
		a.add("type %s %s", name, a.ts(o.Type()))
		return
	}
	tparams := ""
	if tp := named.TypeParams(); tp.Len() > 0 {
		var ps []string
		for i := range tp.Len() {
			p := tp.At(i)
			ps = append(ps, p.Obj().Name()+" "+a.ts(p.Constraint()))
		}
		tparams = "[" + strings.Join(ps, ", ") + "]"
	}
	switch u := named.Underlying().(type) {
	case *types.Struct:
		a.add("type %s%s struct", name, tparams)
		a.structFields(name, u)
	case *types.Interface:
		a.add("type %s%s interface", name, tparams)
		a.interfaceMethods(name, u)
		return // an interface's methods are its lines above
	case *types.Signature:
		a.add("type %s%s func%s", name, tparams, a.sig(u))
	default:
		a.add("type %s%s %s", name, tparams, a.ts(u))
	}
	a.methodSet(name, named)
}

// structFields adds the exported fields of struct type name.
func (a *apiWriter) structFields(name string, u *types.Struct) {
	for i := range u.NumFields() {
		f := u.Field(i)
		switch {
		case f.Embedded() && f.Exported():
			a.add("type %s struct, embedded %s", name, a.ts(f.Type()))
		case f.Exported():
			a.add("type %s struct, %s %s", name, f.Name(), a.ts(f.Type()))
		}
	}
}

// interfaceMethods adds the exported methods and type set terms of
// interface type name, and a line when it has unexported methods.
func (a *apiWriter) interfaceMethods(name string, u *types.Interface) {
	unexported := false
	for i := range u.NumMethods() {
		m := u.Method(i)
		if !m.Exported() {
			unexported = true
			continue
		}
		a.add("type %s interface, %s%s", name, m.Name(), a.sig(m.Type().(*types.Signature)))
	}
	for i := range u.NumEmbeddeds() {
		if _, isIface := u.EmbeddedType(i).Underlying().(*types.Interface); !isIface {
			a.add("type %s interface, %s", name, a.ts(u.EmbeddedType(i))) // a type set term
		}
	}
	if unexported {
		a.add("type %s interface, unexported methods", name)
	}
}

// methodSet adds the exported methods of named's pointer method set
// (promoted ones included), each with the receiver it needs.
func (a *apiWriter) methodSet(name string, named *types.Named) {
	ms := types.NewMethodSet(types.NewPointer(named))
	vs := types.NewMethodSet(named)
	for i := range ms.Len() {
		sel := ms.At(i)
		m := sel.Obj()
		if !m.Exported() {
			continue
		}
		recv := "*" + name
		if vs.Lookup(m.Pkg(), m.Name()) != nil {
			recv = name
		}
		a.add("method (%s) %s%s", recv, m.Name(), a.sig(m.Type().(*types.Signature)))
	}
}

// signature is s without parameter names, as Go's api files write it
// ([T any](int, ...string) (T, error)): a renamed parameter is no API change.
func signature(s *types.Signature, q types.Qualifier) string {
	var b strings.Builder
	if tp := s.TypeParams(); tp.Len() > 0 {
		var ps []string
		for i := range tp.Len() {
			ps = append(ps, tp.At(i).Obj().Name()+" "+types.TypeString(tp.At(i).Constraint(), q))
		}
		b.WriteString("[" + strings.Join(ps, ", ") + "]")
	}
	tuple := func(t *types.Tuple, variadic bool) []string {
		var out []string
		for i := range t.Len() {
			typ := t.At(i).Type()
			if variadic && i == t.Len()-1 {
				out = append(out, "..."+types.TypeString(typ.(*types.Slice).Elem(), q))
				continue
			}
			out = append(out, types.TypeString(typ, q))
		}
		return out
	}
	b.WriteString("(" + strings.Join(tuple(s.Params(), s.Variadic()), ", ") + ")")
	switch res := tuple(s.Results(), false); len(res) {
	case 0:
	case 1:
		b.WriteString(" " + res[0])
	default:
		b.WriteString(" (" + strings.Join(res, ", ") + ")")
	}
	return b.String()
}
