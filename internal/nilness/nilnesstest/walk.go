// Package nilnesstest walks the option structs of a module with typed
// nils and zero values: the one test, in each module, that misuse of an
// option is an error at construction, or works, and never a panic.
package nilnesstest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"log/slog"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Case is one option struct and the constructor that takes it.
type Case struct {
	// Options is the struct's valid base value (what the walk changes
	// one field at a time).
	Options any
	// Build constructs from opts (a value of Options' type) and, when
	// that succeeds, uses what it built as a request would (each panic
	// is a failure); it returns the construction's error. Nil: the
	// struct has no field of interface or pointer type to walk, which
	// the walk checks.
	Build func(t *testing.T, opts any) error
}

// Walk sets, one at a time, each exported field of interface type of
// each case's Options (nested structs included) to every typed nil of
// the types of pool that implement it, and to a zero value of each of
// those types that is a struct of module (one not made by its
// constructor); and each field that is a pointer to a struct of module
// to a pointer to a zero value. Build must then return an error or work;
// a panic in it, or a field of interface type no pool type implements,
// fails the test. pool holds values whose dynamic types are the
// candidates: (*T)(nil), or a nil function of a named type.
func Walk(t *testing.T, module string, pool []any, cases []Case) {
	t.Helper()
	for _, c := range cases {
		typ := reflect.TypeOf(c.Options)
		for _, f := range fields(typ, nil) {
			name := typ.String() + "." + f.path
			var values []reflect.Value
			switch f.typ.Kind() {
			case reflect.Interface:
				for _, p := range pool {
					pt := reflect.TypeOf(p)
					if !pt.Implements(f.typ) {
						continue
					}
					values = append(values, reflect.Zero(pt))
					if pt.Kind() == reflect.Pointer && ofModule(pt.Elem(), module) && pt.Elem().Kind() == reflect.Struct && !strings.HasSuffix(pt.Elem().PkgPath(), "_test") {
						values = append(values, reflect.New(pt.Elem()))
					}
				}
				if len(values) == 0 {
					t.Errorf("%s (%s): no type of the pool implements it; add one", name, f.typ)
					continue
				}
			case reflect.Pointer:
				if !ofModule(f.typ.Elem(), module) || f.typ.Elem().Kind() != reflect.Struct {
					continue // the standard library's or another module's: nil is its default
				}
				values = append(values, reflect.New(f.typ.Elem()))
			default:
				continue
			}
			if c.Build == nil {
				t.Errorf("%s (%s): the case has no Build to walk it with", name, f.typ)
				continue
			}
			for _, v := range values {
				opts := reflect.New(typ).Elem()
				opts.Set(reflect.ValueOf(c.Options))
				opts.FieldByIndex(f.index).Set(v)
				what := fmt.Sprintf("%s = %s", name, describe(v))
				var logs strings.Builder
				old := slog.Default()
				slog.SetDefault(slog.New(slog.NewTextHandler(&lockedWriter{w: &logs}, nil)))
				func() {
					defer func() {
						slog.SetDefault(old)
						if r := recover(); r != nil {
							t.Errorf("%s: panic: %v", what, r)
						}
					}()
					err := c.Build(t, opts.Interface())
					t.Logf("%s: %v", what, err)
				}()
				// A panic a part recovered (and logged) is a panic too.
				if l := logs.String(); strings.Contains(l, "panic") {
					line, _, _ := strings.Cut(l[strings.Index(l, "panic"):], "\n")
					t.Errorf("%s: a recovered panic: %.300s", what, line)
				}
			}
		}
	}
}

// lockedWriter serialises the writes of the loggers of several
// goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// describe names a typed nil or a zero value.
func describe(v reflect.Value) string {
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		return "&" + v.Type().Elem().String() + "{}"
	}
	return v.Type().String() + "(nil)"
}

// ofModule reports whether t is a named type of a package of module.
func ofModule(t reflect.Type, module string) bool {
	p := t.PkgPath()
	return p == module || strings.HasPrefix(p, module+"/")
}

type field struct {
	path  string
	index []int
	typ   reflect.Type
}

// fields lists the exported fields of struct type t, those of its
// struct-typed fields in place of them.
func fields(t reflect.Type, index []int) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		idx := append(append([]int(nil), index...), i)
		if f.Type.Kind() == reflect.Struct {
			for _, sub := range fields(f.Type, idx) {
				sub.path = f.Name + "." + sub.path
				out = append(out, sub)
			}
			continue
		}
		out = append(out, field{path: f.Name, index: idx, typ: f.Type})
	}
	return out
}

// OptionStructs returns "package.Name" of every exported struct type
// whose name ends in Options, Limits or Config declared in the non-test
// Go files under dir (testdata, internal and directories starting with
// "." or "_" left out; skip names directories, relative to dir, left out too).
func OptionStructs(t *testing.T, dir string, skip ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			n := d.Name()
			if p != dir && (n == "testdata" || n == "internal" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "node_modules") {
				return filepath.SkipDir
			}
			for _, s := range skip {
				if rel == s {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				ts, ok := s.(*ast.TypeSpec)
				if !ok || !ts.Name.IsExported() {
					continue
				}
				if _, ok := ts.Type.(*ast.StructType); !ok {
					continue
				}
				n := ts.Name.Name
				if strings.HasSuffix(n, "Options") || strings.HasSuffix(n, "Limits") || strings.HasSuffix(n, "Config") {
					out = append(out, f.Name.Name+"."+n)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// Covers fails the test for each struct of want (OptionStructs) that no
// case's Options is.
func Covers(t *testing.T, want []string, cases []Case) {
	t.Helper()
	have := map[string]bool{}
	for _, c := range cases {
		have[reflect.TypeOf(c.Options).String()] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("%s: an option struct the walk has no case for; add one", w)
		}
	}
}
