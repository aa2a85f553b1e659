package devissuer

import (
	"container/list"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"sync"
	"time"
)

// memory is a bounded map with expiry: what the authorization server keeps
// (sign-ins in progress, codes, refresh tokens) lives in one, in memory
// only. Entries of one memory share a lifetime, so insertion order is
// expiry order: when it is full, Put drops the oldest entry. Its memory is
// bounded by max entries whatever clients send. It is safe for concurrent
// use.
type memory[V any] struct {
	mu  sync.Mutex
	max int
	now func() time.Time
	m   map[string]*list.Element // of *memoryEntry[V]
	l   list.List                // oldest first
	// Of entries stored with PutOwned: how many each owner (a client
	// address) holds.
	owned map[string]int
}

type memoryEntry[V any] struct {
	key   string
	owner string // "" unless stored with PutOwned
	exp   time.Time
	v     V
}

// Errors of PutOwned: nothing was stored, and nothing was dropped.
var (
	errOwnerFull  = errors.New("devissuer: too many entries of this address")
	errMemoryFull = errors.New("devissuer: memory full")
)

func newMemory[V any](max int, now func() time.Time) *memory[V] {
	return &memory[V]{max: max, now: now, m: make(map[string]*list.Element), owned: make(map[string]int)}
}

// PutOwned stores v under a new key until exp for owner, who may hold at
// most perOwner live entries: a full owner is refused (errOwnerFull).
// When the memory is full, the entry makes room by dropping the oldest
// entry of the owner holding the most, when that owner holds more than
// owner will once this entry is in (max-min fairness: a crowd of owners
// cannot keep out one that holds less than each of them); otherwise it is
// refused (errMemoryFull) and nothing is dropped. So a flood from one
// address only ever pushes out that address's entries, and a crowd of k
// addresses holds at most max/k entries each once others come.
func (m *memory[V]) PutOwned(key, owner string, perOwner int, v V, exp time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	if m.owned[owner] >= perOwner {
		return errOwnerFull
	}
	if len(m.m) >= m.max {
		top := ""
		for o, n := range m.owned {
			if top == "" || n > m.owned[top] {
				top = o
			}
		}
		if top == "" || m.owned[top] <= m.owned[owner]+1 {
			return errMemoryFull
		}
		for e := m.l.Front(); e != nil; e = e.Next() {
			if e.Value.(*memoryEntry[V]).owner == top {
				m.removeLocked(e)
				break
			}
		}
	}
	m.owned[owner]++
	m.m[key] = m.l.PushBack(&memoryEntry[V]{key: key, owner: owner, exp: exp, v: v})
	return nil
}

// Put stores v under key until exp, replacing an entry of the same key.
func (m *memory[V]) Put(key string, v V, exp time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.m[key]; ok {
		m.l.Remove(e)
		delete(m.m, key)
	}
	m.expireLocked()
	for len(m.m) >= m.max {
		m.removeLocked(m.l.Front())
	}
	m.m[key] = m.l.PushBack(&memoryEntry[V]{key: key, exp: exp, v: v})
}

// Update calls fn with the live entry of key, under the memory's lock, and
// reports whether there was one. fn may change *v; it must not call m.
func (m *memory[V]) Update(key string, fn func(v *V)) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[key]
	if !ok {
		return false
	}
	me := e.Value.(*memoryEntry[V])
	if !m.now().Before(me.exp) {
		m.removeLocked(e)
		return false
	}
	fn(&me.v)
	return true
}

// Take returns the live entry of key and removes it: single use.
func (m *memory[V]) Take(key string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var zero V
	e, ok := m.m[key]
	if !ok {
		return zero, false
	}
	me := e.Value.(*memoryEntry[V])
	m.removeLocked(e)
	if !m.now().Before(me.exp) {
		return zero, false
	}
	return me.v, true
}

// Get returns the live entry of key.
func (m *memory[V]) Get(key string) (V, bool) {
	var out V
	ok := m.Update(key, func(v *V) { out = *v })
	return out, ok
}

// DeleteFunc removes every entry for which drop returns true.
func (m *memory[V]) DeleteFunc(drop func(V) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for e := m.l.Front(); e != nil; {
		next := e.Next()
		if drop(e.Value.(*memoryEntry[V]).v) {
			m.removeLocked(e)
		}
		e = next
	}
}

// Len returns the number of entries, expired ones not yet dropped included.
func (m *memory[V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}

func (m *memory[V]) expireLocked() {
	now := m.now()
	for e := m.l.Front(); e != nil && !now.Before(e.Value.(*memoryEntry[V]).exp); e = m.l.Front() {
		m.removeLocked(e)
	}
}

func (m *memory[V]) removeLocked(e *list.Element) {
	me := e.Value.(*memoryEntry[V])
	delete(m.m, me.key)
	if me.owner != "" {
		if m.owned[me.owner]--; m.owned[me.owner] <= 0 {
			delete(m.owned, me.owner)
		}
	}
	m.l.Remove(e)
}

// secret returns 32 random bytes, base64url-encoded (43 characters): codes,
// refresh tokens, request ids, client ids and cookies.
func secret() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// digest is the key a secret is stored under: its SHA-256, so that the
// memory holds no usable code or refresh token.
func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return string(h[:])
}
