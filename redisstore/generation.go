package redisstore

// runLua is the part of the stores' scripts that tells whether data they
// find was written by the Redis process that runs them, or by one it can
// vouch for. ident() names the process: the node's id on a cluster
// (CLUSTER MYID, which a node keeps across restarts) and its run id
// (INFO server), which every start of redis-server draws anew, each cut
// to 12 hex digits ("node:run"; "":run" outside a cluster). So a restart
// (empty, or from a snapshot older than the last write) and a replica
// promoted in place of its master each answer another one.
//
// What a store writes is marked with the ident it was written under
// (a marker of its family of keys, or each entry). Data marked with
// another may have been lost or rolled back since (ended sessions back,
// remembered proofs forgotten, events gone), and the stores treat it as
// a Redis found empty does (see the package documentation, Faults) —
// unless trusted(w) says it came here by a slot's migration: written by
// another node of the cluster that is a master in good health (MIGRATE
// moves a key whole; writes after go to the new node). A node restarted,
// a master failed over (its node fails, or is a replica now) are not.
//
// The check costs INFO and CLUSTER MYID in every script (about 3 µs of
// Redis), CLUSTER NODES only where the ident differs; an ACL user needs
// +info and +cluster|myid +cluster|nodes (CheckClient says which is
// missing).
const runLua = `
local function ident()
  local node = redis.pcall('CLUSTER', 'MYID')
  if type(node) ~= 'string' then node = '' end
  local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)') or ''
  return string.sub(node, 1, 12) .. ':' .. string.sub(run, 1, 12)
end
local here = ident()
local function trusted(w)
  if w == here then return true end
  local node = string.match(w or '', '^(%x+):%x*$')
  if not node or node == string.match(here, '^(%x*):') then return false end
  local nodes = redis.pcall('CLUSTER', 'NODES')
  if type(nodes) ~= 'string' then return false end
  for line in string.gmatch(nodes, '[^\n]+') do
    local id, flags = string.match(line, '^(%x+) %S+ (%S+)')
    if id and string.sub(id, 1, 12) == node then
      return string.find(flags, 'master', 1, true) ~= nil and string.find(flags, 'fail', 1, true) == nil
        and string.find(flags, 'noaddr', 1, true) == nil
    end
  end
  return false
end
`
