package otelmcp

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
)

// maxSets bounds the attribute sets kept for histogram points. The key's
// values are few (known method names, supported protocol versions, the
// endpoint's error codes, registered tool names), so the bound is only a
// guard; past it sets are built per call.
const maxSets = 1024

// pointKey is what a histogram point's attributes depend on.
type pointKey struct {
	method, version, errorType, tool string
	code                             int64
}

// setCache keeps the attribute set of each pointKey, so that recording a
// point builds, sorts and hashes no attributes.
type setCache struct {
	mu   sync.RWMutex
	sets map[pointKey]attribute.Set
}

func (c *setCache) get(k pointKey, build func(pointKey) attribute.Set) attribute.Set {
	c.mu.RLock()
	s, ok := c.sets[k]
	c.mu.RUnlock()
	if ok {
		return s
	}
	s = build(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sets == nil {
		c.sets = make(map[pointKey]attribute.Set)
	}
	if len(c.sets) < maxSets {
		c.sets[k] = s
	}
	return s
}
