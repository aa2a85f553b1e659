package redisstore

import "github.com/mcpkit/mcpkit/principal"

// Keys of the stores, for tests that look at Redis itself.

// ProofKey returns the key of proof charged to caller.
func (s *ReplayStore) ProofKey(proof, caller string) string {
	return s.prefix + s.tags[family(caller, len(s.tags))] + "p:" + proof
}

// MarkerKey returns the marker of caller's family.
func (s *ReplayStore) MarkerKey(caller string) string {
	return s.prefix + s.tags[family(caller, len(s.tags))] + "marker"
}

// Families returns the store's families.
func (s *ReplayStore) Families() int { return len(s.tags) }

// SessionKey returns the key of kind ("s", "u") of session id of caller.
func (s *SessionStore) SessionKey(kind, id string, caller *principal.Principal) string {
	return s.fam(s.familyOf(principalDigest(caller))) + kind + ":" + id
}

// IndexPattern returns the pattern of the principals' indexes' keys.
func (s *SessionStore) IndexPattern() string { return s.prefix + "*k:*" }

// Families returns the store's families.
func (s *SessionStore) Families() int { return len(s.tags) }

// Slot is slot.
func Slot(key string) int { return slot(key) }

// Key returns the stream of key.
func (l *EventLog) Key(key string) string { return hashKey(l.prefix, key) }

// ChannelOf returns the channel of subject's events.
func (b *Broker) ChannelOf(subject string) string {
	if b.shards == nil {
		return b.channel
	}
	return b.shards[family(subject, len(b.shards))]
}

// BrokerShards is the number of a Broker's channels on a cluster client.
const BrokerShards = brokerShards

// NoTryAgain turns do's TRYAGAIN waits off (true) or on; it returns the
// previous setting.
func NoTryAgain(off bool) bool { return noTryAgain.Swap(off) }

// PointerKey returns the key naming the family of session id.
func (s *SessionStore) PointerKey(id string) string { return s.pointer(id) }

// FamilyOf returns the family of caller's sessions.
func (s *SessionStore) FamilyOf(caller *principal.Principal) int {
	return s.familyOf(principalDigest(caller))
}

// LedgerKeys returns the keys of the seat ledger and its marker.
func (s *SessionStore) LedgerKeys() (string, string) { return s.ledger() }
