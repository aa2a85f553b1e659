package skills_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/principal"
)

// call sends one request as user in the era given and returns the
// response.
func call(t *testing.T, h http.Handler, user string, modern bool, method string, params map[string]any) (mcptest.RPC, http.Header) {
	t.Helper()
	rq := mcptest.Request{Headers: map[string]string{"X-Test-User": user}}
	if modern {
		body, headers := mcptest.Modern(1, method, params)
		rq.Body = body
		for k, v := range headers {
			rq.Headers[k] = v
		}
	} else {
		rq.Body = mcptest.Legacy(1, method, params)
		rq.Headers["MCP-Protocol-Version"] = mcpwire.Version20251125
	}
	w := mcptest.Do(t, h, rq)
	return mcptest.Decode(t, w), w.Header()
}

func TestCapabilityBothEras(t *testing.T) {
	h := endpoint(t, seeded(), skills.Options{}, mcphttp.Options{})
	legacy, _ := call(t, h, "alice", false, "initialize", map[string]any{
		"protocolVersion": mcpwire.Version20251125, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	modern, _ := call(t, h, "alice", true, "server/discover", nil)
	for name, rpc := range map[string]mcptest.RPC{"initialize": legacy, "server/discover": modern} {
		require.Nil(t, rpc.Error, name)
		var res struct {
			Capabilities struct {
				Resources  *struct{} `json:"resources"`
				Extensions map[string]struct {
					DirectoryRead bool `json:"directoryRead"`
				} `json:"extensions"`
			} `json:"capabilities"`
		}
		require.NoError(t, json.Unmarshal(rpc.Result, &res), name)
		assert.NotNil(t, res.Capabilities.Resources, "%s: the extension needs the resources capability", name)
		ext, ok := res.Capabilities.Extensions[skills.ExtensionID]
		assert.True(t, ok, "%s: got %s", name, rpc.Result)
		assert.True(t, ext.DirectoryRead, name)
	}
}

func TestListPrivateBothEras(t *testing.T) {
	h := endpoint(t, seeded(), skills.Options{}, mcphttp.Options{})
	for _, modern := range []bool{false, true} {
		rpc, hdr := call(t, h, "alice", modern, "skills/list", nil)
		require.Nil(t, rpc.Error)
		assert.Equal(t, "private, max-age=0", hdr.Get("Cache-Control"))
		var res struct {
			Skills []struct {
				URI         string          `json:"uri"`
				Frontmatter json.RawMessage `json:"frontmatter"`
				Resources   []skills.File   `json:"resources"`
			} `json:"skills"`
			TTL        *int    `json:"ttlMs"`
			CacheScope *string `json:"cacheScope"`
			Next       *string `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal(rpc.Result, &res))
		require.Len(t, res.Skills, 2)
		assert.Equal(t, "skill://alice/git-workflow/SKILL.md", res.Skills[0].URI)
		assert.JSONEq(t, `{"name":"git-workflow","description":"What git-workflow does"}`, string(res.Skills[0].Frontmatter))
		assert.Len(t, res.Skills[1].Resources, 5)
		assert.Nil(t, res.Next)
		if modern {
			require.NotNil(t, res.TTL)
			require.NotNil(t, res.CacheScope)
			assert.Equal(t, 0, *res.TTL)
			assert.Equal(t, "private", *res.CacheScope)
		} else {
			assert.Nil(t, res.CacheScope)
		}
	}
	rpc, _ := call(t, h, "alice", true, "skills/get", map[string]any{"uri": "skill://alice/git-workflow/SKILL.md"})
	require.Nil(t, rpc.Error)
	assert.Contains(t, string(rpc.Result), `"cacheScope":"private"`)
	assert.NotContains(t, string(rpc.Result), "nextCursor")
}

// errorWithout returns the error of rpc with the URI it names replaced, so
// that two answers about different URIs compare.
func errorWithout(t *testing.T, rpc mcptest.RPC, uri string) string {
	t.Helper()
	require.NotNil(t, rpc.Error, "want an error")
	b, err := json.Marshal(rpc.Error)
	require.NoError(t, err)
	return strings.ReplaceAll(string(b), uri, "URI")
}

// Hostile: alice asks for bob's skill, its files and its directories by
// every method. Each answer is exactly the answer for a URI that does not
// exist.
func TestOtherCallersSkillLooksUnknown(t *testing.T) {
	h := endpoint(t, seeded(), skills.Options{}, mcphttp.Options{})
	cases := []struct {
		method, bobs, none string
		wantCode           int64
	}{
		{"skills/get", "skill://bob/bob-secrets/SKILL.md", "skill://bob/no-such-skill/SKILL.md", -32602},
		{"resources/read", "skill://bob/bob-secrets/SKILL.md", "skill://bob/no-such-skill/SKILL.md", 0},
		{"resources/read", "skill://bob/bob-secrets/notes/plan.md", "skill://bob/bob-secrets/notes/none.md", 0},
		{"resources/directory/read", "skill://bob/bob-secrets", "skill://bob/no-such-skill", -32602},
		{"resources/directory/read", "skill://bob/bob-secrets/notes", "skill://bob/bob-secrets/none", -32602},
	}
	for _, modern := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s modern=%v %s", tc.method, modern, tc.bobs), func(t *testing.T) {
				bobs, _ := call(t, h, "alice", modern, tc.method, map[string]any{"uri": tc.bobs})
				none, _ := call(t, h, "alice", modern, tc.method, map[string]any{"uri": tc.none})
				assert.Equal(t, errorWithout(t, none, tc.none), errorWithout(t, bobs, tc.bobs))
				if tc.wantCode != 0 {
					assert.Equal(t, tc.wantCode, bobs.Error.Code, "the extension says -32602 in every era")
				}
				own, _ := call(t, h, "bob", modern, tc.method, map[string]any{"uri": tc.bobs})
				assert.Nil(t, own.Error, "bob reads his own")
			})
		}
	}
	// A file is not a directory.
	rpc, _ := call(t, h, "alice", true, "resources/directory/read", map[string]any{"uri": "skill://alice/pdf-processing/SKILL.md"})
	require.NotNil(t, rpc.Error)
	assert.EqualValues(t, -32602, rpc.Error.Code)
}

// Hostile cursors: tampered, another caller's, empty: -32602 with
// data.reason, never a restart from the first page.
func TestCursorsOnTheWire(t *testing.T) {
	s := seeded()
	for i := range 30 {
		s.add("alice", fmt.Sprintf("skill-%03d", i), nil)
	}
	h := endpoint(t, s, skills.Options{PageSize: 10}, mcphttp.Options{})
	rpc, _ := call(t, h, "alice", true, "skills/list", nil)
	require.Nil(t, rpc.Error)
	var res struct {
		Next string `json:"nextCursor"`
	}
	require.NoError(t, json.Unmarshal(rpc.Result, &res))
	require.NotEmpty(t, res.Next)
	flipped := []byte(res.Next)
	flipped[5] = map[bool]byte{true: 'B', false: 'A'}[flipped[5] == 'A']
	for name, tc := range map[string]struct{ user, cursor string }{
		"bob with alice's": {"bob", res.Next},
		"tampered":         {"alice", string(flipped)},
		"empty":            {"alice", ""},
	} {
		rpc, _ := call(t, h, tc.user, true, "skills/list", map[string]any{"cursor": tc.cursor})
		require.NotNil(t, rpc.Error, name)
		assert.EqualValues(t, -32602, rpc.Error.Code, name)
		assert.JSONEq(t, `{"reason":"invalid"}`, string(rpc.Error.Data), name)
	}
	rpc, _ = call(t, h, "alice", true, "skills/list", map[string]any{"cursor": res.Next})
	assert.Nil(t, rpc.Error, "alice continues")
}

func TestAnonymousRefused(t *testing.T) {
	h := endpoint(t, seeded(), skills.Options{}, mcphttp.Options{})
	for _, m := range []string{"skills/list", "skills/get", "resources/directory/read"} {
		w := mcptest.Do(t, h, mcptest.Request{Body: mcptest.Legacy(1, m, map[string]any{"uri": "skill://alice/git-workflow/SKILL.md"}),
			Headers: map[string]string{"MCP-Protocol-Version": mcpwire.Version20251125}})
		assert.Equal(t, http.StatusUnauthorized, w.Code, m)
	}
}

// bigSkill adds owner's skill name with n files of long paths.
func bigSkill(s *store, owner, name string, n int) {
	extra := map[string]string{}
	for i := range n {
		extra[fmt.Sprintf("files/%s-%04d.md", strings.Repeat("x", 200), i)] = "x"
	}
	s.add(owner, name, extra)
}

// The byte budget: a page ends where the next skill would break the
// limit (each skill whole, on the next page), and a skill that cannot fit
// an empty page is a generic internal error, logged.
func TestByteBudget(t *testing.T) {
	const limit = 64 << 10
	s := newStore()
	bigSkill(s, "alice", "aa", 120) // ~32 KiB each
	bigSkill(s, "alice", "bb", 120)
	bigSkill(s, "alice", "cc", 120)
	var logs logBuffer
	h := endpoint(t, s, skills.Options{}, mcphttp.Options{MaxResultBytes: limit, Logger: logs.logger()})
	var seen []string
	cursor := ""
	for range 5 {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		w := mcptest.Do(t, h, func() mcptest.Request {
			body, hd := mcptest.Modern(1, "skills/list", params)
			hd["X-Test-User"] = "alice"
			return mcptest.Request{Body: body, Headers: hd}
		}())
		assert.LessOrEqual(t, w.Body.Len(), limit)
		rpc := mcptest.Decode(t, w)
		require.Nil(t, rpc.Error)
		var res struct {
			Skills []struct{ URI string } `json:"skills"`
			Next   string                 `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal(rpc.Result, &res))
		require.NotEmpty(t, res.Skills)
		for _, sk := range res.Skills {
			seen = append(seen, sk.URI)
		}
		if res.Next == "" {
			break
		}
		cursor = res.Next
	}
	assert.Equal(t, []string{"skill://alice/aa/SKILL.md", "skill://alice/bb/SKILL.md", "skill://alice/cc/SKILL.md"}, seen)

	bigSkill(s, "bob", "huge", 400) // ~100 KiB: never fits
	rpc, _ := call(t, h, "bob", true, "skills/list", nil)
	require.NotNil(t, rpc.Error)
	assert.EqualValues(t, -32603, rpc.Error.Code)
	assert.NotContains(t, rpc.Error.Message, "huge")
	assert.Contains(t, logs.String(), "rule=entry-too-large")
}

// A caller who lacks only the source template's scope gets the step-up
// challenge resources/list gives, in both eras (issue 39: it was an empty
// 200 skills/list, so a client never learned to ask for the scope); a
// caller with it is served.
func TestListScopeChallengeBothEras(t *testing.T) {
	s := seeded()
	inv, err := inventory.New(nil, []inventory.Template{{
		Name: "skill-files", URITemplate: "skill://{+path}", Read: s.read, RequiredScopes: []string{"skills:read"},
	}}, inventory.Options{})
	require.NoError(t, err)
	cat, err := skills.New(inv, s.source(), skills.Options{})
	require.NoError(t, err)
	ep, err := mcphttp.New(inv, mcphttp.Options{}, cat)
	require.NoError(t, err)
	h := asUser(ep)
	scoped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := alice
		p.Scopes = []string{"skills:read"}
		ctx, err := principal.NewContext(r.Context(), p)
		require.NoError(t, err)
		ep.ServeHTTP(w, r.WithContext(ctx))
	})
	for _, modern := range []bool{false, true} {
		rq := mcptest.Request{Headers: map[string]string{"X-Test-User": "alice"}}
		if modern {
			body, headers := mcptest.Modern(1, "skills/list", nil)
			rq.Body = body
			for k, v := range headers {
				rq.Headers[k] = v
			}
		} else {
			rq.Body = mcptest.Legacy(1, "skills/list", nil)
			rq.Headers["MCP-Protocol-Version"] = mcpwire.Version20251125
		}
		w := mcptest.Do(t, h, rq)
		assert.Equal(t, http.StatusForbidden, w.Code, "modern=%v: %s", modern, w.Body)
		assert.Equal(t, `Bearer error="insufficient_scope", scope="skills:read"`, w.Header().Get("WWW-Authenticate"), "modern=%v", modern)

		w = mcptest.Do(t, scoped, rq) // with the scope: alice's two skills
		require.Equal(t, http.StatusOK, w.Code, "modern=%v: %s", modern, w.Body)
		rpc := mcptest.Decode(t, w)
		require.Nil(t, rpc.Error)
		assert.Equal(t, 2, strings.Count(string(rpc.Result), `"frontmatter":`), "modern=%v: %s", modern, rpc.Result)
	}
}
