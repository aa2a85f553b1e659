// Command importgroups checks the import blocks of Go files the way
// goimports groups them: the standard library's imports in one group, first,
// then the other modules' imports, with no group that mixes the two.
//
// It walks the directories it is given (the current directory without
// arguments), skipping testdata, node_modules and hidden directories, and
// prints one line per file that breaks the rule; it exits 1 when there is
// one. .ci/hygiene.sh runs it over the repository, which covers the four
// modules: go run ./internal/importgroups
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	roots := os.Args[1:]
	if len(roots) == 0 {
		roots = []string{"."}
	}
	var problems []string
	files := 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				name := d.Name()
				if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			ps, err := check(path, src)
			if err != nil {
				return err
			}
			problems = append(problems, ps...)
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "importgroups:", err)
			os.Exit(2)
		}
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Printf("importgroups: %d of %d files: standard library imports go in one group, first, apart from the other modules' imports (goimports)\n", len(problems), files)
		os.Exit(1)
	}
}

// check returns one line per rule src breaks, naming path and the line.
func check(path string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(src), "\n")
	var problems []string
	stdGroups, seenModule := 0, false
	for _, g := range groups(fset, f, lines) {
		std, module := 0, 0
		for _, s := range g {
			p, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				return nil, err
			}
			if p == "C" {
				continue // cgo's pseudo-package stands alone
			}
			if standard(p) {
				std++
			} else {
				module++
			}
		}
		line := fset.Position(g[0].Pos()).Line
		switch {
		case std > 0 && module > 0:
			problems = append(problems, fmt.Sprintf("%s:%d: a group mixes standard library and module imports", path, line))
		case std > 0 && seenModule:
			problems = append(problems, fmt.Sprintf("%s:%d: standard library imports after module imports", path, line))
		case std > 0 && stdGroups > 0:
			problems = append(problems, fmt.Sprintf("%s:%d: a second group of standard library imports", path, line))
		}
		if std > 0 {
			stdGroups++
		}
		if module > 0 {
			seenModule = true
		}
	}
	return problems, nil
}

// groups splits f's imports into groups: the specs of one import
// declaration not separated by a blank line. Each declaration starts a group.
func groups(fset *token.FileSet, f *ast.File, lines []string) [][]*ast.ImportSpec {
	var out [][]*ast.ImportSpec
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		var cur []*ast.ImportSpec
		prevEnd := 0
		for _, s := range gd.Specs {
			is := s.(*ast.ImportSpec)
			start := fset.Position(is.Pos()).Line
			if is.Doc != nil {
				start = fset.Position(is.Doc.Pos()).Line
			}
			if len(cur) > 0 && blankBetween(lines, prevEnd, start) {
				out = append(out, cur)
				cur = nil
			}
			cur = append(cur, is)
			prevEnd = fset.Position(is.End()).Line
		}
		if len(cur) > 0 {
			out = append(out, cur)
		}
	}
	return out
}

// blankBetween reports whether a blank line lies strictly between the
// 1-based lines a and b.
func blankBetween(lines []string, a, b int) bool {
	for l := a + 1; l < b; l++ {
		if l-1 < len(lines) && strings.TrimSpace(lines[l-1]) == "" {
			return true
		}
	}
	return false
}

// standard reports whether an import path is the standard library's: its
// first element has no dot (as goimports decides).
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
