package fleet

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFleetStreamCutBeforeItsFirstEvent: bob's legacy GET stream on
// instance B is cut right after its priming event, before any message;
// alice's edit of the document bob subscribed to is made on C while he
// is away; bob reconnects on A with the primed id as Last-Event-ID: the
// missed update arrives, replayed (with an id), then the next live one.
// Before priming events the stream opened with a comment, the client had
// no id to give, and the edit was lost.
func TestFleetStreamCutBeforeItsFirstEvent(t *testing.T) {
	f := startFleet(t)
	alice, bob := f.token(t, "alice"), f.token(t, "bob")
	var shared string
	for _, u := range walkPages(t, connect(t, f.inst[0].mcpURL(), alice, "2025-11-25", nil), nil) {
		if strings.HasPrefix(u, documentPrefix) {
			shared = u
			break
		}
	}
	require.NotEmpty(t, shared, "alice has a document")
	f.api(t, f.inst[0], alice, http.MethodPost, strings.TrimPrefix(shared, documentPrefix)+"/shares", `{"with":"bob"}`)

	// bob's session (in Redis), made on B, subscribed through C.
	session := f.subscribedSession(t, bob, shared)

	// The stream on B: its priming event, then the cut.
	onB := openGET(t, f.inst[1].mcpURL(), bob, session, "")
	var primed string
	select {
	case primed = <-onB.primed:
	case <-time.After(10 * time.Second):
		t.Fatal("bob's GET stream on B sent no priming event")
	}
	require.NotEmpty(t, primed, "the priming event carries an id")
	onB.res.Body.Close()
	for e := range onB.events {
		t.Fatalf("a message before the cut: %+v", e)
	}

	// While bob is away: alice's edit, on C.
	f.edit(t, f.inst[2], alice, shared, "Edited while bob's stream was cut before its first event.")

	// bob reconnects on A with the primed id.
	// (A list_changed with an id may come before or between the updates:
	// the share's, sent again; see nextChange.)
	again := openGET(t, f.inst[0].mcpURL(), bob, session, primed)
	missed := again.nextChange(t)
	assert.Equal(t, note{"notifications/resources/updated", shared}, missed.note, "the edit made while the stream was cut")
	assert.NotEmpty(t, missed.id, "replayed, not a restart")
	f.edit(t, f.inst[1], alice, shared, "Edited after bob's stream resumed on A.")
	live := again.nextChange(t)
	assert.Equal(t, note{"notifications/resources/updated", shared}, live.note, "nothing between the replay and the next change")
	assert.NotEqual(t, missed.id, live.id)
}
