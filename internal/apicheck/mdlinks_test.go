package apicheck

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLinkRE matches a Markdown inline link or image: [text](target) with an
// optional "title".
var mdLinkRE = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// mdLinks returns the targets of the inline links of a Markdown text
// outside fenced code blocks and inline code spans, with their lines.
func mdLinks(text string) (targets []string, lines []int) {
	fenced := false
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		l = regexp.MustCompile("`[^`]*`").ReplaceAllStringFunc(l, func(s string) string {
			// keep a code span that is a link's text: [`pkg`](pkg)
			return strings.Repeat("x", len(s))
		})
		for _, m := range mdLinkRE.FindAllStringSubmatch(l, -1) {
			targets = append(targets, m[1])
			lines = append(lines, i+1)
		}
	}
	return targets, lines
}

// mdAnchors returns the anchors GitHub gives the headings of a Markdown
// text: lower case, letters, digits, '-' and '_' kept, spaces made '-',
// everything else dropped; a repeated anchor gets -1, -2, ...
func mdAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// markdownFiles returns every Markdown file of the repository (READMEs,
// CHANGELOG.md, RELEASING.md, ...) outside .git, node_modules and testdata.
func markdownFiles(t *testing.T, w *world) []readme {
	t.Helper()
	var out []readme
	err := filepath.WalkDir(w.root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != w.root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.root, p)
		out = append(out, readme{filepath.ToSlash(rel), string(b)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestREADMELinks checks that every relative link of every Markdown file
// of the repository names a file or directory of the repository and,
// with a #fragment into a Markdown file, one of its headings.
func TestREADMELinks(t *testing.T) {
	w := load(t)
	checked := 0
	for _, r := range markdownFiles(t, w) {
		targets, lines := mdLinks(r.text)
		for i, target := range targets {
			if regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`).MatchString(target) {
				continue // http:, https:, mailto:
			}
			checked++
			file, frag, _ := strings.Cut(target, "#")
			dest := r.path
			if file != "" {
				dest = path.Join(path.Dir(r.path), file)
			}
			b, err := os.ReadFile(filepath.Join(w.root, filepath.FromSlash(dest)))
			if err != nil {
				if st, serr := os.Stat(filepath.Join(w.root, filepath.FromSlash(dest))); serr == nil && st.IsDir() && frag == "" {
					continue
				}
				t.Errorf("%s:%d: link %s: %s does not exist", r.path, lines[i], target, dest)
				continue
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if !mdAnchors(string(b))[frag] {
				t.Errorf("%s:%d: link %s: %s has no heading #%s", r.path, lines[i], target, dest, frag)
			}
		}
	}
	t.Logf("%d relative links checked", checked)
	if checked == 0 {
		t.Error("no relative link found: the scan is broken")
	}
}

// TestMDAnchors pins the anchor rule on headings of the READMEs.
func TestMDAnchors(t *testing.T) {
	a := mdAnchors("# mcpkit\n## Operating it: traces, metrics, audit, rate limits\n### Your provider → options\n```sh\n# not a heading\n```\n## Tools, for clients that only call tools\n## Notes\n## Notes\n")
	for _, want := range []string{"mcpkit", "operating-it-traces-metrics-audit-rate-limits", "your-provider--options", "tools-for-clients-that-only-call-tools", "notes", "notes-1"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a comment in a code block was taken for a heading")
	}
	targets, _ := mdLinks("see [a](x.md#y) and `[b](not.md)`\n```\n[c](code.md)\n```\n[`pkg`](pkg)\n")
	if strings.Join(targets, " ") != "x.md#y pkg" {
		t.Errorf("links %q, want x.md#y pkg", targets)
	}
}
