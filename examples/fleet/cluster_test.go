package fleet

import (
	"context"
	"math/rand/v2"
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

// TestFleetOnCluster runs the fleet test once more with the instances on
// a Redis Cluster (three masters, a replica each; -redis in go-redis's
// cluster URL form) instead of one Redis, and kills a master on the way.
// It needs redis-cli (Debian's redis-tools, which redis-server pulls in)
// besides what TestFleet needs; -short skips it.
func TestFleetOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the fleet on a Redis Cluster is skipped")
	}
	runFleet(t, startFleetOn(t, true))
}

// skipOnCluster skips a subtest that tests no Redis (the TypeScript SDK's
// interop: TestFleet's) on a cluster, to keep the run short.
func skipOnCluster(t *testing.T, f *fleet) {
	t.Helper()
	if f.cluster != nil {
		t.Skip("on a cluster: TestFleet runs it")
	}
}

// redisCluster is six redis-servers formed into a cluster by redis-cli
// --cluster create: masters[i] holds the i-th third of the slots and
// replicas[i] replicates it.
type redisCluster struct {
	addrs []string // the masters, then the replicas
	procs []*proc
}

func startRedisCluster(t *testing.T, bin string) *redisCluster {
	t.Helper()
	cli := binary("MCPKIT_REDIS_CLI", "redis-cli")
	if cli == "" && os.Getenv("MCPKIT_REDIS_SERVER") != "" {
		cli = strings.TrimSuffix(os.Getenv("MCPKIT_REDIS_SERVER"), "redis-server") + "redis-cli"
	}
	need(t, cli != "", "no redis-cli (Debian's redis-tools)")
	c := &redisCluster{}
	for i := range 6 {
		addr := clusterAddr(t)
		_, port, _ := net.SplitHostPort(addr)
		c.addrs = append(c.addrs, addr)
		c.procs = append(c.procs, startProc(t, "redis-"+strconv.Itoa(i), nil, bin, "--port", port, "--bind", "127.0.0.1",
			"--dir", t.TempDir(), "--save", "", "--appendonly", "no", "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "1000",
			"--cluster-replica-validity-factor", "0", "--cluster-require-full-coverage", "no"))
	}
	for _, a := range c.addrs {
		waitRedis(t, a)
	}
	// redis-cli makes the first three the masters, in order.
	out, err := exec.Command(cli, append(append([]string{"--cluster", "create"}, c.addrs...),
		"--cluster-replicas", "1", "--cluster-yes")...).CombinedOutput()
	require.NoError(t, err, "redis-cli --cluster create: %s", out)
	c.waitHealthy(t)
	return c
}

func waitRedis(t *testing.T, addr string) {
	t.Helper()
	cl := redis.NewClient(&redis.Options{Addr: addr})
	defer cl.Close()
	deadline := time.Now().Add(10 * time.Second)
	for cl.Ping(context.Background()).Err() != nil {
		require.True(t, time.Now().Before(deadline), "redis-server %s did not answer", addr)
		time.Sleep(10 * time.Millisecond)
	}
}

// waitHealthy waits until every running node says cluster_state:ok.
func (c *redisCluster) waitHealthy(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for i, a := range c.addrs {
		select {
		case <-c.procs[i].done:
			continue
		default:
		}
		cl := redis.NewClient(&redis.Options{Addr: a})
		for {
			info, _ := cl.ClusterInfo(context.Background()).Result()
			if strings.Contains(info, "cluster_state:ok") {
				break
			}
			require.True(t, time.Now().Before(deadline), "the cluster did not come up: %s", info)
			time.Sleep(50 * time.Millisecond)
		}
		_ = cl.Close()
	}
}

// url is the cluster in go-redis's URL form: one node, the others as
// addr parameters.
func (c *redisCluster) url() string {
	return "redis://" + c.addrs[0] + "?addr=" + strings.Join(c.addrs[1:], "&addr=")
}

func (c *redisCluster) client(t *testing.T) redis.UniversalClient {
	cl := redisstore.NewClusterClient(c.addrs...)
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// clusterFailover kills the first master (a third of every store's keys)
// under the fleet: its replica takes over within a few seconds, and the
// fleet goes on: lists throughout, sessions on every shard again, the
// sessions the healthy masters held, and no proof accepted twice. The
// promoted replica is another Redis process, which may lack the master's
// last writes (redisstore: Redis that may have lost data): its sessions
// are gone (404: the client initializes again) and its families of the
// DPoP replay memory refuse proofs (503 with Retry-After) until every
// proof it may have forgotten has expired.
func clusterFailover(t *testing.T, f *fleet, alice, bob string) {
	// Sessions of 24 principals and proofs of 12 callers, so that some
	// live on the victim (all 24 elsewhere: once in 16,000 runs).
	users := map[string]string{} // token: session
	for i := range 24 {
		who := f.token(t, "user-"+strconv.Itoa(i))
		res, _ := post(t, f.resource, auth(who), "initialize", initializeParams)
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.NotEmpty(t, res.Header.Get("Mcp-Session-Id"))
		users[who] = res.Header.Get("Mcp-Session-Id")
	}
	var accepted []map[string]string
	for range 12 {
		hdr := f.dpop(t)
		res, _ := post(t, f.resource, hdr, "resources/list", nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
		accepted = append(accepted, hdr)
	}
	// Replicated before the kill (WAIT), as a master that dies a while
	// after a write would have.
	for _, a := range f.cluster.addrs[:3] {
		cl := redis.NewClient(&redis.Options{Addr: a})
		require.NoError(t, cl.Do(context.Background(), "WAIT", 1, 2000).Err())
		_ = cl.Close()
	}

	killed := time.Now()
	f.cluster.procs[0].kill()
	// Until the replica is promoted and the instances see it (about two
	// seconds with a node timeout of one), the calls on the victim's keys
	// fail as in an outage (initialize without a session, DPoP 503 with
	// Retry-After: 1); lists are served throughout. Then every principal
	// gets sessions again and every caller's proof is answered: accepted,
	// or refused by the promoted replica's quarantine (503, Retry-After
	// over a second).
	deadline := time.Now().Add(30 * time.Second)
	minted := map[string]bool{} // one new session each at most: the cap would end the old ones
	for iter := 0; ; iter++ {
		// Lists served throughout, each by a caller of its own: one
		// caller's list budget (60) would run out on a loaded machine,
		// where the failover takes more rounds.
		res, body := post(t, f.resource, auth(f.token(t, "lister-"+strconv.Itoa(iter))), "resources/list", nil)
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		for who := range users {
			if !minted[who] {
				res, _ := post(t, f.resource, auth(who), "initialize", initializeParams)
				require.Equal(t, http.StatusOK, res.StatusCode)
				minted[who] = res.Header.Get("Mcp-Session-Id") != ""
			}
		}
		up := len(minted) == len(users)
		for _, ok := range minted {
			up = up && ok
		}
		for range 12 {
			res, _ := post(t, f.resource, f.dpop(t), "resources/list", nil)
			quarantine := res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "" && res.Header.Get("Retry-After") != "1"
			up = up && (res.StatusCode == http.StatusOK || quarantine)
		}
		if up {
			break
		}
		require.True(t, time.Now().Before(deadline), "the fleet did not come back after the failover")
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("sessions and DPoP on every shard again %.1f s after a master was killed", time.Since(killed).Seconds())
	kept, gone := 0, 0
	for who, id := range users {
		hdr := auth(who)
		hdr["Mcp-Session-Id"], hdr["MCP-Protocol-Version"] = id, "2025-11-25"
		res, _ := post(t, f.resource, hdr, "resources/list", nil)
		switch res.StatusCode {
		case http.StatusOK:
			kept++
		case http.StatusNotFound:
			gone++
		default:
			t.Errorf("a session of before the failover: %d", res.StatusCode)
		}
	}
	t.Logf("sessions of before the failover: %d kept (healthy masters), %d gone (the promoted replica's)", kept, gone)
	assert.Positive(t, kept, "the healthy masters' sessions stay")
	assert.Positive(t, gone, "the promoted replica's sessions are gone: it may lack their End")
	for _, hdr := range accepted {
		res, _ := post(t, f.resource, hdr, "resources/list", nil)
		assert.NotEqual(t, http.StatusOK, res.StatusCode, "a proof accepted before the failover is never accepted again (401 replay, or 503 quarantine)")
	}
	_ = bob
}

// clusterAddr returns a loopback address for a cluster node whose port
// and bus port (port + 10000) were free a moment ago and lie outside the
// kernel's range of ports for outgoing connections, which any connection
// the machine opens could take first (a flake under load).
func clusterAddr(t *testing.T) string {
	t.Helper()
	lo, hi := 32768, 60999
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			l, err1 := strconv.Atoi(f[0])
			h, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil {
				lo, hi = l, h
			}
		}
	}
	free := func(p int) bool {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return false
		}
		_ = l.Close()
		return true
	}
	for range 500 {
		p := 1024 + rand.IntN(65535-10000-1024)
		if (p >= lo && p <= hi) || (p+10000 >= lo && p+10000 <= hi) {
			continue
		}
		if free(p) && free(p+10000) {
			return net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		}
	}
	t.Fatal("no free port pair (port, port + 10000) outside the ephemeral range")
	return ""
}
