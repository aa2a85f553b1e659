package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sharing part of the walk-through printed at start (steps 8–14) works
// as printed: bash runs the printed commands with curl against the server,
// the way a developer pastes them. Two lines are adapted for a script:
// the session id is copied from step 8's answer (a person pastes it), and
// the waits poll the stream's output instead of sleeping.
func TestWalkthroughSharingScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not found: the printed commands use it")
	}
	s := start(t, nil)
	out := s.stdout.waitFor(t, "kill %1")
	id := s.firstDocs(t, "alice", 1)[0]
	uri := documentPrefix + id

	vars := strings.Join(regexp.MustCompile(`(?m)^(MCP|API|ALICE|BOB)=\S+$`).FindAllString(out, -1), "\n")
	require.Equal(t, 4, strings.Count(vars, "\n")+1, out)
	start8 := strings.Index(out, "# 8.")
	require.GreaterOrEqual(t, start8, 0)
	steps := out[start8:]
	steps = steps[:strings.Index(steps, "kill %1")+len("kill %1")]
	assert.Contains(t, steps, `"$API/documents/`+id+`/shares"`, "the banner names alice's real document")
	assert.Contains(t, steps, `"uri":"`+uri+`"`)

	dir := t.TempDir()
	log := filepath.Join(dir, "out")
	waitFor := func(pattern string, n int) string { // poll the output, never sleep blindly
		return `until [ "$(grep -c '` + pattern + `' "$OUT")" -ge ` + string(rune('0'+n)) + ` ]; do sleep 0.01; done`
	}
	steps = strings.Replace(steps, "SESSION=PASTE-THE-Mcp-Session-Id-HERE",
		`SESSION=$(tr -d '\r' < "$OUT" | sed -n 's/^Mcp-Session-Id: //p')`, 1)
	steps = regexp.MustCompile(`(?m)^sleep 1.*$`).ReplaceAllLiteralString(steps, waitFor("^data: $", 1)) // the stream's priming event
	steps = strings.Replace(steps, "kill %1", waitFor("list_changed", 2)+"\nkill %1", 1)
	script := "set -e\nOUT=" + log + "\n" + vars + "\n" + steps + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "walk.sh"), []byte(script), 0o600))

	// The deadline only bounds a failure: a broken script must not hang.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, filepath.Join(dir, "walk.sh"))
	cmd.WaitDelay = 5 * time.Second
	f, err := os.Create(log)
	require.NoError(t, err)
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	got, _ := os.ReadFile(log)
	require.NoError(t, err, "script:\n%s\noutput:\n%s", script, got)
	text := string(got)

	assert.Contains(t, text, `{"uri":"`+uri+`","sharedWith":"bob"}`, "step 10")
	assert.Equal(t, 2, strings.Count(text, `data: {"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`), "steps 10 and 13, on bob's stream")
	assert.Equal(t, 1, strings.Count(text, `data: {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"`+uri+`"}}`), "step 12")
	assert.Regexp(t, `"id":11,"result":\{"resources":\[[^\n]*"uri":"`+regexp.QuoteMeta(uri)+`"`, text, "step 11: listed")
	assert.Contains(t, text, `"id":12,"result":{"contents":[{"uri":"`+uri+`"`, "step 11: read")
	assert.Contains(t, text, `{"jsonrpc":"2.0","id":13,"result":{}}`, "step 12: subscribed")
	assert.Len(t, regexp.MustCompile(`(?m)^204$`).FindAllString(text, -1), 2, "steps 12 and 13:\n%s", text)
	assert.Regexp(t, `"id":14,"result":\{"resources":\[`, text)
	assert.NotRegexp(t, `"id":14,"result":[^\n]*`+regexp.QuoteMeta(uri), text, "step 13: gone from bob's list")
	assert.Contains(t, text, `{"error":"not_found","message":"document not found"}`, "step 14")
	assert.Equal(t, "Edited by alice while bob watched.", readText(t, s.read(t, s.token(t, "alice"), uri)))
}
