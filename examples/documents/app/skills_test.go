package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
)

type skillEntryJSON struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   []skills.File   `json:"resources"`
}

// skillsWalk follows skills/list's nextCursor to the end.
func (s *testServer) skillsWalk(t *testing.T, token string) ([]skillEntryJSON, int) {
	t.Helper()
	var all []skillEntryJSON
	cursor, pages := "", 0
	for {
		var page struct {
			Skills []skillEntryJSON `json:"skills"`
			Next   string           `json:"nextCursor"`
		}
		s.page(t, token, "skills/list", cursor, &page)
		all = append(all, page.Skills...)
		pages++
		if page.Next == "" {
			return all, pages
		}
		require.Less(t, pages, 100)
		cursor = page.Next
	}
}

func names(entries []skillEntryJSON) []string {
	var out []string
	for _, e := range entries {
		var fm struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(e.Frontmatter, &fm)
		out = append(out, fm.Name)
	}
	return out
}

// The seed: alice sees her two skills and the one bob shares with her;
// bob sees his two. Every file of every listed skill reads back through
// resources/read with the listed size and digest.
func TestSkillsPerUser(t *testing.T) {
	s := start(t, nil)
	alice, bob := s.token(t, "alice"), s.token(t, "bob")
	aliceSkills, _ := s.skillsWalk(t, alice)
	bobSkills, _ := s.skillsWalk(t, bob)
	assert.ElementsMatch(t, []string{"release-notes", "meeting-minutes", "team-glossary"}, names(aliceSkills))
	assert.ElementsMatch(t, []string{"incident-review", "team-glossary"}, names(bobSkills))
	for _, sk := range aliceSkills {
		require.NotEmpty(t, sk.Resources)
		for _, f := range sk.Resources {
			out := s.read(t, alice, f.URI)
			require.Nil(t, out.Error, f.URI)
			var rr struct {
				Contents []struct {
					Text string  `json:"text"`
					Blob *string `json:"blob"`
				} `json:"contents"`
			}
			require.NoError(t, json.Unmarshal(out.Result, &rr))
			require.Len(t, rr.Contents, 1)
			raw := []byte(rr.Contents[0].Text)
			if rr.Contents[0].Blob != nil {
				var err error
				raw, err = base64.StdEncoding.DecodeString(*rr.Contents[0].Blob)
				require.NoError(t, err)
			}
			assert.Equal(t, f.Size, int64(len(raw)), f.URI)
			assert.Equal(t, f.Digest, skills.Digest(raw), f.URI)
		}
		res, out := s.post(t, alice, "skills/get", map[string]any{"uri": sk.URI})
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Nil(t, out.Error)
		assert.Contains(t, string(out.Result), sk.URI)
	}
}

// Hostile: alice asks for bob's own skill by every method; the answers are
// exactly those for a skill that does not exist.
func TestSkillsOfOthersLookUnknown(t *testing.T) {
	s := start(t, nil)
	alice, bob := s.token(t, "alice"), s.token(t, "bob")
	bobSkills, _ := s.skillsWalk(t, bob)
	var bobs string
	for i, n := range names(bobSkills) {
		if n == "incident-review" {
			bobs = bobSkills[i].URI
		}
	}
	require.NotEmpty(t, bobs)
	dir := strings.TrimSuffix(bobs, "/SKILL.md")
	id := strings.Split(strings.TrimPrefix(dir, "skill://"), "/")[0]
	none := strings.Replace(bobs, id, "AAAAAAAAAAAAAAAAAAAAAA", 1)
	noneDir := strings.TrimSuffix(none, "/SKILL.md")
	for _, tc := range []struct{ method, bobs, none string }{
		{"skills/get", bobs, none},
		{"resources/read", bobs, none},
		{"resources/directory/read", dir, noneDir},
	} {
		res1, got := s.post(t, alice, tc.method, map[string]any{"uri": tc.bobs})
		res2, want := s.post(t, alice, tc.method, map[string]any{"uri": tc.none})
		require.Equal(t, res2.StatusCode, res1.StatusCode, tc.method)
		require.NotNil(t, got.Error, tc.method)
		require.NotNil(t, want.Error, tc.method)
		assert.Equal(t, want.Error.Code, got.Error.Code, tc.method)
		assert.Equal(t, want.Error.Message, got.Error.Message, tc.method)
		assert.Equal(t, strings.ReplaceAll(string(want.Error.Data), tc.none, "U"), strings.ReplaceAll(string(got.Error.Data), tc.bobs, "U"), tc.method)
		_, own := s.post(t, bob, tc.method, map[string]any{"uri": tc.bobs})
		assert.Nil(t, own.Error, "bob reads his own with %s", tc.method)
	}
}

// Skills pages follow the server's page size; their cursors are bound to
// the caller: bob's replay of alice's, and a tampered one, are -32602.
func TestSkillsCursors(t *testing.T) {
	s := start(t, smallPages)
	for i := range 6 {
		_, err := s.app.skills.CreateSkill(context.Background(), store.NewSkill{
			Owner: "alice", Name: fmt.Sprintf("extra-%d", i), Description: "An extra skill", Body: "# Extra\n"})
		require.NoError(t, err)
	}
	alice, bob := s.token(t, "alice"), s.token(t, "bob")
	all, pages := s.skillsWalk(t, alice)
	assert.Len(t, all, 9)
	assert.Equal(t, 2, pages)
	_, out := s.post(t, alice, "skills/list", nil)
	var page struct {
		Next string `json:"nextCursor"`
	}
	require.NoError(t, json.Unmarshal(out.Result, &page))
	require.NotEmpty(t, page.Next)
	for name, tc := range map[string]struct{ token, cursor string }{
		"bob replays alice's": {bob, page.Next},
		"tampered":            {alice, tamper(page.Next)},
	} {
		_, out := s.post(t, tc.token, "skills/list", map[string]any{"cursor": tc.cursor})
		require.NotNil(t, out.Error, name)
		assert.EqualValues(t, -32602, out.Error.Code, name)
	}
}

// The extension is declared in initialize and server/discover.
func TestSkillsCapability(t *testing.T) {
	s := start(t, nil)
	_, out := s.post(t, s.token(t, "alice"), "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	require.Nil(t, out.Error)
	assert.Contains(t, string(out.Result), `"extensions":{"io.modelcontextprotocol/skills":{"directoryRead":true}}`)
}

// FuzzParseSkillURI: a URI a client sends never panics the parser, and
// what it accepts is exactly skill://<id>/<name>/SKILL.md of its parts.
func FuzzParseSkillURI(f *testing.F) {
	for _, s := range []string{"skill://abc/release-notes/SKILL.md", "skill://abc/a/b/SKILL.md", "skill:///SKILL.md", "skill://x/SKILL.md", "docs://x/y/SKILL.md", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		id, name, ok := parseSkillURI(uri)
		if ok && "skill://"+id+"/"+name+"/SKILL.md" != uri {
			t.Fatalf("%q read as id %q name %q", uri, id, name)
		}
		if ok && strings.Contains(name, "/") {
			t.Fatalf("%q: a name with a slash", uri)
		}
	})
}

// Sharing a skill over the REST API: only its owner may, and afterwards
// the grantee lists it; a skill that is not the caller's answers exactly
// as one that does not exist.
func TestSkillsShareAPI(t *testing.T) {
	s := start(t, nil)
	alice, bob := s.token(t, "alice"), s.token(t, "bob")
	carol := s.token(t, "carol")
	mine, err := s.app.skills.ListSkills(context.Background(), "alice", "", 10)
	require.NoError(t, err)
	var notes string
	for _, sk := range mine {
		if sk.Name == "release-notes" {
			notes = sk.ID
		}
	}
	require.NotEmpty(t, notes)
	carolSkills, _ := s.skillsWalk(t, carol)
	assert.Empty(t, carolSkills)

	res, body := s.api(t, bob, http.MethodPost, "/api/skills/"+notes+"/shares", `{"with":"carol"}`)
	res2, body2 := s.api(t, bob, http.MethodPost, "/api/skills/AAAAAAAAAAAAAAAAAAAAAA/shares", `{"with":"carol"}`)
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "bob cannot share alice's skill")
	assert.Equal(t, res2.StatusCode, res.StatusCode)
	assert.Equal(t, body2, body)

	res, body = s.api(t, alice, http.MethodPost, "/api/skills/"+notes+"/shares", `{"with":"alice"}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)

	res, body = s.api(t, alice, http.MethodPost, "/api/skills/"+notes+"/shares", `{"with":"carol"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	carolSkills, _ = s.skillsWalk(t, carol)
	assert.Equal(t, []string{"release-notes"}, names(carolSkills))
}

// A skill share can be revoked (issue 35: there was no route): after
// alice's DELETE /api/skills/{id}/shares/carol, carol's next skills/list,
// skills/get and resources/read answer as for a skill that does not
// exist; bob cannot revoke alice's share; revoking again is no error.
func TestSkillsUnshareAPI(t *testing.T) {
	s := start(t, nil)
	alice, bob, carol := s.token(t, "alice"), s.token(t, "bob"), s.token(t, "carol")
	mine, err := s.app.skills.ListSkills(context.Background(), "alice", "", 10)
	require.NoError(t, err)
	var notes string
	for _, sk := range mine {
		if sk.Name == "release-notes" {
			notes = sk.ID
		}
	}
	require.NotEmpty(t, notes)
	res, body := s.api(t, alice, http.MethodPost, "/api/skills/"+notes+"/shares", `{"with":"carol"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	carolSkills, _ := s.skillsWalk(t, carol)
	require.Equal(t, []string{"release-notes"}, names(carolSkills))
	uri := carolSkills[0].URI
	none := strings.Replace(uri, notes, "AAAAAAAAAAAAAAAAAAAAAA", 1)
	for _, method := range []string{"skills/get", "resources/read"} {
		_, out := s.post(t, carol, method, map[string]any{"uri": uri})
		require.Nil(t, out.Error, "carol reads the shared skill with %s", method)
	}

	res, body = s.api(t, bob, http.MethodDelete, "/api/skills/"+notes+"/shares/carol", "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "bob cannot revoke alice's share: %s", body)
	res, body = s.api(t, alice, http.MethodDelete, "/api/skills/"+notes+"/shares/alice", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, "the owner keeps her access: %s", body)
	carolSkills, _ = s.skillsWalk(t, carol)
	require.Len(t, carolSkills, 1, "still shared")

	res, body = s.api(t, alice, http.MethodDelete, "/api/skills/"+notes+"/shares/carol", "")
	require.Equal(t, http.StatusNoContent, res.StatusCode, body)
	carolSkills, _ = s.skillsWalk(t, carol)
	assert.Empty(t, carolSkills, "carol's next skills/list no longer shows it")
	for _, method := range []string{"skills/get", "resources/read"} {
		_, got := s.post(t, carol, method, map[string]any{"uri": uri})
		_, want := s.post(t, carol, method, map[string]any{"uri": none})
		require.NotNil(t, got.Error, "%s after the revocation", method)
		require.NotNil(t, want.Error, method)
		assert.Equal(t, want.Error.Code, got.Error.Code, method)
		assert.Equal(t, want.Error.Message, got.Error.Message, method)
	}
	aliceSkills, _ := s.skillsWalk(t, alice)
	assert.Contains(t, names(aliceSkills), "release-notes", "the owner still has it")
	res, body = s.api(t, alice, http.MethodDelete, "/api/skills/"+notes+"/shares/carol", "")
	assert.Equal(t, http.StatusNoContent, res.StatusCode, "revoking again: %s", body)
}
