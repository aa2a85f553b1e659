package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/authntest"
	"github.com/mcpkit/mcpkit/examples/skills/disk"
)

// server is the example serving the sample folder over loopback, with a
// test issuer's tokens.
type server struct {
	mcpURL string
	is     *authntest.Issuer
}

func start(t *testing.T) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	resource := "http://" + ln.Addr().String() + "/mcp"
	is := authntest.Start(t, authntest.Options{Resource: resource})
	v, err := authn.NewJWTVerifier(context.Background(), is.JWTOptions())
	require.NoError(t, err)
	folder, err := disk.Open("sample", nil)
	require.NoError(t, err)
	t.Cleanup(func() { folder.Close() })
	h, err := newService(folder, v, resource, is.JWTOptions().Issuer)
	require.NoError(t, err)
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(srv.Close)
	return &server{mcpURL: resource, is: is}
}

func (s *server) post(t *testing.T, token, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.mcpURL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func (s *server) skillNames(t *testing.T, user string) []string {
	t.Helper()
	res := s.post(t, s.is.Token(user, scopeSkills), `{"jsonrpc":"2.0","id":1,"method":"skills/list"}`)
	require.Equal(t, http.StatusOK, res.StatusCode)
	var out struct {
		Result struct {
			Skills []struct {
				Frontmatter struct {
					Name string `json:"name"`
				} `json:"frontmatter"`
			} `json:"skills"`
		} `json:"result"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	var names []string
	for _, s := range out.Result.Skills {
		names = append(names, s.Frontmatter.Name)
	}
	return names
}

// Each caller lists their own folder's skills; a token without the
// skills scope gets the step-up challenge; bob cannot read alice's files.
func TestPerUserSkills(t *testing.T) {
	s := start(t)
	assert.Equal(t, []string{"git-workflow", "pdf-processing"}, s.skillNames(t, "alice"))
	assert.Equal(t, []string{"incident-review"}, s.skillNames(t, "bob"))
	assert.Empty(t, s.skillNames(t, "carol"), "no folder, no skills")

	res := s.post(t, s.is.Token("alice"), `{"jsonrpc":"2.0","id":1,"method":"skills/list"}`)
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	assert.Contains(t, res.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`)
	assert.Contains(t, res.Header.Get("WWW-Authenticate"), `scope="skills:read"`)

	read := func(user, uri string) string {
		res := s.post(t, s.is.Token(user, scopeSkills), `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"`+uri+`"}}`)
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return string(b)
	}
	assert.Contains(t, read("alice", "skill://pdf-processing/references/FORMS.md"), "Fill every required field")
	assert.Contains(t, read("bob", "skill://pdf-processing/references/FORMS.md"), "Resource not found")
	assert.Contains(t, read("bob", "skill://incident-review/../../alice/pdf-processing/SKILL.md"), "Resource not found")
}

// The official TypeScript SDK v2 client's SkillsClient lists alice's
// skills from the example in both eras, verifies every file it reads
// against its entry (digest, size, frontmatter), reads their directories,
// and is refused bob's skill and its directory.
func TestTypeScriptSDKSkillsFromDisk(t *testing.T) {
	node, sdkDir := tsSDK(t)
	s := start(t)
	script, err := filepath.Abs(filepath.Join("..", "interop", "tsclient", "skills.mjs"))
	require.NoError(t, err)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, script, era, s.mcpURL, "skill://incident-review/SKILL.md", "skill://incident-review")
			cmd.Env = append(os.Environ(), "MCPKIT_TS_SDK_DIR="+sdkDir, "MCPKIT_TOKEN="+s.is.Token("alice", scopeSkills))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			runErr := cmd.Run()
			var exit *exec.ExitError
			if runErr != nil && (!errors.As(runErr, &exit) || exit.ExitCode() == 2) {
				t.Fatalf("skills.mjs could not run: %v\n%s", runErr, stderr.String())
			}
			var sum struct {
				Supported bool `json:"supported"`
				Skills    []struct {
					Name     string   `json:"name"`
					Files    []string `json:"files"`
					Verified int      `json:"verified"`
				} `json:"skills"`
				Foreign []struct {
					URI      string `json:"uri"`
					Rejected bool   `json:"rejected"`
				} `json:"foreign"`
				Problems []string `json:"problems"`
				OK       bool     `json:"ok"`
			}
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &sum), "%s\n%s", stdout.String(), stderr.String())
			assert.Empty(t, sum.Problems)
			assert.True(t, sum.OK)
			assert.True(t, sum.Supported)
			var names []string
			for _, sk := range sum.Skills {
				names = append(names, sk.Name)
				assert.Equal(t, len(sk.Files), sk.Verified, "every file of %s verified", sk.Name)
			}
			assert.ElementsMatch(t, []string{"git-workflow", "pdf-processing"}, names)
			require.Len(t, sum.Foreign, 2)
			for _, f := range sum.Foreign {
				assert.True(t, f.Rejected, f.URI)
			}
		})
	}
}

// tsSDK finds node and the pinned TypeScript SDK (examples/interop/tsclient);
// it skips without them, but fails under CI=true.
func tsSDK(t *testing.T) (node, dir string) {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true: " + why)
		}
		t.Skip(why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
	}
	dir = os.Getenv("MCPKIT_TS_SDK_DIR")
	if dir == "" {
		missing("MCPKIT_TS_SDK_DIR is not set (examples/interop/tsclient/install.sh)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "client", "package.json")); err != nil {
		missing("no @modelcontextprotocol/client in MCPKIT_TS_SDK_DIR=" + dir)
	}
	return node, dir
}
