// Package apicheck holds the repository's checks that its documentation and
// its exported API stay true. It has tests only; nothing imports it.
//
// The tests load every package of every module of the workspace (go.work's
// use directives) with go list -export -deps, type-check the repository's
// packages from source with the standard library's go/types (their
// dependencies from the compiler's export data), and check:
//
//   - TestAPI: the exported API of every package of every module except
//     examples/ and internal/ packages, one line per exported identifier with
//     its signature (like Go's own api/ files), equals the checked-in
//     api/<package path>.txt at the repository root (the package path
//     relative to github.com/mcpkit/mcpkit: api/mcphttp/sessions.txt). A
//     difference fails with the lines added and removed and the command that
//     rewrites the files after a reviewed API change:
//
//     go test ./internal/apicheck -update
//
//   - TestDocLinks: every doc link in a doc comment of every package
//     resolves, in each of its forms (in square brackets: Name,
//     Name.Method, Name.Field, pkg, pkg.Name, pkg.Name.Method, with or
//     without a leading *): a name without a package to a declaration of
//     the package (or a predeclared one); a package through the package's imports, its own
//     name, a single-element standard library path or a full import path,
//     and then a declaration of it; a selector after a type to a field or a
//     method. A [pkg.Name] whose pkg is one of this repository's packages
//     that the package does not import is reported (go/doc renders it as
//     plain text). Every mention of one of this repository's packages in
//     a doc comment's text, pkg.Name or pkg.Name.Selector (code blocks
//     included), resolves the same way, also where it is not imported.
//
//   - TestREADMENames: every pkg.Name and pkg.Name.Selector of one of this
//     repository's packages that README.md mentions resolves.
//
//   - TestREADMECodeBlocks: every Go code block of README.md (a fence opened
//     with ```go) compiles. A block with a package clause is a file of its
//     own. Any other block is the body of a function, func _() { ... }, in a
//     package whose other file declares the names the README's prose
//     introduces and its blocks use without declaring them (ctx, db, inv,
//     auth, hub, alice, notes, ...: readmeEnv in readme_test.go); the
//     block's imports are the packages whose names it uses (this
//     repository's first, then the standard library, then the workspace's
//     dependencies). Unused variables and imports are allowed, nothing else.
//     A block right after the line <!-- apicheck: skip REASON --> is not
//     compiled; the test logs how many were compiled and skipped.
//
//   - TestREADMELinks: every relative link of every Markdown file of the
//     repository ([text](path) and [text](path#heading), outside code)
//     names a file or directory that exists and, with a #fragment into a
//     Markdown file, one of its headings (GitHub's anchors: lower case,
//     spaces made '-', punctuation dropped).
//
//   - TestPackageDocCodeBlocks: every code block (an indented block) of
//     every doc comment — package docs and the docs of declarations — of
//     every package the workspace holds
//     (found by go list over each module, internal/ and main packages
//     included, so a package that moves is still checked) compiles, unless
//     it is not Go. The rule, by what the block parses as: a block with a
//     package clause is a file of its own; a block of top-level
//     declarations is a file beside docEnv (pkgdoc_test.go), the names it
//     declares replacing docEnv's; a block that parses as a function body
//     is the body of func _() beside docEnv. A block that parses as none
//     of these (a shell command, a route or error table, SQL, a format),
//     or only as expressions that are not calls and labels (a path list,
//     a URL list), is not Go
//     and is not compiled, unless it holds what only Go holds here (:=,
//     func, err, a call pkg.Name(): then it is a Go fragment that does not
//     parse — ... or … as a placeholder — and fails the test). A block's
//     imports are the packages whose names it uses: its own package, the
//     packages its package imports, then as for the READMEs, then a
//     repository package (internal ones too) of that unique name. docEnv
//     declares what the docs' prose introduces (ctx, mux, inv, auth,
//     legacy, hub, caller, ...); write if err != nil { log.Fatal(err) }
//     where a snippet checks an error.
//
// The tests need the workspace (go.work at the repository root): run them
// from the repository, as CI does.
package apicheck
