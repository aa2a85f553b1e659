package skills_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/principal"
)

var (
	alice = principal.Principal{Subject: "alice", ClientID: "app"}
	bob   = principal.Principal{Subject: "bob", ClientID: "app"}
)

// store keeps skills per owner, sorted by key, and their files: a keyset
// source in memory, with ownership checked on every read.
type store struct {
	mu     sync.Mutex
	skills map[string][]skills.Skill // owner → skills by key
	files  map[string]file           // URI → file
	// tamper, when set, changes what Read serves after the entry was made.
	tamper func(uri, text string) string
}

type file struct{ owner, mime, text string }

func newStore() *store { return &store{skills: map[string][]skills.Skill{}, files: map[string]file{}} }

// add stores owner's skill name with extra files (path → text); its URI is
// skill://<owner>/<name>/SKILL.md.
func (s *store) add(owner, name string, extra map[string]string) skills.Skill {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := "skill://" + owner + "/" + name
	sk := skills.Skill{
		Key: name, URI: dir + "/SKILL.md",
		Frontmatter: fmt.Appendf(nil, `{"name":%q,"description":"What %s does"}`, name, name),
	}
	texts := map[string]string{sk.URI: "---\nname: " + name + "\ndescription: What " + name + " does\n---\n\n# " + name + "\n"}
	for p, t := range extra {
		texts[dir+"/"+p] = t
	}
	uris := make([]string, 0, len(texts))
	for u := range texts {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	for _, u := range uris {
		mime := "text/markdown"
		if !strings.HasSuffix(u, ".md") {
			mime = "text/plain"
		}
		s.files[u] = file{owner: owner, mime: mime, text: texts[u]}
		sk.Files = append(sk.Files, skills.File{URI: u, Digest: skills.Digest([]byte(texts[u])), Size: int64(len(texts[u])), MIMEType: mime})
	}
	list := append(s.skills[owner], sk)
	slices.SortFunc(list, func(a, b skills.Skill) int { return strings.Compare(a.Key, b.Key) })
	s.skills[owner] = list
	return sk
}

func (s *store) list(_ context.Context, req inventory.ListRequest) (skills.Page, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.skills[req.Principal.Key()]
	i, found := slices.BinarySearchFunc(all, req.After, func(sk skills.Skill, k string) int { return strings.Compare(sk.Key, k) })
	if found {
		i++
	}
	var page skills.Page
	for ; i < len(all); i++ {
		if len(page.Skills) == req.Limit {
			page.HasMore = true
			break
		}
		page.Skills = append(page.Skills, all[i])
	}
	return page, nil
}

func (s *store) get(_ context.Context, req skills.GetRequest) (skills.Skill, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sk := range s.skills[req.Principal.Key()] {
		if sk.URI == req.URI {
			return sk, nil
		}
	}
	return skills.Skill{}, inventory.ErrNotFound
}

func (s *store) read(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[req.URI]
	if !ok || f.owner != req.Principal.Key() {
		return nil, inventory.ErrNotFound
	}
	text := f.text
	if s.tamper != nil {
		text = s.tamper(req.URI, text)
	}
	return []inventory.Contents{{URI: req.URI, MIMEType: f.mime, Text: text}}, nil
}

func (s *store) source() skills.Source {
	return skills.Source{Template: "skill-files", List: s.list, Get: s.get}
}

func (s *store) inventory(t testing.TB) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.New(nil, []inventory.Template{{
		Name: "skill-files", URITemplate: "skill://{+path}", Read: s.read,
	}}, inventory.Options{})
	require.NoError(t, err)
	return inv
}

// seeded is a store where alice has "pdf-processing" (with a
// subdirectory tree) and "git-workflow", and bob has "bob-secrets".
func seeded() *store {
	s := newStore()
	s.add("alice", "pdf-processing", map[string]string{
		"references/FORMS.md":              "# Forms\n",
		"templates/invoice.md":             "# Invoice\n",
		"templates/regional/eu-invoice.md": "# EU invoice\n",
		"scripts/extract.py":               "print('x')\n",
	})
	s.add("alice", "git-workflow", nil)
	s.add("bob", "bob-secrets", map[string]string{"notes/plan.md": "# Bob's plan\n"})
	return s
}

// logBuffer is a logger whose records a test reads.
type logBuffer struct{ logbuf.Buffer }

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// asUser serves h with the principal the X-Test-User header names
// (alice or bob), anonymous without one: the service's own middleware.
func asUser(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p principal.Principal
		switch r.Header.Get("X-Test-User") {
		case "alice":
			p = alice
		case "bob":
			p = bob
		default:
			h.ServeHTTP(w, r)
			return
		}
		ctx, err := principal.NewContext(r.Context(), p)
		if err != nil {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// endpoint serves s's skills with mcphttp.
func endpoint(t testing.TB, s *store, opts skills.Options, epOpts mcphttp.Options) http.Handler {
	t.Helper()
	inv := s.inventory(t)
	opts.DirectoryRead = true
	cat, err := skills.New(inv, s.source(), opts)
	require.NoError(t, err)
	ep, err := mcphttp.New(inv, epOpts, cat)
	require.NoError(t, err)
	return asUser(ep)
}
