package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
)

// sharedStore holds records with an owner and readers; callbacks see a
// record exactly when the caller's subject is among its readers.
type sharedStore struct {
	mu      sync.Mutex
	records []record // sorted by key
}

type record struct {
	key, id, title string
	readers        map[string]bool
}

func (s *sharedStore) visible(subject string) []record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []record
	for _, r := range s.records {
		if r.readers[subject] {
			out = append(out, r)
		}
	}
	return out
}

func (s *sharedStore) template(name, prefix string) inventory.Template {
	return inventory.Template{
		Name: name, URITemplate: prefix + "{id}",
		List: func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
			all := s.visible(req.Principal.Subject)
			i := sort.Search(len(all), func(i int) bool { return all[i].key > req.After })
			var p inventory.Page
			for ; i < len(all) && len(p.Entries) < req.Limit; i++ {
				p.Entries = append(p.Entries, inventory.Entry{Key: all[i].key, URI: prefix + all[i].id, Name: all[i].title})
			}
			p.HasMore = i < len(all)
			return p, nil
		},
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			for _, r := range s.visible(req.Principal.Subject) {
				if r.id == req.Params["id"] {
					return []inventory.Contents{{URI: req.URI, Text: "body of " + r.id, Title: r.title}}, nil
				}
			}
			return nil, inventory.ErrNotFound
		},
		Search: func(_ context.Context, req inventory.SearchRequest) ([]inventory.SearchHit, error) {
			var out []inventory.SearchHit
			for _, r := range s.visible(req.Principal.Subject) {
				if strings.Contains(r.title, req.Query) && len(out) < req.Limit {
					out = append(out, inventory.SearchHit{URI: prefix + r.id, Name: r.title})
				}
			}
			return out, nil
		},
	}
}

// TestToolsReachEqualsResources is the property test of the bridge: for
// random principals, grants and records, the URIs a caller reaches
// through the tools (list_resources to the end, read_resource, fetch, the
// typed tool, search's hits) are exactly those it reaches through
// resources/list and resources/read, never more.
func TestToolsReachEqualsResources(t *testing.T) {
	subjects := []string{"s0", "s1", "s2", "s3"}
	var tally [2]int // readable and refused candidates: the test sees both
	defer func() {
		assert.True(t, tally[0] > 100 && tally[1] > 100, "readable %d, refused %d", tally[0], tally[1])
	}()
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 13))
			docs, secret := &sharedStore{}, &sharedStore{}
			var candidates []string
			for _, st := range []struct {
				s      *sharedStore
				prefix string
			}{{docs, "docs://d/"}, {secret, "docs://s/"}} {
				for i := range 5 + rng.IntN(40) {
					r := record{key: fmt.Sprintf("k%05d", i), id: fmt.Sprintf("r%d", i), title: fmt.Sprintf("title %d %s", i, []string{"red", "blue"}[rng.IntN(2)]), readers: map[string]bool{}}
					for _, s := range subjects {
						if rng.IntN(3) == 0 {
							r.readers[s] = true
						}
					}
					st.s.records = append(st.s.records, r)
					candidates = append(candidates, st.prefix+r.id)
				}
			}
			candidates = append(candidates, "docs://d/missing", "docs://s/missing", "test://about", "test://hidden")
			dt := docs.template("docs", "docs://d/")
			dt.RequiredScopes = []string{"docs:read"}
			stt := secret.template("secret", "docs://s/")
			stt.RequiredScopes = []string{"secret:read"}
			stt.Gates = []string{"beta"}
			statics := []inventory.Resource{
				{URI: "test://about", Name: "about", Access: inventory.Public, Read: inventory.TextReader("text/plain", "about")},
				{URI: "test://hidden", Name: "hidden", RequiredScopes: []string{"docs:read"}, Gates: []string{"beta"}, Read: inventory.TextReader("text/plain", "hidden")},
			}
			inv, err := inventory.New(statics, []inventory.Template{dt, stt}, inventory.Options{
				PageSize: 1 + rng.IntN(7), Gates: []inventory.Gate{{Name: "beta"}},
			})
			require.NoError(t, err)
			ctx := context.Background()
			for _, s := range subjects {
				switch rng.IntN(4) {
				case 0:
					_, err = inv.Authorize(ctx, s, "beta")
				case 1:
					_, err = inv.Disable(ctx, s, "docs")
				case 2:
					_, err = inv.Enable(ctx, s, "secret")
				}
				require.NoError(t, err)
			}
			builtin, err := tools.Builtin(inv, tools.BuiltinOptions{
				SearchLimit: inventory.MaxSearchLimit,
				Templates:   map[string]tools.TemplateTool{"docs": {Name: "read_doc"}, "secret": {Name: "read_secret"}},
			})
			require.NoError(t, err)
			part, err := tools.New(builtin...)
			require.NoError(t, err)
			f := &fixture{inv: inv, ep: newEndpoint(t, inv, 0, nil, part)}

			for range 6 {
				caller := randomPrincipal(rng, subjects)
				for _, e := range []era{eraModern, eraOld} {
					yes, no := checkReach(t, f, caller, e, candidates)
					tally[0], tally[1] = tally[0]+yes, tally[1]+no
				}
			}
		})
	}
}

func randomPrincipal(rng *rand.Rand, subjects []string) *principal.Principal {
	if rng.IntN(6) == 0 {
		return nil
	}
	p := &principal.Principal{ClientID: "c"}
	if rng.IntN(6) > 0 {
		p.Subject = subjects[rng.IntN(len(subjects))]
	}
	for _, sc := range []string{"docs:read", "secret:read"} {
		if rng.IntN(3) > 0 {
			p.Scopes = append(p.Scopes, sc)
		}
	}
	return p
}

// checkReach compares what one caller reaches both ways, and counts the
// candidates it may and may not read.
func checkReach(t *testing.T, f *fixture, caller *principal.Principal, e era, candidates []string) (yes, no int) {
	t.Helper()
	who := "anonymous"
	if caller != nil {
		who = fmt.Sprintf("%q %v", caller.Subject, caller.Scopes)
	}
	listedR, okR := walkOrStatus(t, f, caller, e, false)
	listedT, okT := walkOrStatus(t, f, caller, e, true)
	require.Equal(t, okR, okT, "%s: both lists answer, or both refuse", who)
	require.Equal(t, listedR, listedT, "%s: the same resources listed", who)

	readable := map[string]bool{}
	for _, u := range candidates {
		w := f.post(t, caller, e, "resources/read", map[string]any{"uri": u})
		viaRead := w.Code == 200 && decode(t, w).Error == nil
		readable[u] = viaRead
		if viaRead {
			yes++
		} else {
			no++
		}
		viaTool := toolOK(t, f, caller, e, "read_resource", map[string]any{"uri": u})
		viaFetch := toolOK(t, f, caller, e, "fetch", map[string]any{"id": u})
		assert.Equal(t, viaRead, viaTool, "%s: read_resource %s", who, u)
		assert.Equal(t, viaRead, viaFetch, "%s: fetch %s", who, u)
		for prefix, tool := range map[string]string{"docs://d/": "read_doc", "docs://s/": "read_secret"} {
			if id, ok := strings.CutPrefix(u, prefix); ok {
				assert.Equal(t, viaRead, toolOK(t, f, caller, e, tool, map[string]any{"id": id}), "%s: %s %s", who, tool, id)
			}
		}
	}
	for _, u := range listedT {
		assert.True(t, readable[u], "%s: listed %s is readable", who, u)
	}
	for _, q := range []string{"red", "blue", "title"} {
		w := f.post(t, caller, e, "tools/call", map[string]any{"name": "search", "arguments": map[string]any{"query": q}})
		if w.Code != 200 {
			continue // a challenge: no caller, or no scope
		}
		var res toolResult
		require.NoError(t, json.Unmarshal(decode(t, w).Result, &res))
		var found struct{ Results []struct{ ID string } }
		require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &found))
		for _, r := range found.Results {
			assert.True(t, readable[r.ID], "%s: search hit %s is readable", who, r.ID)
		}
	}
	return yes, no
}

// walkOrStatus walks resources/list (or list_resources) to the end; ok is
// false when it was refused (401/403), with nothing listed.
func walkOrStatus(t *testing.T, f *fixture, caller *principal.Principal, e era, tools bool) ([]string, bool) {
	t.Helper()
	var uris []string
	cursor := ""
	for n := 0; n < 1000; n++ {
		var w *httptest.ResponseRecorder
		var page []byte
		if tools {
			args := map[string]any{}
			if cursor != "" {
				args["cursor"] = cursor
			}
			w = f.post(t, caller, e, "tools/call", map[string]any{"name": "list_resources", "arguments": args})
			if w.Code != http.StatusOK {
				return nil, false
			}
			var res toolResult
			require.NoError(t, json.Unmarshal(decode(t, w).Result, &res))
			require.False(t, res.IsError, res.Content)
			page = []byte(res.Content[0].Text)
		} else {
			var params map[string]any
			if cursor != "" {
				params = map[string]any{"cursor": cursor}
			}
			w = f.post(t, caller, e, "resources/list", params)
			if w.Code != http.StatusOK {
				return nil, false
			}
			page = decode(t, w).Result
		}
		var p listPage
		require.NoError(t, json.Unmarshal(page, &p))
		for _, r := range p.Resources {
			uris = append(uris, r.URI)
		}
		if cursor = p.NextCursor; cursor == "" {
			return uris, true
		}
	}
	t.Fatal("the traversal did not end")
	return nil, false
}

// toolOK reports whether a tool call succeeded (not a challenge, a
// protocol error or a tool error).
func toolOK(t *testing.T, f *fixture, caller *principal.Principal, e era, name string, args map[string]any) bool {
	t.Helper()
	w := f.post(t, caller, e, "tools/call", map[string]any{"name": name, "arguments": args})
	if w.Code != http.StatusOK {
		return false
	}
	r := decode(t, w)
	if r.Error != nil {
		return false
	}
	var res toolResult
	require.NoError(t, json.Unmarshal(r.Result, &res))
	return !res.IsError
}
