package inventorytest

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/mcpkit/mcpkit/inventory"
)

// ErrNoSubject is returned by MemorySource.List for a nil principal or
// one without a subject: a source must never fall back to an
// unrestricted query.
var ErrNoSubject = errors.New("inventorytest: principal has no subject")

// MemorySource is an in-memory keyset list source: records per subject,
// kept sorted by key, served with a binary search. It is what a real
// source does with an index, in memory: the cost of a page does not grow
// with the collection. It is safe for concurrent use; its List method is
// an inventory.ListFunc.
type MemorySource struct {
	mu        sync.RWMutex
	bySubject map[string][]inventory.Entry
}

// NewMemorySource returns an empty source. The zero MemorySource is an
// empty source too.
func NewMemorySource() *MemorySource {
	return &MemorySource{bySubject: make(map[string][]inventory.Entry)}
}

// Insert adds e to subject's records, replacing a record with the same
// key. Inserting keys in increasing order is O(1) amortized.
func (m *MemorySource) Insert(subject string, e inventory.Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bySubject == nil { // the zero MemorySource
		m.bySubject = make(map[string][]inventory.Entry)
	}
	recs := m.bySubject[subject]
	n := len(recs)
	if n == 0 || recs[n-1].Key < e.Key {
		m.bySubject[subject] = append(recs, e)
		return
	}
	i := sort.Search(n, func(i int) bool { return recs[i].Key >= e.Key })
	if recs[i].Key == e.Key {
		recs[i] = e
		return
	}
	recs = append(recs, inventory.Entry{})
	copy(recs[i+1:], recs[i:])
	recs[i] = e
	m.bySubject[subject] = recs
}

// Delete removes subject's record with key and reports whether it existed.
func (m *MemorySource) Delete(subject, key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := m.bySubject[subject]
	i := sort.Search(len(recs), func(i int) bool { return recs[i].Key >= key })
	if i == len(recs) || recs[i].Key != key {
		return false
	}
	m.bySubject[subject] = append(recs[:i], recs[i+1:]...)
	return true
}

// Len returns the number of subject's records.
func (m *MemorySource) Len(subject string) int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.bySubject[subject])
}

// Records returns a copy of subject's records in key order.
func (m *MemorySource) Records(subject string) []inventory.Entry {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return append([]inventory.Entry(nil), m.bySubject[subject]...)
}

// List returns the next at most req.Limit records of the caller's
// identity key (req.Principal.Key(): the subject, issuer-qualified when
// several issuers are trusted) strictly after req.After: the keyset query
// of the contract.
func (m *MemorySource) List(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
	if err := ctx.Err(); err != nil {
		return inventory.Page{}, err
	}
	if req.Principal == nil || req.Principal.Subject == "" {
		return inventory.Page{}, ErrNoSubject
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	recs := m.bySubject[req.Principal.Key()]
	i := sort.Search(len(recs), func(i int) bool { return recs[i].Key > req.After })
	end := min(i+req.Limit, len(recs))
	if i >= end {
		return inventory.Page{}, nil
	}
	return inventory.Page{
		Entries: append(make([]inventory.Entry, 0, end-i), recs[i:end]...),
		HasMore: end < len(recs),
	}, nil
}
