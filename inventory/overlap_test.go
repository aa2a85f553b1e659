package inventory

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Templates whose overlap search runs out of budget are refused as too
// complex, not accepted: the reads of one could be served by the other.
func TestNewRefusesTemplatesTooComplexToProveDisjoint(t *testing.T) {
	tmpls := []Template{
		{Name: "a", URITemplate: "x://{a:300}.json", Access: Public, Read: TextReader("text/plain", "")},
		{Name: "b", URITemplate: "x://{b:299}.xml", Access: Public, Read: TextReader("text/plain", "")},
	}
	_, err := New(nil, tmpls, Options{})
	require.NoError(t, err, "disjoint within the default budget")

	defer func(n int) { overlapBudget = n }(overlapBudget)
	overlapBudget = 100
	_, err = New(nil, tmpls, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `templates "a" and "b" are too complex to prove that no URI matches both`)
}
