package redisstore

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// runLua is the part of the stores' scripts that tells whether data they
// find was written in the replication history of the Redis that runs
// them, or in one it can vouch for. ident() names the history: the
// node's id on a cluster (CLUSTER MYID), the process's run id (INFO
// server) and its replication id (INFO replication master_replid), which
// a master draws anew at every start of redis-server and at every
// promotion of a replica, each cut to 12 hex digits ("node:run:replid";
// ":run:replid" outside a cluster). So a restart (empty, or from a
// snapshot older than the last write) and a replica promoted in place of
// its master each answer another one. A master also draws a replication
// id when it makes its backlog for a first replica, clearing its
// master_replid2: data of the same process and a cleared master_replid2
// is trusted (it was not a promotion).
//
// What a store writes is marked with the ident it was written under
// (a marker of its family of keys, or each entry). Data marked with
// another may have been lost or rolled back since (ended sessions back,
// remembered proofs forgotten, events gone), and the stores treat it as
// a Redis found empty does (see the package documentation, Faults) —
// unless trusted(w) vouches for it:
//
//   - it came here by a slot's migration: written by another node of the
//     cluster that is a master in good health, in a history other than
//     the one this node continued (MIGRATE moves a key whole; writes
//     after go to the new node);
//   - it was written in a history this node continued with nothing lost:
//     on a cluster, a script that finds such data asks its caller for a
//     vouch (an error MCPKITCONTINUED, raised before it writes anything;
//     script.run answers it with vouchFor and runs the script again),
//     the chain of histories from this node's back to the data's, each
//     link proven lossless by the old master itself (see vouchFor). The
//     script checks the chain's first link against its own
//     master_replid2.
//
// A master restarted, a replica promoted before it had every write, a
// master that failed and came back resynced in full prove no link.
//
// The vouch travels as the script's last argument (popped off ARGV
// here, so that the rest of the script sees its own arguments); "" asks
// for none. The check costs INFO server, INFO replication and CLUSTER
// MYID in every
// script (a few µs of Redis), CLUSTER NODES only where the ident
// differs; an ACL user needs +info and +cluster|myid +cluster|nodes
// (CheckClient says which is missing).
const runLua = `
local vouch = table.remove(ARGV) or ''
local function ident()
  local node = redis.pcall('CLUSTER', 'MYID')
  if type(node) ~= 'string' then node = '' end
  local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)') or ''
  local info = redis.call('INFO', 'replication')
  local repl = string.match(info, 'master_replid:(%x+)') or ''
  return string.sub(node, 1, 12) .. ':' .. string.sub(run, 1, 12) .. ':' .. string.sub(repl, 1, 12), info
end
local here, replinfo = ident()
local function trusted(w)
  if w == here then return true end
  local node, run, repl = string.match(w or '', '^(%x*):(%x*):(%x*)$')
  if not node then return false end
  local mynode, myrun = string.match(here, '^(%x*):(%x*):')
  local r2 = string.match(replinfo, 'master_replid2:(%x+)') or ''
  if node == mynode and run == myrun and run ~= '' and not string.find(r2, '[1-9a-f]') then
    return true -- the same process, its history begun anew without a promotion (its first replica)
  end
  if node == '' then return false end
  if node ~= mynode and repl ~= string.sub(r2, 1, 12) then
    local nodes = redis.pcall('CLUSTER', 'NODES')
    if type(nodes) ~= 'string' then return false end
    for line in string.gmatch(nodes, '[^\n]+') do
      local id, flags = string.match(line, '^(%x+) %S+ (%S+)')
      if id and string.sub(id, 1, 12) == node and string.find(flags, 'master', 1, true) ~= nil
        and string.find(flags, 'fail', 1, true) == nil and string.find(flags, 'noaddr', 1, true) == nil then
        return true
      end
    end
  end
  if repl == '' then return false end
  if vouch == '' then
    local s2 = string.match(replinfo, 'second_repl_offset:(%-?%d+)') or ''
    error({err = 'MCPKITCONTINUED ' .. w .. ' ' .. string.match(replinfo, 'master_replid:(%x+)') .. ' ' .. r2 .. ' ' .. s2})
  end
  local chain = {}
  for r in string.gmatch(vouch, '%x+') do chain[#chain + 1] = r end
  if #chain < 2 or chain[1] ~= string.sub(here, -12) or chain[2] ~= string.sub(r2, 1, 12) then
    return false
  end
  for i = 2, #chain do
    if chain[i] == repl then return true end
  end
  return false
end
`

// continued reports whether err is a script's question for a vouch
// (runLua), and returns the question: the foreign ident, then the
// replication id, previous replication id and second_repl_offset of the
// node that asks.
func continued(err error) ([]string, bool) {
	if err == nil {
		return nil, false
	}
	rest, ok := strings.CutPrefix(err.Error(), "MCPKITCONTINUED ")
	if !ok {
		return nil, false
	}
	q := strings.Fields(rest)
	if len(q) < 4 || len(q[1]) < 12 || len(q[2]) < 12 {
		return nil, false
	}
	return q[:4], true
}

// histories holds the links between replication histories proven
// lossless (see vouchFor): a replication id's first 12 digits -> those
// of the history it continued, with nothing lost. A link, once proven,
// stays true; the map is bounded all the same.
var histories struct {
	sync.Mutex
	links   map[string]string
	failed  map[string]bool // links that could not be proven
	pending map[string]chan struct{}
}

const (
	maxHistoryLinks = 4096
	// vouchWait bounds how long a script's caller waits, after a
	// promotion, for the old master to follow the new one.
	vouchWait = 2 * time.Second
)

// vouchFor answers a script's question q (see runLua): the chain of
// replication histories, newest first, from the asking node's to the
// foreign ident's, each link proven lossless, or "-" (none: the data is
// treated as lost).
//
// A link is proven when the master that wrote the foreign ident (its
// node, named by the ident) now follows the asking node as a replica
// and continued its history without a full resync exactly where the
// asking node's began (its master_replid2 and second_repl_offset equal
// the asking node's): Redis grants that partial resync only when the
// old master held nothing the new one lacked, which is what a manual
// failover (CLUSTER FAILOVER without FORCE or TAKEOVER) ensures before
// it promotes. A replica promoted before it had every write, a master
// that failed, restarted or resynced in full prove no link. The caller
// waits up to vouchWait for the old master to follow.
func vouchFor(ctx context.Context, client redis.UniversalClient, q []string) string {
	f := strings.Split(q[0], ":")
	if len(f) != 3 || f[0] == "" || f[2] == "" {
		return "-"
	}
	node, repl := f[0], f[2]
	here, prev := q[1][:12], q[2][:12]
	if repl == prev {
		if cc, ok := client.(*redis.ClusterClient); ok {
			proveLink(ctx, cc, node, q[1], q[2], q[3])
		}
	}
	histories.Lock()
	defer histories.Unlock()
	chain := []string{here}
	for cur := here; len(chain) < 32; {
		p, ok := histories.links[cur]
		if !ok {
			break
		}
		chain = append(chain, p)
		if p == repl {
			return strings.Join(chain, ",")
		}
		cur = p
	}
	return "-"
}

// proveLink proves, when it can, that the history replid continued
// replid2 (see vouchFor), the old master being the node whose id begins
// with node, and records the link. One caller proves a link at a time;
// the others wait for it.
func proveLink(ctx context.Context, cc *redis.ClusterClient, node, replid, replid2, offset string) {
	key := replid[:12]
	histories.Lock()
	if histories.links == nil {
		histories.links = map[string]string{}
		histories.failed = map[string]bool{}
		histories.pending = map[string]chan struct{}{}
	}
	if _, ok := histories.links[key]; ok || histories.failed[key] {
		histories.Unlock()
		return
	}
	if ch, ok := histories.pending[key]; ok {
		histories.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		return
	}
	ch := make(chan struct{})
	histories.pending[key] = ch
	histories.Unlock()

	proven := provenBy(ctx, cc, node, replid, replid2, offset)
	histories.Lock()
	if proven {
		if len(histories.links) >= maxHistoryLinks {
			clear(histories.links)
		}
		histories.links[key] = replid2[:12]
	} else {
		if len(histories.failed) >= maxHistoryLinks {
			clear(histories.failed)
		}
		histories.failed[key] = true
	}
	delete(histories.pending, key)
	close(ch)
	histories.Unlock()
}

// provenBy asks the node whose id begins with node, for up to vouchWait,
// whether it follows replid as a replica having continued replid2 from
// offset on.
func provenBy(ctx context.Context, cc *redis.ClusterClient, node, replid, replid2, offset string) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), vouchWait)
	defer cancel()
	for {
		switch followed(ctx, cc, node, replid, replid2, offset) {
		case 1:
			return true
		case -1:
			return false
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// followed returns 1 when the node follows replid as provenBy says, -1
// when it never will (it resynced in full, or continued from elsewhere),
// 0 when not yet known (still a master, not yet resynced, unreachable).
func followed(ctx context.Context, cc *redis.ClusterClient, node, replid, replid2, offset string) int {
	nodes, err := cc.ClusterNodes(ctx).Result()
	if err != nil {
		return 0
	}
	addr := ""
	for _, line := range strings.Split(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && strings.HasPrefix(f[0], node) {
			addr, _, _ = strings.Cut(f[1], "@")
		}
	}
	if addr == "" {
		return 0
	}
	info := ""
	found := false
	_ = cc.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error {
		if c.Options().Addr != addr {
			return nil
		}
		found = true
		info, err = c.Info(ctx, "replication").Result()
		return nil
	})
	if !found {
		cc.ReloadState(ctx)
		return 0
	}
	if err != nil {
		return 0
	}
	field := func(name string) string {
		_, v, _ := strings.Cut(info, "\n"+name+":")
		v, _, _ = strings.Cut(v, "\r")
		return strings.TrimSpace(v)
	}
	if field("master_replid") == replid && field("role") == "master" {
		return -1 // the asking node itself (restarted, say)
	}
	if field("role") != "slave" || field("master_replid") != replid {
		return 0
	}
	if field("master_replid2") == replid2 && field("second_repl_offset") == offset {
		return 1
	}
	return -1
}
