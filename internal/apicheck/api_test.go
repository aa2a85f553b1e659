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

	if *update {
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
		return
	}

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
	prefix := "pkg " + relPath(pkg.Path()) + ", "
	q := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	}
	ts := func(t types.Type) string { return types.TypeString(t, q) }
	sig := func(s *types.Signature) string { return signature(s, q) }
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, prefix+fmt.Sprintf(format, args...)) }

	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			add("const %s %s = %s", name, ts(o.Type()), o.Val().ExactString())
		case *types.Var:
			add("var %s %s", name, ts(o.Type()))
		case *types.Func:
			add("func %s%s", name, sig(o.Type().(*types.Signature)))
		case *types.TypeName:
			if o.IsAlias() {
				add("type %s = %s", name, ts(types.Unalias(o.Type())))
				continue
			}
			named, ok := o.Type().(*types.Named)
			if !ok {
				add("type %s %s", name, ts(o.Type()))
				continue
			}
			tparams := ""
			if tp := named.TypeParams(); tp.Len() > 0 {
				var ps []string
				for i := range tp.Len() {
					p := tp.At(i)
					ps = append(ps, p.Obj().Name()+" "+ts(p.Constraint()))
				}
				tparams = "[" + strings.Join(ps, ", ") + "]"
			}
			switch u := named.Underlying().(type) {
			case *types.Struct:
				add("type %s%s struct", name, tparams)
				for i := range u.NumFields() {
					f := u.Field(i)
					switch {
					case f.Embedded() && f.Exported():
						add("type %s struct, embedded %s", name, ts(f.Type()))
					case f.Exported():
						add("type %s struct, %s %s", name, f.Name(), ts(f.Type()))
					}
				}
			case *types.Interface:
				add("type %s%s interface", name, tparams)
				unexported := false
				for i := range u.NumMethods() {
					m := u.Method(i)
					if !m.Exported() {
						unexported = true
						continue
					}
					add("type %s interface, %s%s", name, m.Name(), sig(m.Type().(*types.Signature)))
				}
				for i := range u.NumEmbeddeds() {
					if _, isIface := u.EmbeddedType(i).Underlying().(*types.Interface); !isIface {
						add("type %s interface, %s", name, ts(u.EmbeddedType(i))) // a type set term
					}
				}
				if unexported {
					add("type %s interface, unexported methods", name)
				}
				continue // an interface's methods are its lines above
			case *types.Signature:
				add("type %s%s func%s", name, tparams, sig(u))
			default:
				add("type %s%s %s", name, tparams, ts(u))
			}
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
				add("method (%s) %s%s", recv, m.Name(), sig(m.Type().(*types.Signature)))
			}
		}
	}
	sort.Strings(lines)
	return lines
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
