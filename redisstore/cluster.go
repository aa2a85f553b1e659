package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClusterOptions returns the client settings the stores are built and
// tested with on Redis Cluster, for the seed nodes addrs (any nodes of the
// cluster, host:port): short timeouts, no retried call (MaxRetries -1:
// the stores run their calls so that go-redis follows only the redirects
// after which a call cannot have run twice, see the package
// documentation), and the cluster's layout reloaded every second, so that
// a replica promoted after a master's failure is used within about a
// second of its promotion (go-redis's default is a minute). Adjust the
// result (TLS, a password, PoolSize) before redis.NewClusterClient.
func ClusterOptions(addrs ...string) *redis.ClusterOptions {
	o := &redis.ClusterOptions{Addrs: addrs}
	ApplyClusterSettings(o)
	return o
}

// ApplyClusterSettings sets on o, in place, what ClusterOptions sets: for
// options that come from redis.ParseClusterURL. Settings the URL gave (a
// non-zero timeout, a larger PoolSize) are kept, except the retries.
func ApplyClusterSettings(o *redis.ClusterOptions) {
	set := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	set(&o.DialTimeout, time.Second)
	set(&o.ReadTimeout, 500*time.Millisecond)
	set(&o.WriteTimeout, 500*time.Millisecond)
	o.MaxRetries = -1
	o.DialerRetries = 1
	o.ClusterStateReloadInterval = time.Second
	if o.MaxRedirects == 0 {
		o.MaxRedirects = 3 // MOVED, ASK, TRYAGAIN, READONLY: the call did not run
	}
	o.ReadOnly, o.RouteByLatency, o.RouteRandomly = false, false, false
}

// NewClusterClient returns a cluster client with ClusterOptions(addrs...).
func NewClusterClient(addrs ...string) *redis.ClusterClient {
	return redis.NewClusterClient(ClusterOptions(addrs...))
}

// once is a command that go-redis must not send again after an attempt
// that may have reached Redis (a timeout, a lost connection): a cluster
// client retries such commands up to MaxRedirects times whatever
// MaxRetries says. Redirects (MOVED, ASK) and READONLY are still
// followed by go-redis; TRYAGAIN is retried by do.
type once struct{ *redis.Cmd }

func (once) NoRetry() bool { return true }

// While a slot moves between masters, a call that declares several of
// its keys, some of them not yet (or no longer) where it is sent, is
// answered TRYAGAIN until the move ends (about a second for 7,500 keys
// moved): Redis checks the keys before it runs anything, so the call did
// not run, and do sends it again, after a wait growing from
// minTryAgainWait to maxTryAgainWait, for up to tryAgainFor in all (less
// when ctx ends first). A longer move fails the call with the TRYAGAIN.
const (
	minTryAgainWait = 10 * time.Millisecond
	maxTryAgainWait = 100 * time.Millisecond
)

// tryAgainFor bounds do's waits for a slot's move: about the move of
// the largest family of a replay store at its default bounds (16,700
// proofs).
const tryAgainFor = 2 * time.Second

// noTryAgain, set by a test only, turns the waits off, so that it can
// count the calls a move fails without them.
var noTryAgain atomic.Bool

// do runs args on client as a command that is never sent twice after an
// attempt that may have run (TRYAGAIN proves that it did not).
func do(ctx context.Context, client redis.UniversalClient, args ...any) *redis.Cmd {
	var waited time.Duration
	wait := minTryAgainWait
	for {
		cmd := redis.NewCmd(ctx, args...)
		_ = client.Process(ctx, once{cmd})
		err := cmd.Err()
		if err == nil || !redis.IsTryAgainError(err) || waited+wait > tryAgainFor || noTryAgain.Load() {
			return cmd
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
			return cmd
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return cmd
		case <-t.C:
		}
		waited += wait
		wait = min(2*wait, maxTryAgainWait)
	}
}

// script is a Lua script the stores run by its hash (EVALSHA), sending
// its body (EVAL) only when Redis lost its script cache. A script with
// runLua (marked) takes one more argument, last: the vouch (see runLua
// and vouchFor), "" until the script asks for one.
type script struct {
	src, hash string
	marked    bool
}

func newScript(src string) *script {
	return &script{src: src, hash: redis.NewScript(src).Hash(), marked: strings.HasPrefix(src, runLua)}
}

// run runs s on client without ever sending it twice: NOSCRIPT proves
// that nothing ran, so the EVAL that follows it is safe, and so does a
// script's question for a vouch (it asks before it writes), answered
// by running it again with one.
func (s *script) run(ctx context.Context, client redis.UniversalClient, keys []string, args ...any) *redis.Cmd {
	if s.marked {
		args = append(args[:len(args):len(args)], "")
	}
	cmd := s.once(ctx, client, keys, args)
	if q, ok := continued(cmd.Err()); ok && s.marked {
		args[len(args)-1] = vouchFor(ctx, client, q)
		cmd = s.once(ctx, client, keys, args)
	}
	return cmd
}

func (s *script) once(ctx context.Context, client redis.UniversalClient, keys []string, args []any) *redis.Cmd {
	cmd := do(ctx, client, evalArgs("evalsha", s.hash, keys, args)...)
	if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		cmd = do(ctx, client, evalArgs("eval", s.src, keys, args)...)
	}
	return cmd
}

func evalArgs(verb, body string, keys []string, args []any) []any {
	out := make([]any, 0, 3+len(keys)+len(args))
	out = append(out, verb, body, len(keys))
	for _, k := range keys {
		out = append(out, k)
	}
	return append(out, args...)
}

// gates holds a store's outage gates: one per master of a Redis Cluster
// (a dead shard shuts only the calls to its slots), one for any other
// client. Its zero value is ready.
type gates struct {
	single gate
	nodes  sync.Map // master address -> *gate
}

// For returns the gate of the node holding key.
func (g *gates) For(ctx context.Context, client redis.UniversalClient, key string) *gate {
	cc, ok := client.(*redis.ClusterClient)
	if !ok {
		return &g.single
	}
	m, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return &g.single // no layout yet: the call fails, and tells
	}
	addr := m.Options().Addr
	if v, ok := g.nodes.Load(addr); ok {
		return v.(*gate)
	}
	v, _ := g.nodes.LoadOrStore(addr, new(gate))
	return v.(*gate)
}

// slot returns the Redis Cluster slot of key: CRC16 (XMODEM) of its hash
// tag (the part between the first { and the next }, when not empty),
// else of the whole key, modulo 16384.
func slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// familyTags returns n hash tags ("{k}" for the smallest k that fits),
// the i-th of which names a slot in the i-th of n equal ranges of the
// 16384 slots. A standard cluster gives each of its m masters one range
// of slots, so the families of a store spread over the masters as evenly
// as n allows, and every instance computes the same tags.
func familyTags(n int) []string {
	tags := make([]string, n)
	found := 0
	for k := 0; found < n; k++ {
		t := "{" + strconv.Itoa(k) + "}"
		if i := slot(t) * n / 16384; tags[i] == "" {
			tags[i] = t
			found++
		}
	}
	return tags
}

// family returns the index of the family of key among n.
func family(key string, n int) int {
	if n <= 1 {
		return 0
	}
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % uint32(n))
}

// Errors of CheckClient: a client that does not suit its Redis.
var (
	// ErrClusterNode: a single-node client of a node of a Redis Cluster,
	// which would serve the keys of that node's slots and fail the others.
	ErrClusterNode = errors.New("redisstore: the Redis is a node of a Redis Cluster, but the client is not a cluster client: use redis.NewClusterClient (see ClusterOptions)")
	// ErrNotACluster: a cluster client of a Redis that is not a cluster.
	ErrNotACluster = errors.New("redisstore: the client is a cluster client, but the Redis is not a Redis Cluster")
	// ErrAuth: Redis refused the client's credentials (a wrong password,
	// an unknown or disabled user, or none given where one is needed).
	ErrAuth = errors.New("redisstore: Redis refused the client's credentials: wrong password or user, or none given")
)

// PermissionError is what CheckClient answers when the client's ACL user
// may not run a command the stores need.
type PermissionError struct {
	// Command is the command (or command|subcommand) refused.
	Command string
}

func (e *PermissionError) Error() string {
	return "redisstore: the Redis ACL user may not run " + e.Command + ", which the stores need (grant +" + e.Command + ")"
}

// CheckClient asks Redis whether client suits it and may run what the
// stores need, in a few round trips: ErrAuth, ErrClusterNode (told by
// HELLO's mode, which every user may run), ErrNotACluster, a
// *PermissionError naming a command the ACL user may not run (scripts,
// INFO, and on a cluster CLUSTER MYID and NODES: see the package
// documentation, Redis that may have lost data), or the client's error
// when Redis cannot be reached. Run it at start-up.
func CheckClient(ctx context.Context, client redis.UniversalClient) error {
	cc, cluster := client.(*redis.ClusterClient)
	if err := client.Ping(ctx).Err(); err != nil {
		switch {
		case isAuthError(err):
			return ErrAuth
		case cluster && strings.Contains(err.Error(), "cluster support disabled"):
			return ErrNotACluster
		}
		return err
	}
	if !cluster {
		mode, err := helloMode(ctx, client)
		if err != nil && !isPermissionError(err) {
			return err
		}
		if err != nil { // a user without +hello: INFO tells too
			if info, err := client.Info(ctx, "cluster").Result(); err == nil && strings.Contains(info, "cluster_enabled:1") {
				mode = "cluster"
			}
		}
		if mode == "cluster" {
			return ErrClusterNode
		}
		if err := checkPermissions(ctx, client, false); err != nil {
			return err
		}
		return nil
	}
	return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		return checkPermissions(ctx, c, true)
	})
}

// helloMode returns the mode HELLO reports ("standalone", "cluster",
// "sentinel"), in the protocol the client speaks.
func helloMode(ctx context.Context, client redis.UniversalClient) (string, error) {
	proto := 3
	if c, ok := client.(*redis.Client); ok && c.Options().Protocol == 2 {
		proto = 2
	}
	v, err := client.Do(ctx, "HELLO", proto).Result()
	if err != nil {
		return "", err
	}
	switch r := v.(type) {
	case map[any]any:
		m, _ := r["mode"].(string)
		return m, nil
	case []any:
		for i := 0; i+1 < len(r); i += 2 {
			if k, _ := r[i].(string); k == "mode" {
				m, _ := r[i+1].(string)
				return m, nil
			}
		}
	}
	return "", nil
}

// checkPermissions runs, once each, the commands the stores' scripts run
// besides their keys' (see runLua): an ACL refusal names the command.
func checkPermissions(ctx context.Context, c interface {
	Do(context.Context, ...any) *redis.Cmd
}, cluster bool) error {
	probes := [][]any{{"EVAL", "return 1", 0}, {"EVALSHA", "0000000000000000000000000000000000000000", 0}, {"INFO", "server"}}
	names := []string{"eval", "evalsha", "info"}
	if cluster {
		probes = append(probes, []any{"CLUSTER", "MYID"}, []any{"CLUSTER", "NODES"})
		names = append(names, "cluster|myid", "cluster|nodes")
	}
	for i, args := range probes {
		err := c.Do(ctx, args...).Err()
		switch {
		case err == nil, err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT"):
		case isPermissionError(err):
			return &PermissionError{Command: names[i]}
		default:
			return err
		}
	}
	return nil
}

func isAuthError(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "WRONGPASS") || strings.HasPrefix(s, "NOAUTH") ||
		strings.Contains(s, "invalid username-password") || strings.Contains(s, "AUTH failed")
}

func isPermissionError(err error) bool { return strings.HasPrefix(err.Error(), "NOPERM") }

// checkPrefix refuses a prefix whose '{' opens no hash tag (no '}' after
// it, or nothing between: "app{}:"): Redis would then hash each whole key,
// so the keys of one call would lie on several slots (CROSSSLOT on a
// cluster), where the store counts on them sharing the prefix's tag.
func checkPrefix(prefix string) error {
	i := strings.IndexByte(prefix, '{')
	if i < 0 {
		return nil
	}
	if j := strings.IndexByte(prefix[i+1:], '}'); j <= 0 {
		return errors.New("redisstore: the prefix has a '{' that opens no hash tag ('}' after it, something between): its keys would not share a slot; give a hash tag such as \"{app}:\", or no '{'")
	}
	return nil
}
