package interop_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skillsOf lists token's skills over plain HTTP: name → SKILL.md URI.
func skillsOf(t *testing.T, d *documents, token string) map[string]string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, d.mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"skills/list"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out struct {
		Result struct {
			Skills []struct {
				URI         string `json:"uri"`
				Frontmatter struct {
					Name string `json:"name"`
				} `json:"frontmatter"`
			} `json:"skills"`
		} `json:"result"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	m := map[string]string{}
	for _, s := range out.Result.Skills {
		m[s.Frontmatter.Name] = s.URI
	}
	return m
}

type tsSkillsSummary struct {
	SDKVersion      string `json:"sdkVersion"`
	ProtocolVersion string `json:"protocolVersion"`
	Supported       bool   `json:"supported"`
	DirectoryRead   bool   `json:"directoryRead"`
	CacheScope      any    `json:"cacheScope"`
	Skills          []struct {
		URI          string   `json:"uri"`
		Name         string   `json:"name"`
		Files        []string `json:"files"`
		Verified     int      `json:"verified"`
		RootChildren []string `json:"rootChildren"`
	} `json:"skills"`
	Foreign []struct {
		URI      string `json:"uri"`
		Rejected bool   `json:"rejected"`
		Code     int64  `json:"code"`
	} `json:"foreign"`
	Problems []string `json:"problems"`
	OK       bool     `json:"ok"`
}

// The TypeScript SDK v2 client's SkillsClient lists alice's skills (hers
// and the one bob shares with her) from the documents server in both
// eras, verifies every file it reads against the entry (size, digest,
// frontmatter), reads their directories, and is refused bob's own skill
// and its directory with -32602, as for ones that do not exist.
func TestTypeScriptSDKSkills(t *testing.T) {
	node, sdkDir := tsSDK(t)
	d := startDocuments(t)
	bobs := skillsOf(t, d, d.bob)["incident-review"]
	require.NotEmpty(t, bobs)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			var s tsSkillsSummary
			runTSClient(t, node, sdkDir, d.alice, &s, "skills.mjs", era, d.mcpURL, bobs, strings.TrimSuffix(bobs, "/SKILL.md"))
			assert.Empty(t, s.Problems)
			assert.True(t, s.OK)
			assert.True(t, s.Supported)
			assert.True(t, s.DirectoryRead)
			var names []string
			for _, sk := range s.Skills {
				names = append(names, sk.Name)
				assert.Equal(t, len(sk.Files), sk.Verified, "every file of %s verified", sk.Name)
				assert.Contains(t, sk.RootChildren, "SKILL.md text/markdown")
			}
			assert.ElementsMatch(t, []string{"release-notes", "meeting-minutes", "team-glossary"}, names)
			require.Len(t, s.Foreign, 2)
			for _, f := range s.Foreign {
				assert.True(t, f.Rejected, f.URI)
				assert.EqualValues(t, -32602, f.Code, f.URI)
			}
			if era == "modern" {
				assert.Equal(t, "2026-07-28", s.ProtocolVersion)
				assert.Equal(t, "private", s.CacheScope)
			}
			t.Logf("TypeScript SDK %s, protocol %s: %d skills, every file verified", s.SDKVersion, s.ProtocolVersion, len(s.Skills))
		})
	}
}

// The MCP Inspector's CLI (2.12.0) lists alice's skills from the documents
// server and verifies them (--verify: the extension's conformance checks,
// every file read back against its digest and size, SKILL.md's
// frontmatter) in both eras, and finds none of bob's own.
func TestInspectorSkillsVerify(t *testing.T) {
	node, launcher := inspectorCLI(t)
	d := startDocuments(t)
	bobs := skillsOf(t, d, d.bob)["incident-review"]
	require.NotEmpty(t, bobs)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			code, out := inspect(t, node, launcher, d.mcpURL, d.alice, nil, "--protocol-era", era, "--method", "skills/list", "--verify")
			require.Zero(t, code, out)
			assert.Contains(t, out, "Verified 3 skills and 8 files: no conformance errors.")
			assert.NotContains(t, out, bobs)
			var verified int
			for _, line := range strings.Split(out, "\n") {
				var report struct {
					Name    string `json:"name"`
					OK      bool   `json:"ok"`
					Outcome string `json:"outcome"`
				}
				if json.Unmarshal([]byte(line), &report) == nil && report.Name != "" {
					assert.True(t, report.OK, line)
					assert.Equal(t, "verified", report.Outcome, line)
					verified++
				}
			}
			assert.Equal(t, 3, verified)
			code, out = inspect(t, node, launcher, d.mcpURL, d.alice, nil, "--protocol-era", era, "--method", "skills/get", "--uri", bobs)
			assert.NotZero(t, code, "bob's skill is refused to alice: %s", out)
			assert.Contains(t, out, "Skill not found", "as for a skill that does not exist")
		})
	}
}
