package fleet

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/app"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/redisstore"
)

const (
	documentPrefix = "docs://documents/"
	// Every instance's list budget per caller: 60 at once, then one
	// every 20 s. The rate test spends a fresh caller's.
	listBurst = 60
	rateList  = "0.05:60"
)

// fleet is three documents instances (child processes of the built
// binary) behind HAProxy, on one PostgreSQL schema, one Redis and one
// cursor key ring, trusting one JWKS issuer.
type fleet struct {
	resource string // the balancer's MCP URL: the tokens' audience
	is       *testissuer.Issuer
	redis    *redisProc    // one Redis, or
	cluster  *redisCluster // a Redis Cluster (TestFleetOnCluster)
	inst     [3]*instance
	haproxy  *proc
}

type instance struct {
	addr string
	p    *proc
}

func (in *instance) mcpURL() string { return "http://" + in.addr + "/mcp" }
func (in *instance) apiURL() string { return "http://" + in.addr + "/api/documents/" }

func startFleet(t *testing.T) *fleet { t.Helper(); return startFleetOn(t, false) }

// startFleetOn starts the fleet on one Redis, or on a Redis Cluster of
// three masters with a replica each.
func startFleetOn(t *testing.T, onCluster bool) *fleet {
	t.Helper()
	redisBin := binary("MCPKIT_REDIS_SERVER", "redis-server")
	need(t, redisBin != "", "no redis-server (source .ci/redis.sh && redis_ensure)")
	haproxyBin := binary("MCPKIT_HAPROXY", "haproxy")
	need(t, haproxyBin != "", "no haproxy (source .ci/haproxy.sh && haproxy_ensure)")
	pgBase := os.Getenv("MCPKIT_TEST_POSTGRES_DSN")
	need(t, pgBase != "", "MCPKIT_TEST_POSTGRES_DSN is not set (source .ci/postgres.sh && pg_start)")

	dir := t.TempDir()
	bin := buildDocuments(t, dir)
	dsn, channel := postgresSchema(t, pgBase)
	f := &fleet{}
	var client redis.UniversalClient
	redisURL := ""
	if onCluster {
		f.cluster = startRedisCluster(t, redisBin)
		client, redisURL = f.cluster.client(t), f.cluster.url()
	} else {
		f.redis = startRedis(t, redisBin)
		client, redisURL = f.redis.client(t), f.redis.url()
	}
	// A new Redis: the replay store would refuse proofs for its first
	// period (it cannot know what a Redis without its markers forgot).
	// This one never held any: mark it as intact, as an operator whose
	// Redis persists would find it.
	replay, err := redisstore.NewReplayStore(client, redisstore.ReplayOptions{})
	require.NoError(t, err)
	for _, m := range replay.Markers() {
		require.NoError(t, client.Set(context.Background(), m, "0", 0).Err())
	}

	front := freeAddr(t)
	f.resource = "http://" + front + "/mcp"
	f.is = testissuer.Start(t, testissuer.Options{Audience: f.resource})
	env := []string{"MCPKIT_CURSOR_KEYS=" + cursorKeys(), app.EnvRedisURL + "=" + redisURL}
	for i := range f.inst {
		in := &instance{addr: freeAddr(t)}
		seed := "false"
		if i == 0 {
			seed = "true" // alone: the others start on its documents
		}
		in.p = startProc(t, "instance "+string(rune('A'+i)), env, bin,
			"-addr", in.addr, "-db", dsn, "-notify-channel", channel,
			"-issuer", f.is.ID(), "-jwks-url", f.is.JWKSURL(), "-resource", f.resource,
			"-seed", seed, "-page-size", "5", "-dpop", "allowed", "-rate-list", rateList, "-trusted-proxies", "127.0.0.1/32",
			"-audit-log", "off", "-shutdown-timeout", "1s")
		waitHTTP(t, "http://"+in.addr+"/healthz", in.p)
		f.inst[i] = in
	}
	f.haproxy = startProc(t, "haproxy", []string{
		"FLEET_BIND=" + front, "FLEET_A=" + f.inst[0].addr, "FLEET_B=" + f.inst[1].addr, "FLEET_C=" + f.inst[2].addr,
	}, haproxyBin, "-db", "-f", "haproxy.cfg")
	waitHTTP(t, "http://"+front+"/healthz", f.haproxy)
	return f
}

func (f *fleet) token(t *testing.T, subject string) string {
	return f.is.Token(t, testissuer.Claims{Subject: subject, Scopes: []string{app.ScopeRead, app.ScopeShare}})
}

// api calls the REST API of one instance.
func (f *fleet) api(t *testing.T, in *instance, token, method, path, body string) {
	t.Helper()
	req, err := http.NewRequest(method, in.apiURL()+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Less(t, res.StatusCode, 300, "%s %s: %d", method, path, res.StatusCode)
}

func (f *fleet) edit(t *testing.T, in *instance, token, uri, text string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"body": text})
	f.api(t, in, token, http.MethodPut, strings.TrimPrefix(uri, documentPrefix), string(b))
}

// TestFleet runs the documents server as a fleet and drives it with real
// clients through the balancer while parts of it fail.
func TestFleet(t *testing.T) { runFleet(t, startFleet(t)) }

// runFleet drives f with real clients through the balancer while parts
// of it fail.
func runFleet(t *testing.T, f *fleet) {
	alice, bob := f.token(t, "alice"), f.token(t, "bob")

	// What one instance lists and reads, directly: the reference.
	direct := connect(t, f.inst[0].mcpURL(), alice, "2025-11-25", nil)
	want := walkPages(t, direct, nil)
	require.Greater(t, len(want), 5, "alice's list spans several pages")
	wantText := readAll(t, direct, want)
	var aliceDocs []string
	for _, u := range want {
		if strings.HasPrefix(u, documentPrefix) {
			aliceDocs = append(aliceDocs, u)
		}
	}
	shared, edited := aliceDocs[0], aliceDocs[1]

	t.Run("walk and read through the balancer, go-sdk in both eras", func(t *testing.T) {
		for _, version := range []string{"2025-11-25", ""} {
			cs := connect(t, f.resource, alice, version, nil)
			got := walkPages(t, cs, nil)
			assert.Equal(t, want, got, "era %q", version)
			assert.Equal(t, wantText, readAll(t, cs, got), "era %q", version)
		}
	})

	t.Run("walk and read through the balancer, TypeScript SDK v1", func(t *testing.T) {
		skipOnCluster(t, f)
		node, sdk := tsSDK(t)
		cmd := exec.Command(node, filepath.Join("..", "interop", "tsclient", "client.mjs"), f.resource)
		cmd.Env = append(os.Environ(), "MCPKIT_TS_SDK_DIR="+sdk, "MCPKIT_TOKEN="+alice)
		out, err := cmd.Output()
		require.NoError(t, err, "client.mjs: %s", out)
		var summary struct {
			Listed []string `json:"listed"`
		}
		require.NoError(t, json.Unmarshal(out, &summary), "%s", out)
		assert.Equal(t, want, summary.Listed)
	})

	t.Run("a change made on one instance reaches streams held by others", func(t *testing.T) { changeReachesOtherInstances(t, f, alice, bob, shared) })

	t.Run("TypeScript SDK v1: subscribe through the balancer, a change on another instance", func(t *testing.T) { tsSubscribeAcrossInstances(t, f, alice, bob, shared) })

	t.Run("a caller spread over three instances gets one budget", func(t *testing.T) { oneBudgetAcrossInstances(t, f) })

	t.Run("a DPoP proof accepted by one instance is refused by another", func(t *testing.T) { proofOnceAcrossInstances(t, f) })

	// bob's modern stream on instance A, which dies in the walk below.
	onA := listen(t, f.inst[0].mcpURL(), bob, []string{edited, shared})

	t.Run("forged tokens from one client through HAProxy: honest callers are served", func(t *testing.T) { forgedThroughProxy(t, f, alice) })

	t.Run("kill -9 an instance in the middle of a walk: the walk completes", func(t *testing.T) {
		// The texts now (the tests above edited one), read from B directly.
		now := readAll(t, connect(t, f.inst[1].mcpURL(), alice, "2025-11-25", nil), want)
		cs := connect(t, f.resource, alice, "2025-11-25", nil)
		got := walkPages(t, cs, func(page int) {
			if page == 1 {
				f.inst[0].p.kill()
			}
		})
		assert.Equal(t, want, got)
		assert.Equal(t, now, readAll(t, cs, got))
	})

	t.Run("a subscriptions/listen re-issued after its instance died receives the next change", func(t *testing.T) {
		onA.ended(t)
		again := listen(t, f.resource, bob, []string{shared})
		f.edit(t, f.inst[2], alice, shared, "Edited on C after A died.")
		for _, n := range again.untilUpdated(t, shared) {
			assert.Equal(t, "notifications/resources/list_changed", n.method, "only bob's own list_changed before it")
		}
	})

	if f.cluster != nil {
		t.Run("a Redis master killed: its replica takes over", func(t *testing.T) { clusterFailover(t, f, alice, bob) })
	}
	t.Run("Redis stopped and started again", func(t *testing.T) { redisRestarted(t, f, alice, bob, shared) })

	t.Run("a legacy stream resumes on another instance with Last-Event-ID", func(t *testing.T) {
		// bob's legacy session (in Redis) through the balancer, subscribed
		// to the shared document; its GET stream on instance B. Each
		// instance's session store comes back within a second of Redis,
		// and B's must have: wait until B mints a session.
		session := f.subscribedSession(t, bob, shared)
		onB := openGET(t, f.inst[1].mcpURL(), bob, session, "")
		// The stream subscribes after its response began: edit until an
		// update with an id arrives. The edits are made on B, so their ids
		// are given by B's publishing: a log of B's own (the hub's default
		// MemoryLog) would not know them on C, where the stream resumes.
		// B's event log has an outage gate of its own, which may still be
		// shut after Redis came back (its session store's is open: B
		// minted the session): until it opens, the stream starts without
		// an id and the updates go out without one (recorded later), as
		// the hub promises; keep editing until one carries an id.
		var got idEvent
		for i := 0; i < 20 && got.id == ""; i++ {
			f.edit(t, f.inst[1], alice, shared, "Edited for bob's GET stream, "+string(rune('a'+i)))
			select {
			case e := <-onB.events:
				require.Equal(t, note{"notifications/resources/updated", shared}, e.note)
				if e.id == "" {
					t.Logf("an update without an id (B's event log not back yet)")
				}
				got = e
			case <-time.After(time.Second):
			}
		}
		require.NotEmpty(t, got.id, "no notifications/resources/updated with an id on bob's GET stream")

		f.inst[1].p.kill()
		// The last id the client holds: whatever B wrote before it died.
		lastID := got.id
		for e := range onB.events {
			if e.id != "" {
				lastID = e.id
			}
		}
		// While bob's stream is down: alice edits the document he
		// subscribed to, and shares another with carol (carol's
		// list_changed, which bob must not be given).
		f.edit(t, f.inst[2], alice, shared, "Edited while bob's stream was down.")
		f.api(t, f.inst[2], alice, http.MethodPost, strings.TrimPrefix(edited, documentPrefix)+"/shares", `{"with":"carol"}`)

		// Reconnect through the balancer (only C is alive): the update
		// sent while the stream was down, with an id; a clean restart
		// would begin with list_changed and carry none.
		again := openGET(t, f.resource, bob, session, lastID)
		missed := again.next(t)
		assert.Equal(t, note{"notifications/resources/updated", shared}, missed.note, "the notification sent while the stream was down")
		assert.NotEmpty(t, missed.id, "replayed, not a restart")
		assert.NotEqual(t, lastID, missed.id)
		// The next change arrives live, and nothing came in between (no
		// duplicate, nothing of carol's).
		f.edit(t, f.inst[2], alice, shared, "Edited after bob's stream resumed.")
		live := again.next(t)
		assert.Equal(t, note{"notifications/resources/updated", shared}, live.note, "nothing between the replay and the next change")
		assert.NotEmpty(t, live.id)
		assert.NotEqual(t, missed.id, live.id)
		text := readAll(t, connect(t, f.resource, bob, "2025-11-25", nil), []string{shared})[shared]
		assert.Equal(t, "Edited after bob's stream resumed.", text)
	})
}

// dpop returns the headers of a request with a fresh DPoP proof.
func (f *fleet) dpop(t *testing.T) map[string]string {
	t.Helper()
	key, tok := f.dpopToken(t)
	return f.proofHeaders(t, key, tok)
}

// dpopToken returns a fresh proof key and a token of alice's bound to it.
func (f *fleet) dpopToken(t *testing.T) (*testissuer.ProofKey, string) {
	t.Helper()
	key, err := testissuer.NewProofKey(testissuer.EC256)
	require.NoError(t, err)
	jkt, err := key.Thumbprint()
	require.NoError(t, err)
	return key, f.is.Token(t, testissuer.Claims{Subject: "alice", Scopes: []string{app.ScopeRead}, DPoPThumbprint: jkt})
}

// proofHeaders returns the headers of a request to the balancer with tok
// and a fresh proof of key.
func (f *fleet) proofHeaders(t *testing.T, key *testissuer.ProofKey, tok string) map[string]string {
	t.Helper()
	proof, err := key.Sign(testissuer.Proof{Method: http.MethodPost, URL: f.resource, Token: tok})
	require.NoError(t, err)
	return map[string]string{"Authorization": "DPoP " + tok, "DPoP": proof}
}

// subscribedSession returns a legacy session of who's (in Redis), minted
// on instance B (waiting up to 15 s for B's session store) and subscribed
// to uri through instance C.
func (f *fleet) subscribedSession(t *testing.T, who, uri string) string {
	t.Helper()
	session := ""
	deadline := time.Now().Add(15 * time.Second)
	for session == "" {
		res, body := post(t, f.inst[1].mcpURL(), auth(who), "initialize", initializeParams)
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		session = res.Header.Get("Mcp-Session-Id")
		require.True(t, session != "" || time.Now().Before(deadline), "B mints no sessions")
		if session == "" {
			time.Sleep(100 * time.Millisecond)
		}
	}
	hdr := auth(who)
	hdr["Mcp-Session-Id"], hdr["MCP-Protocol-Version"] = session, "2025-11-25"
	res, body := post(t, f.inst[2].mcpURL(), hdr, "resources/subscribe", map[string]any{"uri": uri})
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.NotContains(t, body, `"error"`, "a subscription made through C")
	return session
}

// tsSDK returns node and MCPKIT_TS_SDK_DIR (eval "$(bash
// examples/interop/tsclient/install.sh)").
func tsSDK(t *testing.T) (node, dir string) {
	t.Helper()
	node, _ = exec.LookPath("node")
	dir = os.Getenv("MCPKIT_TS_SDK_DIR")
	need(t, node != "" && dir != "", `no node or MCPKIT_TS_SDK_DIR (eval "$(bash examples/interop/tsclient/install.sh)")`)
	return node, dir
}

// lineWriter sends each line written to it on lines.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if l != "" {
			w <- l
		}
	}
	return len(p), nil
}

// changeReachesOtherInstances: alice shares and edits through two
// instances; bob's go-sdk clients, in both eras, hear of it wherever
// their streams landed.
func changeReachesOtherInstances(t *testing.T, f *fleet, alice, bob, shared string) {
	// go-sdk, legacy era: a session (in Redis) through the balancer,
	// its GET stream and its subscription wherever they land.
	updated := make(chan string, 16)
	listChanged := make(chan struct{}, 16)
	legacy := connect(t, f.resource, bob, "2025-11-25", &mcp.ClientOptions{
		ResourceUpdatedHandler:     func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { listChanged <- struct{}{} },
	})
	// go-sdk, 2026-07-28: Subscribe opens a subscriptions/listen stream.
	modern := make(chan string, 16)
	mcs := connect(t, f.resource, bob, "", &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { modern <- r.Params.URI },
	})
	// alice shares through instance C: bob's list changes.
	f.api(t, f.inst[2], alice, http.MethodPost, strings.TrimPrefix(shared, documentPrefix)+"/shares", `{"with":"bob"}`)
	require.NoError(t, legacy.Subscribe(context.Background(), &mcp.SubscribeParams{URI: shared}))
	require.NoError(t, mcs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: shared}))

	// The GET stream opens after initialize; edits until each client
	// has seen one (every edit is a real change, on instance B).
	gotLegacy, gotModern := false, false
	for i := 0; i < 20 && !(gotLegacy && gotModern); i++ {
		f.edit(t, f.inst[1], alice, shared, "Edited on B, "+string(rune('a'+i)))
		deadline := time.After(time.Second)
	wait:
		for !(gotLegacy && gotModern) {
			select {
			case u := <-updated:
				assert.Equal(t, shared, u)
				gotLegacy = true
			case u := <-modern:
				assert.Equal(t, shared, u)
				gotModern = true
			case <-deadline:
				break wait
			}
		}
	}
	assert.True(t, gotLegacy, "go-sdk legacy session: no notifications/resources/updated")
	assert.True(t, gotModern, "go-sdk 2026-07-28 listen: no notifications/resources/updated")
	res, err := legacy.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: shared})
	require.NoError(t, err)
	assert.Contains(t, res.Contents[0].Text, "Edited on B")
}

// tsSubscribeAcrossInstances: the TypeScript SDK v1 subscribes through
// the balancer and hears of alice's edits on any instance.
func tsSubscribeAcrossInstances(t *testing.T, f *fleet, alice, bob, shared string) {
	skipOnCluster(t, f)
	node, sdk := tsSDK(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("ts", "subscribe.mjs"), f.resource, shared)
	cmd.Env = append(os.Environ(), "MCPKIT_TS_SDK_DIR="+sdk, "MCPKIT_TOKEN="+bob)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	lines := make(chan string, 4)
	cmd.Stdout = lineWriter(lines)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Wait() }()
	defer stdin.Close()
	ready := <-lines
	require.Contains(t, ready, `"ready":true`)
	assert.Contains(t, ready, `"session":true`, "a legacy session")
	var done string
	for i := 0; i < 20 && done == ""; i++ {
		f.edit(t, f.inst[i%3], alice, shared, "Edited for TypeScript "+string(rune('a'+i)))
		select {
		case done = <-lines:
		case <-time.After(time.Second):
		}
	}
	require.Contains(t, done, `"done":true`, "no notifications/resources/updated")
	var seen struct {
		Updated map[string]int `json:"updated"`
	}
	require.NoError(t, json.Unmarshal([]byte(done), &seen))
	for u := range seen.Updated {
		assert.Equal(t, shared, u, "only what bob subscribed to")
	}
}

// oneBudgetAcrossInstances: erin's requests, spread round-robin over the
// three instances, are limited as by one instance's budget.
func oneBudgetAcrossInstances(t *testing.T, f *fleet) {
	erin := f.token(t, "erin")
	before := [3]int{}
	for i, in := range f.inst {
		before[i] = in.p.out.count("path=/mcp", "subject=erin")
	}
	ok, limited := 0, 0
	for range 2 * listBurst {
		res, _ := post(t, f.resource, auth(erin), "resources/list", nil)
		switch res.StatusCode {
		case http.StatusOK:
			ok++
		case http.StatusTooManyRequests:
			limited++
		default:
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	t.Logf("erin: %d of %d lists served with a burst of %d on each instance", ok, 2*listBurst, listBurst)
	assert.InDelta(t, listBurst, ok, listBurst/10, "within 10%% of one instance's budget")
	for i, in := range f.inst {
		assert.Greater(t, in.p.out.count("path=/mcp", "subject=erin")-before[i], listBurst/2,
			"instance %d served a third of erin's requests (round-robin)", i)
	}
}

// proofOnceAcrossInstances: a DPoP proof accepted by one instance is
// refused by the others; a fresh proof is accepted.
func proofOnceAcrossInstances(t *testing.T, f *fleet) {
	key, tok := f.dpopToken(t)
	hdr := f.proofHeaders(t, key, tok)
	res, _ := post(t, f.inst[0].mcpURL(), hdr, "resources/list", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode, "the proof's first use")
	for _, in := range f.inst[1:] {
		res, _ := post(t, in.mcpURL(), hdr, "resources/list", nil)
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "the same proof on %s", in.addr)
	}
	res, _ = post(t, f.inst[1].mcpURL(), f.proofHeaders(t, key, tok), "resources/list", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode, "a fresh proof")
}

// redisRestarted: with Redis down, lists are served, sessions and DPoP
// proofs are not, notifications go on; after its restart sessions come
// back, the forgotten ones answer 404, and proofs wait out a quarantine.
func redisRestarted(t *testing.T, f *fleet, alice, bob, shared string) {
	if f.redis == nil {
		t.Skip("on a cluster: a master killed instead")
	}
	stream := listen(t, f.resource, bob, []string{shared})
	// carol's stream, and her own document as a marker: she must hear
	// nothing of bob's before her own change.
	carol := f.token(t, "carol")
	var carolDoc string
	for _, u := range walkPages(t, connect(t, f.inst[1].mcpURL(), carol, "2025-11-25", nil), nil) {
		if strings.HasPrefix(u, documentPrefix) {
			carolDoc = u
			break
		}
	}
	require.NotEmpty(t, carolDoc)
	carolStream := listen(t, f.resource, carol, []string{carolDoc})
	oldSession, _ := post(t, f.resource, auth(bob), "initialize", initializeParams)
	oldID := oldSession.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, oldID)

	f.redis.p.kill()
	// Lists are served, not limited (fail open); initialize is
	// answered without a session; DPoP proofs are refused with 503
	// and Retry-After (fail closed); notifications go on (PostgreSQL
	// carries them).
	res, body := post(t, f.resource, auth(alice), "resources/list", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode, body)
	res, _ = post(t, f.resource, auth(bob), "initialize", initializeParams)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Empty(t, res.Header.Get("Mcp-Session-Id"), "no session while Redis is down")
	res, _ = post(t, f.resource, f.dpop(t), "resources/list", nil)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "DPoP fails closed")
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	f.edit(t, f.inst[1], alice, shared, "Edited while Redis is down.")
	for _, n := range stream.untilUpdated(t, shared) {
		assert.Equal(t, "notifications/resources/list_changed", n.method)
	}
	f.edit(t, f.inst[2], carol, carolDoc, "carol's marker")
	assert.Empty(t, carolStream.untilUpdated(t, carolDoc), "nothing of bob's reaches carol")

	f.redis.start(t) // empty, as after a crash without persistence
	deadline := time.Now().Add(15 * time.Second)
	for {
		res, _ := post(t, f.resource, auth(bob), "initialize", initializeParams)
		if res.Header.Get("Mcp-Session-Id") != "" {
			break
		}
		require.True(t, time.Now().Before(deadline), "sessions did not come back with Redis")
		time.Sleep(100 * time.Millisecond)
	}
	// The session Redis forgot: 404, the client initializes again.
	hdr := auth(bob)
	hdr["Mcp-Session-Id"], hdr["MCP-Protocol-Version"] = oldID, "2025-11-25"
	res, _ = post(t, f.resource, hdr, "resources/list", nil)
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "a session the restarted Redis forgot")
	// A Redis that lost its data refuses proofs for one period
	// (quarantine: a forgotten proof could be replayed), with
	// Retry-After; never a proof accepted unremembered.
	res, _ = post(t, f.resource, f.dpop(t), "resources/list", nil)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "DPoP after Redis lost its data")
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	res, body = post(t, f.resource, auth(alice), "resources/list", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode, body)
}
