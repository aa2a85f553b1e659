package apicheck

import (
	"strings"
	"testing"
)

// TestREADMEBlockScheme checks the scheme itself on a made-up README: the
// fences found, their lines, the skip marker, a block that compiles, one
// that does not (its error at its README line), and a file block.
func TestREADMEBlockScheme(t *testing.T) {
	w := load(t)
	text := strings.Join([]string{
		"# title",                              // 1
		"```go",                                // 2
		"p, err := principal.New(alice)",       // 3
		"_ = p.Key() + strings.ToLower(\"A\")", // 4
		"```",                                  // 5
		"<!-- apicheck: skip shows a shape, not code -->", // 6
		"```go",                            // 7
		"this is not Go",                   // 8
		"```",                              // 9
		"```sh",                            // 10
		"go test ./...",                    // 11
		"```",                              // 12
		"```go",                            // 13
		"var n int = inventory.NoSuchName", // 14
		"```",                              // 15
		"```go",                            // 16
		"package demo",                     // 17
		"",                                 // 18
		"import \"github.com/mcpkit/mcpkit/principal\"", // 19
		"", // 20
		"var P = principal.Principal{Subject: 1}", // 21
		"```", // 22
	}, "\n")
	blocks := readmeBlocks(text)
	if len(blocks) != 4 {
		t.Fatalf("found %d Go blocks, want 4 (the sh block is not Go)", len(blocks))
	}
	if blocks[0].line != 3 || blocks[1].skip != "shows a shape, not code" || blocks[2].line != 14 || blocks[3].line != 17 {
		t.Fatalf("blocks %+v: wrong lines or skip reason", blocks)
	}

	src, err := w.wrap(blocks[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := w.compile("readme", []string{readmeEnv, src}); err != nil {
		t.Errorf("a valid block does not compile: %v", err)
	}
	src, err = w.wrap(blocks[2])
	if err != nil {
		t.Fatal(err)
	}
	if err := w.compile("readme", []string{readmeEnv, src}); err == nil || !strings.Contains(err.Error(), "README.md:14") || !strings.Contains(err.Error(), "NoSuchName") {
		t.Errorf("an invalid block: got %v, want an error at README.md:14 naming NoSuchName", err)
	}
	if err := w.compile("readme", []string{"//line README.md:17\n" + blocks[3].code}); err == nil || !strings.Contains(err.Error(), "README.md:21") {
		t.Errorf("an invalid file block: got %v, want an error at README.md:21", err)
	}
}

// TestDocLinkScheme checks the link and mention resolution on made-up doc
// text of package authn: what resolves, and what is reported.
func TestDocLinkScheme(t *testing.T) {
	w := load(t)
	c := w.repoByIP[repoModule+"/authn"]
	if c == nil {
		t.Fatal("authn not loaded")
	}
	text := "See [principal.NewContext], [Authenticator.WriteError], [*Options], " +
		"[net/http.Handler] and [principal].\n" +
		"Stale: [WriteError], [Authenticator.Nope], [mcphttp.Options], [keys()[base]] and [error] (no links).\n"
	var good, bad []string
	for _, l := range docLinks(text, w.linkPackage(c)) {
		if err := w.resolveLink(c, l); err != nil {
			bad = append(bad, l.text)
		} else {
			good = append(good, l.text)
		}
	}
	if got, want := strings.Join(good, " "), "principal.NewContext Authenticator.WriteError *Options net/http.Handler principal"; got != want {
		t.Errorf("resolved links %q, want %q", got, want)
	}
	if got, want := strings.Join(bad, " "), "WriteError Authenticator.Nope mcphttp.Options"; got != want {
		t.Errorf("reported links %q, want %q", got, want)
	}

	var stale []string
	for _, m := range w.mentions("mcphttp.Options.Notifications, *mcphttp.RateLimiter, mcphttp.New. and inventory.Template.List") {
		if err := w.resolveMention(m); err != nil {
			stale = append(stale, m.text)
		}
	}
	if got, want := strings.Join(stale, " "), "mcphttp.Options.Notifications mcphttp.RateLimiter"; got != want {
		t.Errorf("reported mentions %q, want %q", got, want)
	}
}
