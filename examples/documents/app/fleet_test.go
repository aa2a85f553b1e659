package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/pgnotify"
)

// postgresEnv names the DSN of the PostgreSQL server the tests may use.
const postgresEnv = "MCPKIT_TEST_POSTGRES_DSN"

// testPostgres returns a DSN whose search_path is a fresh schema (dropped
// when the test ends) and a fresh notification channel. Without
// postgresEnv the test is skipped, or fails under CI=true.
func testPostgres(t *testing.T) (dsn, channel string) {
	t.Helper()
	base := os.Getenv(postgresEnv)
	if base == "" {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatalf("%s is not set under CI=true: .ci/run must start PostgreSQL (source .ci/postgres.sh && pg_start)", postgresEnv)
		}
		t.Skipf("PostgreSQL tests skipped: %s is not set. To run them: "+
			"source .ci/postgres.sh && pg_start && go test -race ./examples/documents/app/; pg_stop", postgresEnv)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	suffix := hex.EncodeToString(rnd[:])
	schema := "mcpkit_test_" + suffix
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	_, err = admin.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() { // registered first: runs after the servers stopped
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		admin.Close(ctx)
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), "mcpkit_test_" + suffix
}

// Two instances sharing a PostgreSQL database, as behind a load balancer:
// bob's streams are open on B, alice's requests go to A. The share made
// on A reaches bob's streams on B (through LISTEN/NOTIFY), bob lists and
// reads the document on B, alice's edit on A reaches him too, and carol's
// streams (one on each instance) hear nothing.
func TestFleetOverPostgres(t *testing.T) {
	dsn, channel := testPostgres(t)
	dataDir := t.TempDir() // one development key for both instances
	cfg := func(c *Config) { c.DB, c.NotifyChannel, c.DataDir = dsn, channel, dataDir }
	a, b := start(t, cfg), start(t, cfg)
	for _, s := range []*testServer{a, b} {
		require.NotNil(t, s.app.broker)
		waitListening(t, s.app.broker)
	}
	assert.Contains(t, a.logs.String(), "notifications=\"postgres LISTEN/NOTIFY channel "+channel+"\"")

	aliceA := a.token(t, "alice")
	bobB, carolA, carolB := b.token(t, "bob"), a.token(t, "carol"), b.token(t, "carol")
	id := a.firstDocs(t, "alice", 1)[0]
	uri := documentPrefix + id

	bobSession := b.initialize(t, bobB)
	b.subscribe(t, bobB, bobSession, AboutURI)
	b.subscribe(t, bobB, bobSession, uri)
	bobGET := b.openGET(t, bobB, "bob", bobSession, 1)
	bobListen := b.listen(t, bobB, "bob", []string{AboutURI, uri}, 2)
	carolSessionA := a.initialize(t, carolA)
	a.subscribe(t, carolA, carolSessionA, AboutURI)
	carolOnA := a.openGET(t, carolA, "carol", carolSessionA, 1)
	carolOnB := b.listen(t, carolB, "carol", []string{AboutURI, uri}, 1)

	a.share(t, aliceA, id, "bob")
	assert.Equal(t, listChangedNote(), parseNote(t, bobGET.next(t)), "A's change, B's legacy stream")
	assert.Equal(t, listChangedNote(), parseNote(t, bobListen.next(t)), "A's change, B's modern stream")
	assert.Contains(t, b.walkURIs(t, bobB), uri)
	assert.Contains(t, readText(t, b.read(t, bobB, uri)), "private document of alice")

	a.update(t, aliceA, id, "Edited on A.")
	assert.Equal(t, updatedNote(uri), parseNote(t, bobGET.next(t)))
	assert.Equal(t, updatedNote(uri), parseNote(t, bobListen.next(t)))
	assert.Equal(t, "Edited on A.", readText(t, b.read(t, bobB, uri)))

	// Markers, published on A: they travel through the database as well.
	for _, p := range []string{"bob", "carol"} {
		a.app.hub.ResourceUpdated(context.Background(), p, AboutURI)
	}
	for name, st := range map[string]*sseStream{"bob GET": bobGET, "bob listen": bobListen, "carol on A": carolOnA, "carol on B": carolOnB} {
		assert.Empty(t, st.untilMarker(t), name)
	}
}

// waitListening polls until the broker's listener listens.
func waitListening(t *testing.T, b *pgnotify.Broker) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for b.Stats().Connects == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the notification listener never listened")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Revocation over a fleet (issue 35): two instances sharing a PostgreSQL
// database. Alice shares a document and a skill on A, bob sees both on
// B; alice revokes both on A; bob's stream on B hears list_changed, and
// his next resources/list, resources/read, skills/list and skills/get on
// B no longer show them.
func TestFleetRevocationOverPostgres(t *testing.T) {
	dsn, channel := testPostgres(t)
	dataDir := t.TempDir()
	cfg := func(c *Config) { c.DB, c.NotifyChannel, c.DataDir = dsn, channel, dataDir }
	a, b := start(t, cfg), start(t, cfg)
	for _, s := range []*testServer{a, b} {
		waitListening(t, s.app.broker)
	}
	aliceA, bobB := a.token(t, "alice"), b.token(t, "bob")
	id := a.firstDocs(t, "alice", 1)[0]
	uri := documentPrefix + id
	mine, err := a.app.skills.ListSkills(context.Background(), "alice", "", 10)
	require.NoError(t, err)
	require.NotEmpty(t, mine)
	skill := mine[0].ID

	bobSession := b.initialize(t, bobB)
	bobGET := b.openGET(t, bobB, "bob", bobSession, 1)
	a.share(t, aliceA, id, "bob")
	res, body := a.api(t, aliceA, http.MethodPost, "/api/skills/"+skill+"/shares", `{"with":"bob"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Equal(t, listChangedNote(), parseNote(t, bobGET.next(t)))
	assert.Contains(t, b.walkURIs(t, bobB), uri)
	require.Nil(t, b.read(t, bobB, uri).Error)
	bobSkills, _ := b.skillsWalk(t, bobB)
	var skillURI string
	for _, e := range bobSkills {
		if strings.Contains(e.URI, skill) {
			skillURI = e.URI
		}
	}
	require.NotEmpty(t, skillURI, "bob lists the shared skill on B")

	a.unshare(t, aliceA, id, "bob")
	res, body = a.api(t, aliceA, http.MethodDelete, "/api/skills/"+skill+"/shares/bob", "")
	require.Equal(t, http.StatusNoContent, res.StatusCode, body)
	assert.Equal(t, listChangedNote(), parseNote(t, bobGET.next(t)), "A's revocation, B's stream")
	assert.NotContains(t, b.walkURIs(t, bobB), uri)
	assert.NotNil(t, b.read(t, bobB, uri).Error, "bob's next read on B")
	bobSkills, _ = b.skillsWalk(t, bobB)
	for _, e := range bobSkills {
		assert.NotContains(t, e.URI, skill, "bob's next skills/list on B")
	}
	_, out := b.post(t, bobB, "skills/get", map[string]any{"uri": skillURI})
	assert.NotNil(t, out.Error, "bob's next skills/get on B")
}
