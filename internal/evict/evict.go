// Package evict makes room in a bounded in-memory map: the one sampled
// eviction the kit's memories share (authn's verified-token cache and its
// refusal memory).
package evict

// sample is how many entries one eviction looks at.
const sample = 32

// Sample drops the expired entries among a sample of m's entries, or if
// there are none, one entry at random (map iteration starts at a random
// position). The caller holds m's lock.
func Sample[K comparable, V any](m map[K]V, expired func(V) bool) {
	var victim K
	dropped, n := 0, 0
	for k, v := range m {
		if n == 0 {
			victim = k
		}
		if expired(v) {
			delete(m, k)
			dropped++
		}
		if n++; n >= sample {
			break
		}
	}
	if dropped == 0 && n > 0 {
		delete(m, victim)
	}
}
