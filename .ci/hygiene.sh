#!/usr/bin/env bash
# .ci/hygiene.sh: fails when the repository tracks what it must not.
#
#   - a compiled binary (ELF, Mach-O, PE, WebAssembly: checked by magic
#     bytes, whatever the name; Go test binaries are such executables) or a
#     file named *.test;
#   - a file larger than 1 MiB;
#   - a tracked file that .gitignore ignores (how mcphttp/mcphttp.test
#     slipped in: added before the rule, or with git add -f);
#   - an examples package (programs and the packages they import, tests
#     aside) that depends on an internal/ package of this repository or on
#     inventory/inventorytest: examples must build from public packages
#     only, so that users can copy them into their own module;
#   - an import that runs back up a floor (internal/ by owner): a package
#     of the root internal/ imports only root internal/ packages and
#     principal (the kit's floor); a package under D/internal/ imports only
#     D/internal/ and root internal/ packages and what D itself imports,
#     never D, nor a package of D's subtree unless D imports it and it
#     imports nothing of D's subtree (a leaf below D: authn/dpop's
#     options and errors, which authn/internal/dpopcheck checks). Test kits (internal/testkit/...,
#     mcphttp/internal/mcptest, internal/nilness/nilnesstest) are fixtures
#     for _test.go files and are left out;
#   - a Go file of any of the four modules whose imports are not grouped
#     as goimports groups them: the standard library in one group, first,
#     apart from the other modules' imports (internal/importgroups).
#
# Run from anywhere in the checkout: bash .ci/hygiene.sh
set -euo pipefail
cd "$(dirname "$0")/.."

max=$((1 << 20))
status=0
fail() { printf 'hygiene: %s\n' "$*" >&2; status=1; }

# magic FILE prints the first four bytes of FILE as hex ("7f454c46").
magic() { od -An -tx1 -N4 -- "$1" | tr -d ' \n'; }

# is_pe FILE: an MZ header whose e_lfanew points at "PE\0\0".
is_pe() {
  local size off sig
  size=$(wc -c <"$1")
  ((size >= 64)) || return 1
  off=$(od -An -tu4 -j60 -N4 -- "$1" | tr -d ' ')
  ((off >= 64 && off <= size - 4)) || return 1
  sig=$(od -An -tx1 -j"$off" -N4 -- "$1" | tr -d ' \n')
  [[ $sig == 50450000 ]]
}

while IFS= read -r -d '' f; do
  [[ -f $f && ! -L $f ]] || continue # deleted in the work tree, or a symlink
  size=$(wc -c <"$f" | tr -d " ")
  ((size > max)) && fail "$f: $size bytes, more than 1 MiB"
  [[ $f == *.test ]] && fail "$f: a Go test binary's name"
  case $(magic "$f") in
  7f454c46*) fail "$f: an ELF executable or object" ;;
  feedface* | feedfacf* | cefaedfe* | cffaedfe* | cafebabe*) fail "$f: a Mach-O binary" ;;
  0061736d*) fail "$f: a WebAssembly binary" ;;
  4d5a*) is_pe "$f" && fail "$f: a PE (Windows) executable" ;;
  esac
done < <(git ls-files -z)

while IFS= read -r f; do
  [[ -n $f ]] && fail "$f: tracked although .gitignore ignores it (git rm --cached it)"
done < <(git ls-files -ci --exclude-standard)

# Every package of the examples module, with what it imports itself (not
# its tests): none may import an internal/ package of this repository or
# inventorytest, which is test support for _test.go files only. Every
# examples package is listed, so this covers the packages the programs
# import too. What the kit's public packages import in turn (jsonrpc and
# authn use internal/jsonstrict) comes with the kit's module and is not
# the examples' concern: a user's copy builds against the same packages.
repo=github.com/mcpkit/mcpkit
while read -r pkg deps; do
  for d in $deps; do
    if [[ $d == "$repo"/* && ($d =~ /internal(/|$) || $d =~ /inventorytest$) ]]; then
      fail "$pkg imports $d (examples import public packages only; inventorytest only from _test.go)"
    fi
  done
done < <(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./examples/...)

# Floors: the core module's internal packages, each with its direct
# imports inside the module, checked against the rule above.
declare -A imports_of
while read -r pkg deps; do
  imports_of[$pkg]=$deps
done < <(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./...)
floors=0
for pkg in "${!imports_of[@]}"; do
  [[ $pkg == */internal/* || $pkg == */internal ]] || continue
  [[ $pkg == "$repo"/internal/testkit/* || $pkg == */internal/mcptest || $pkg == */nilnesstest || $pkg == "$repo"/internal/apicheck ]] && continue
  owner=${pkg%%/internal/*}
  floors=$((floors + 1))
  for d in ${imports_of[$pkg]}; do
    [[ $d == "$repo" || $d == "$repo"/* ]] || continue
    [[ $d == "$repo"/internal/* ]] && continue
    if [[ $owner == "$repo" ]]; then
      [[ $d == "$repo"/principal ]] && continue
      fail "$pkg imports $d (a root internal/ package imports only root internal/ packages and principal)"
    elif [[ $d == "$owner"/internal/* ]]; then
      continue
    elif [[ $d == "$owner" ]]; then
      fail "$pkg imports $d (an import back up to its owner $owner)"
    elif [[ $d == "$owner"/* ]]; then
      if [[ " ${imports_of[$owner]:-} " != *" $d "* || " ${imports_of[$d]:-} " == *" $owner"* ]]; then
        fail "$pkg imports $d (an import back up into its owner's subtree $owner, not a leaf $owner imports)"
      fi
    elif [[ " ${imports_of[$owner]:-} " != *" $d "* ]]; then
      fail "$pkg imports $d, which its owner $owner does not import (an internal package serves its owner's floor)"
    fi
  done
done

# Import groups, in every module: the checker walks the checkout (skipping
# testdata and node_modules) and prints each file that breaks the rule.
go run ./internal/importgroups . || fail "imports not grouped as goimports groups them (above)"

if ((status == 0)); then
  echo "hygiene: ok ($(git ls-files | wc -l) tracked files; $(go list ./examples/... | wc -l) examples packages import public packages only; $floors internal packages import no floor above them; imports grouped)"
fi
exit $status
