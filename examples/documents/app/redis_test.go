package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/redisstore"
)

// redisServer is a throw-away redis-server of a test (nothing persisted),
// which the test can stop and start again, empty, on the same port.
type redisServer struct {
	bin, dir string
	port     int
	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd has exited
	extra    []string      // further arguments of redis-server
}

// startRedis starts a redis-server for t ($MCPKIT_REDIS_SERVER, else
// redis-server on PATH: source .ci/redis.sh && redis_ensure). Without one
// the test is skipped, or fails under CI=true.
func startRedis(t *testing.T) *redisServer { t.Helper(); return startRedisWith(t) }

// startRedisWith starts a redis-server with further arguments.
func startRedisWith(t *testing.T, extra ...string) *redisServer {
	t.Helper()
	bin := os.Getenv("MCPKIT_REDIS_SERVER")
	if bin == "" {
		bin, _ = exec.LookPath("redis-server")
	}
	if bin == "" {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatal("redis-server not found under CI=true: .ci/run must install it (source .ci/redis.sh && redis_ensure)")
		}
		t.Skip("Redis tests skipped: no redis-server (install Debian's redis-server, or set MCPKIT_REDIS_SERVER)")
	}
	s := &redisServer{bin: bin, dir: t.TempDir(), extra: extra}
	t.Cleanup(s.stop)
	for try := 1; ; try++ { // another process may take the free port first
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		s.port = l.Addr().(*net.TCPAddr).Port
		require.NoError(t, l.Close())
		if s.run(t) {
			return s
		}
		require.Less(t, try, 5, "redis-server found no free port")
	}
}

func (s *redisServer) url() string { return "redis://127.0.0.1:" + strconv.Itoa(s.port) + "/0" }

// start runs the server (again) on its port and waits until it answers.
func (s *redisServer) start(t *testing.T) {
	t.Helper()
	require.True(t, s.run(t), "redis-server exited at start: port %d taken", s.port)
}

// run runs the server on s.port and waits until it answers as itself
// (INFO's process_id): a server of another test that took the port first
// answers PING too. It reports false when the server exited (the port was
// taken).
func (s *redisServer) run(t *testing.T) bool {
	t.Helper()
	args := []string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no"}
	cmd := exec.Command(s.bin, append(args, s.extra...)...)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	c := s.client(t)
	self := "process_id:" + strconv.Itoa(cmd.Process.Pid) + "\r\n"
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			return false
		default:
		}
		if info, err := c.Info(context.Background(), "server").Result(); err == nil && strings.Contains(info, self) {
			s.cmd, s.exited = cmd, exited
			return true
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			require.Fail(t, "redis-server did not answer")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop kills the server (as a crash would) and waits for it to exit.
func (s *redisServer) stop() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		<-s.exited
		s.cmd = nil
	}
}

func (s *redisServer) client(t *testing.T) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(s.url())
	require.NoError(t, err)
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestRedisConfig(t *testing.T) {
	c, _, err := ParseFlags(nil, func(k string) string {
		return map[string]string{EnvRedisURL: "redis://:pw@127.0.0.1:6379/2", "MCPKIT_RATE_FAIL_CLOSED": "true"}[k]
	}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "redis://:pw@127.0.0.1:6379/2", c.Redis)
	assert.True(t, c.RateFailClosed)
	assert.NoError(t, c.Validate())
	assert.Equal(t, "redis://127.0.0.1:6379/2", describeRedis(c.Redis), "no password in logs")

	for name, tc := range map[string]struct {
		cfg  Config
		flag string
	}{
		"not a URL":             {Config{Redis: "127.0.0.1:6379"}, "redis"},
		"another scheme":        {Config{Redis: "http://127.0.0.1:6379"}, "redis"},
		"fail closed, no redis": {Config{RateFailClosed: true}, "rate-fail-closed"},
	} {
		t.Run(name, func(t *testing.T) {
			var ce *ConfigError
			require.ErrorAs(t, tc.cfg.Validate(), &ce)
			assert.Equal(t, tc.flag, ce.Flag)
		})
	}
}

// Two instances on one SQLite database and one Redis, as behind a load
// balancer without PostgreSQL: a session minted by A is found by B, a
// subscription made through B reaches the stream open on A, a change
// made on B reaches it through Redis pub/sub, and a caller's list budget
// is one across both.
func TestRedisFleet(t *testing.T) {
	rs := startRedis(t)
	idp := startIdentityProvider(t, prodResource)
	db := "sqlite:" + t.TempDir() + "/documents.db"
	cfg := func(c *Config) {
		jwtConfig(idp)(c)
		c.DB, c.Redis, c.RateList = db, rs.url(), "0.01:4"
	}
	a, b := start(t, cfg), start(t, cfg)
	for _, s := range []*testServer{a, b} {
		require.NotNil(t, s.app.redis.broker)
		waitRedisListening(t, s.app.redis.broker)
	}
	assert.Contains(t, a.logs.String(), `notifications="redis pub/sub channel `+redisstore.DefaultChannel+`"`)
	assert.Contains(t, a.logs.String(), `shared_state="redis redis://127.0.0.1:`)

	alice := idp.token(t, "alice", ScopeRead, ScopeShare)
	bob := idp.token(t, "bob", ScopeRead)
	id := a.firstDocs(t, "alice", 1)[0]
	uri := documentPrefix + id

	session := a.initialize(t, bob) // minted by A
	b.subscribe(t, bob, session, AboutURI)
	b.subscribe(t, bob, session, uri) // through B
	stream := a.openGET(t, bob, "bob", session, 1)
	b.share(t, alice, id, "bob") // on B
	assert.Equal(t, listChangedNote(), parseNote(t, stream.next(t)), "B's change, A's stream")
	b.update(t, alice, id, "Edited on B.")
	assert.Equal(t, updatedNote(uri), parseNote(t, stream.next(t)), "a subscription made through B")

	// Burst 4 across both instances: the fifth list is refused, on either.
	carol := idp.token(t, "carol", ScopeRead)
	codes := []int{}
	for i := range 6 {
		res, _ := []*testServer{a, b}[i%2].post(t, carol, "resources/list", nil)
		codes = append(codes, res.StatusCode)
	}
	assert.Equal(t, []int{200, 200, 200, 200, 429, 429}, codes)
}

// Redis stopped: initialize is answered without a session, lists are not
// limited (fail open, logged) or refused with 503 (-rate-fail-closed),
// DPoP proofs are refused (see the fleet test); Redis back, it all comes
// back by itself.
func TestRedisOutage(t *testing.T) {
	rs := startRedis(t)
	idp := startIdentityProvider(t, prodResource)
	open := start(t, func(c *Config) { jwtConfig(idp)(c); c.Redis, c.RateList = rs.url(), "0.01:2" })
	closed := start(t, func(c *Config) { jwtConfig(idp)(c); c.Redis, c.RateList, c.RateFailClosed = rs.url(), "0.01:2", true })
	bob := idp.token(t, "bob", ScopeRead)
	alice := idp.token(t, "alice", ScopeRead)

	rs.stop()
	res := open.rpc(t, bob, "", initializeBody(t), nil)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Empty(t, res.Header.Get("Mcp-Session-Id"), "no session while Redis is down")
	for range 4 { // past the burst: not limited
		res, out := open.post(t, alice, "resources/list", nil)
		assert.Equal(t, http.StatusOK, res.StatusCode)
		assert.Nil(t, out.Error)
	}
	open.logs.waitFor(t, "the rate-limit store cannot answer; letting calls through")
	res, _ = closed.post(t, alice, "resources/list", nil)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.NotEmpty(t, res.Header.Get("Retry-After"))

	rs.start(t)
	deadline := time.Now().Add(10 * time.Second)
	for { // the stores' gates open at the first answer, within a second
		res := open.rpc(t, bob, "", initializeBody(t), nil)
		res.Body.Close()
		if res.Header.Get("Mcp-Session-Id") != "" {
			break
		}
		require.True(t, time.Now().Before(deadline), "sessions did not come back with Redis")
		time.Sleep(50 * time.Millisecond)
	}
	codes := []int{}
	for range 3 { // a Redis restarted empty starts every bucket full
		res, _ := closed.post(t, alice, "resources/list", nil)
		codes = append(codes, res.StatusCode)
	}
	assert.Equal(t, []int{200, 200, 429}, codes)
}

// A Redis out of reach at start is logged, not fatal: the server starts
// as it runs during an outage.
func TestRedisDownAtStart(t *testing.T) {
	rs := startRedis(t)
	rs.stop()
	idp := startIdentityProvider(t, prodResource)
	s := start(t, func(c *Config) { jwtConfig(idp)(c); c.Redis = rs.url() })
	s.logs.waitFor(t, "redis: not reachable at start")
	res, out := s.post(t, idp.token(t, "alice", ScopeRead), "resources/list", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Nil(t, out.Error)
}

func initializeBody(t *testing.T) string {
	t.Helper()
	return rpcBody(t, 1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"},
	})
}

// waitRedisListening polls until the broker's listener is subscribed.
func waitRedisListening(t *testing.T, b *redisstore.Broker) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for b.Stats().Connects == 0 {
		require.True(t, time.Now().Before(deadline), "the Redis listener never subscribed")
		time.Sleep(2 * time.Millisecond)
	}
}

// A server started on a port another server holds exits, and the other's
// answer is not taken for its own (two tests would share one Redis).
func TestRedisServerOnATakenPort(t *testing.T) {
	rs := startRedis(t)
	other := &redisServer{bin: rs.bin, dir: t.TempDir(), port: rs.port}
	t.Cleanup(other.stop)
	assert.False(t, other.run(t))
	assert.Nil(t, other.cmd)
}

// Revocation over a Redis fleet (issue 35): two instances on one SQLite
// database and one Redis. Alice shares a document and a skill on B; bob
// lists and reads them on A; alice revokes both on B; bob's stream on A
// hears list_changed through Redis, and his next resources/list,
// resources/read, skills/list and skills/get on A no longer show them.
func TestRedisFleetRevocation(t *testing.T) {
	rs := startRedis(t)
	idp := startIdentityProvider(t, prodResource)
	db := "sqlite:" + t.TempDir() + "/documents.db"
	cfg := func(c *Config) {
		jwtConfig(idp)(c)
		c.DB, c.Redis = db, rs.url()
	}
	a, b := start(t, cfg), start(t, cfg)
	for _, s := range []*testServer{a, b} {
		waitRedisListening(t, s.app.redis.broker)
	}
	alice := idp.token(t, "alice", ScopeRead, ScopeShare)
	bob := idp.token(t, "bob", ScopeRead)
	id := a.firstDocs(t, "alice", 1)[0]
	uri := documentPrefix + id
	mine, err := b.app.skills.ListSkills(context.Background(), "alice", "", 10)
	require.NoError(t, err)
	require.NotEmpty(t, mine)
	skill := mine[0].ID

	session := a.initialize(t, bob)
	stream := a.openGET(t, bob, "bob", session, 1)
	b.share(t, alice, id, "bob")
	res, body := b.api(t, alice, http.MethodPost, "/api/skills/"+skill+"/shares", `{"with":"bob"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Equal(t, listChangedNote(), parseNote(t, stream.next(t)), "B's share, A's stream")
	assert.Contains(t, a.walkURIs(t, bob), uri)
	require.Nil(t, a.read(t, bob, uri).Error)
	bobSkills, _ := a.skillsWalk(t, bob)
	var skillURI string
	for _, e := range bobSkills {
		if strings.Contains(e.URI, skill) {
			skillURI = e.URI
		}
	}
	require.NotEmpty(t, skillURI, "bob lists the shared skill on A")

	b.unshare(t, alice, id, "bob")
	res, body = b.api(t, alice, http.MethodDelete, "/api/skills/"+skill+"/shares/bob", "")
	require.Equal(t, http.StatusNoContent, res.StatusCode, body)
	assert.Equal(t, listChangedNote(), parseNote(t, stream.next(t)), "B's revocation, A's stream")
	assert.NotContains(t, a.walkURIs(t, bob), uri)
	assert.NotNil(t, a.read(t, bob, uri).Error, "bob's next read on A")
	bobSkills, _ = a.skillsWalk(t, bob)
	for _, e := range bobSkills {
		assert.NotContains(t, e.URI, skill, "bob's next skills/list on A")
	}
	_, out := a.post(t, bob, "skills/get", map[string]any{"uri": skillURI})
	assert.NotNil(t, out.Error, "bob's next skills/get on A")
}
