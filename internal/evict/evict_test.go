package evict

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSampleDropsExpiredInSample(t *testing.T) {
	m := map[int]bool{}
	for i := range 10 {
		m[i] = i%2 == 0 // even: expired
	}
	Sample(m, func(expired bool) bool { return expired })
	assert.Len(t, m, 5, "every expired entry of a map within one sample")
	for k := range m {
		assert.Equal(t, 1, k%2, "only live entries stay")
	}
}

func TestSampleDropsOneWhenNoneExpired(t *testing.T) {
	m := map[int]bool{}
	for i := range 100 {
		m[i] = false
	}
	Sample(m, func(expired bool) bool { return expired })
	assert.Len(t, m, 99, "one entry at random")
}

func TestSampleLooksAtMostAtASample(t *testing.T) {
	m := map[int]bool{}
	for i := range 1000 {
		m[i] = true
	}
	Sample(m, func(expired bool) bool { return expired })
	assert.Len(t, m, 1000-sample)
}

func TestSampleEmpty(t *testing.T) {
	m := map[string]int{}
	Sample(m, func(int) bool { return true })
	assert.Empty(t, m)
}
