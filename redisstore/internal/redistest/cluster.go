package redistest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of throw-away servers on loopback: masters
// holding the 16384 slots in equal contiguous ranges (as redis-cli
// --cluster create splits them), each with its replicas. A test can kill a
// master (Kill) and wait for its replica to take over.
type Cluster struct {
	Masters  []*Server
	Replicas []*Server // Replicas[i*r+j]: the j-th replica of Masters[i]
	// NodeTimeout is the servers' cluster-node-timeout: a master that
	// does not answer for that long is failed over by its replica.
	NodeTimeout time.Duration
}

// ClusterNodeTimeout is the cluster-node-timeout of a test cluster.
const ClusterNodeTimeout = time.Second

// StartCluster starts a cluster of masters, each with replicas, stopped
// in t.Cleanup. It fails t when the cluster does not come up within 30 s.
func StartCluster(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	bin := Require(t)
	c, err := NewCluster(bin, t.TempDir(), masters, replicas)
	if c != nil {
		t.Cleanup(c.Stop)
	}
	if err != nil {
		t.Fatalf("redistest: cluster: %v", err)
	}
	return c
}

// NewCluster starts a cluster in dir (see StartCluster). The caller must
// Stop it, also after an error.
func NewCluster(bin, dir string, masters, replicas int) (*Cluster, error) {
	if masters < 1 || replicas < 0 {
		return nil, fmt.Errorf("a cluster needs a master")
	}
	c := &Cluster{NodeTimeout: ClusterNodeTimeout}
	extra := func() []string {
		return []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(c.NodeTimeout.Milliseconds(), 10),
			// A replica takes over however long it was cut off (a test
			// kills masters), and a cluster missing a shard still serves
			// the others' slots.
			"--cluster-replica-validity-factor", "0", "--cluster-require-full-coverage", "no",
			"--cluster-allow-reads-when-down", "no",
			// DEBUG SLEEP stalls a node in the tests.
			"--enable-debug-command", "local"}
	}
	for i := range masters * (1 + replicas) {
		d := filepath.Join(dir, "node"+strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o700); err != nil {
			return c, err
		}
		s, err := newServer(bin, d, extra())
		if err != nil {
			return c, err
		}
		if i < masters {
			c.Masters = append(c.Masters, s)
		} else {
			c.Replicas = append(c.Replicas, s)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c, c.form(ctx, replicas)
}

// form assigns the slots, joins the nodes and makes the replicas.
func (c *Cluster) form(ctx context.Context, replicas int) error {
	all := c.Nodes()
	first := redis.NewClient(ClientOptions(all[0].Addr()))
	defer first.Close()
	for i, m := range c.Masters {
		lo, hi := i*16384/len(c.Masters), (i+1)*16384/len(c.Masters)-1
		if err := c.do(ctx, m, "CLUSTER", "ADDSLOTSRANGE", lo, hi); err != nil {
			return err
		}
	}
	for _, n := range all[1:] {
		if err := first.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", n.port).Err(); err != nil {
			return err
		}
	}
	// Every node knows every other before a replica names its master.
	if err := waitFor(ctx, func() bool {
		for _, n := range all {
			out, err := c.str(ctx, n, "CLUSTER", "NODES")
			if err != nil || strings.Count(strings.TrimSpace(out), "\n")+1 != len(all) || strings.Contains(out, "handshake") {
				return false
			}
		}
		return true
	}); err != nil {
		return fmt.Errorf("nodes never met: %w", err)
	}
	for i, m := range c.Masters {
		id, err := c.str(ctx, m, "CLUSTER", "MYID")
		if err != nil {
			return err
		}
		for j := range replicas {
			if err := c.do(ctx, c.Replicas[i*replicas+j], "CLUSTER", "REPLICATE", id); err != nil {
				return err
			}
		}
	}
	if err := c.WaitHealthy(ctx); err != nil {
		return fmt.Errorf("cluster never came up: %w", err)
	}
	return nil
}

// WaitHealthy waits until every running node reports cluster_state:ok and
// every running replica is in sync with its master.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	return waitFor(ctx, func() bool {
		for _, n := range c.Nodes() {
			if !n.Running() {
				continue
			}
			info, err := c.str(ctx, n, "CLUSTER", "INFO")
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return false
			}
			repl, err := c.str(ctx, n, "INFO", "replication")
			if err != nil || strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
				return false
			}
		}
		return true
	})
}

// RestoreMasters makes every running node of c.Masters a master again
// where its replica took over (a master that stalled longer than
// NodeTimeout is failed over like a dead one): CLUSTER FAILOVER on it once
// it is in sync, as an operator fails back. It returns the number of
// masters it restored, when the cluster is healthy again.
func (c *Cluster) RestoreMasters(ctx context.Context) (int, error) {
	role := func(s *Server) string {
		repl, err := c.str(ctx, s, "INFO", "replication")
		if err != nil {
			return ""
		}
		switch {
		case strings.Contains(repl, "role:master"):
			return "master"
		case strings.Contains(repl, "master_link_status:up"):
			return "synced replica"
		}
		return "replica"
	}
	// Settled first: a failover decided while the master slept may end
	// after it woke.
	if err := c.settle(ctx); err != nil {
		return 0, err
	}
	n := 0
	for _, m := range c.Masters {
		if !m.Running() {
			continue
		}
		if err := waitFor(ctx, func() bool { r := role(m); return r == "master" || r == "synced replica" }); err != nil {
			return n, fmt.Errorf("redistest: %s neither a master nor a synced replica: %w", m.Addr(), err)
		}
		if role(m) == "master" {
			continue
		}
		if err := c.do(ctx, m, "CLUSTER", "FAILOVER"); err != nil {
			return n, fmt.Errorf("redistest: failing back to %s: %w", m.Addr(), err)
		}
		if err := waitFor(ctx, func() bool { return role(m) == "master" }); err != nil {
			return n, fmt.Errorf("redistest: %s is not a master again: %w", m.Addr(), err)
		}
		n++
	}
	return n, c.WaitHealthy(ctx)
}

// settle waits until no running node sees a node failing (flags fail or
// fail?), twice NodeTimeout apart.
func (c *Cluster) settle(ctx context.Context) error {
	quiet := func() bool {
		for _, n := range c.Nodes() {
			if !n.Running() {
				continue
			}
			nodes, err := c.str(ctx, n, "CLUSTER", "NODES")
			if err != nil {
				return false
			}
			for line := range strings.Lines(nodes) {
				f := strings.Fields(line)
				if len(f) < 3 {
					continue
				}
				for flag := range strings.SplitSeq(f[2], ",") {
					if flag == "fail" || flag == "fail?" {
						return false
					}
				}
			}
		}
		return true
	}
	for {
		if err := waitFor(ctx, quiet); err != nil {
			return fmt.Errorf("redistest: the cluster does not settle: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(c.NodeTimeout):
		}
		if quiet() {
			return nil
		}
	}
}

// Nodes returns the masters then the replicas, as started.
func (c *Cluster) Nodes() []*Server {
	return append(append([]*Server(nil), c.Masters...), c.Replicas...)
}

// Addrs returns every node's host:port.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, n := range c.Nodes() {
		out = append(out, n.Addr())
	}
	return out
}

// URL returns the cluster's URL in go-redis's form
// (redis.ParseClusterURL): the first node, then addr= for each other.
func (c *Cluster) URL() string {
	addrs := c.Addrs()
	u := "redis://" + addrs[0]
	for i, a := range addrs[1:] {
		u += map[bool]string{true: "?", false: "&"}[i == 0] + "addr=" + a
	}
	return u
}

// Stop kills every node.
func (c *Cluster) Stop() {
	for _, n := range c.Nodes() {
		n.Stop()
	}
}

// SetNodeTimeout sets the cluster-node-timeout of every running node
// (CONFIG SET; a node started again gets ClusterNodeTimeout) and
// NodeTimeout. A test that kills no node may raise it: on a loaded
// machine a node starved for a second is taken for failed (and a node
// that could not reach the others that long answers CLUSTERDOWN for up
// to its rejoin delay).
func (c *Cluster) SetNodeTimeout(ctx context.Context, d time.Duration) error {
	for _, n := range c.Nodes() {
		if !n.Running() {
			continue
		}
		if err := c.do(ctx, n, "CONFIG", "SET", "cluster-node-timeout", strconv.FormatInt(d.Milliseconds(), 10)); err != nil {
			return err
		}
	}
	c.NodeTimeout = d
	return nil
}

// FlushAll empties every master (between tests sharing a cluster).
func (c *Cluster) FlushAll(ctx context.Context) error {
	for _, n := range c.Nodes() {
		if !n.Running() {
			continue
		}
		role, err := c.str(ctx, n, "ROLE")
		if err == nil && strings.HasPrefix(role, "master") {
			err = c.do(ctx, n, "FLUSHALL")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Running reports whether the server runs.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// Port returns the server's port.
func (s *Server) Port() int { return s.port }

func (c *Cluster) do(ctx context.Context, s *Server, args ...any) error {
	cl := redis.NewClient(ClientOptions(s.Addr()))
	defer cl.Close()
	return cl.Do(ctx, args...).Err()
}

// str runs a command on s and returns its reply as text (the first
// element of an array reply).
func (c *Cluster) str(ctx context.Context, s *Server, args ...any) (string, error) {
	cl := redis.NewClient(ClientOptions(s.Addr()))
	defer cl.Close()
	v, err := cl.Do(ctx, args...).Result()
	if err != nil {
		return "", err
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case []any:
		if len(v) > 0 {
			if s, ok := v[0].(string); ok {
				return s, nil
			}
		}
	}
	return fmt.Sprint(v), nil
}

// Do runs a command on node s (not through the cluster).
func (c *Cluster) Do(ctx context.Context, s *Server, args ...any) (string, error) {
	return c.str(ctx, s, args...)
}

func waitFor(ctx context.Context, ok func() bool) error {
	for !ok() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
