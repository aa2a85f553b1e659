package httpheader

import (
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Names already listed (in any case, in any list) are not repeated, "*"
// covers everything, and the slice an outer handler set is never written
// through (another response may share it).
func TestAppendVary(t *testing.T) {
	for _, tc := range []struct {
		have  []string
		names []string
		want  []string
	}{
		{nil, []string{"Authorization"}, []string{"Authorization"}},
		{[]string{"Accept-Encoding"}, []string{"Authorization"}, []string{"Accept-Encoding", "Authorization"}},
		{[]string{"accept-encoding, authorization"}, []string{"Authorization"}, []string{"accept-encoding, authorization"}},
		{[]string{"*"}, []string{"Origin", "Authorization"}, []string{"*"}},
		{nil, []string{"Origin", "Origin"}, []string{"Origin"}},
		{[]string{" Origin\t"}, []string{"origin"}, []string{" Origin\t"}},
	} {
		shared := append(make([]string, 0, 8), tc.have...)
		h := http.Header{}
		if tc.have != nil {
			h["Vary"] = shared
		}
		AppendVary(h, tc.names...)
		assert.Equal(t, tc.want, h["Vary"], "%v + %v", tc.have, tc.names)
		assert.True(t, slices.Equal(tc.have, shared), "the outer slice is unchanged")
		assert.Empty(t, shared[len(shared):cap(shared)][0], "nothing written past the outer slice")
	}
	assert.False(t, ListHas("Authorizations", "Authorization"))
}

// SetPrivate replaces Cache-Control, keeps an outer handler's Vary and
// adds Authorization once, writing through no slice another response
// may share.
func TestSetPrivate(t *testing.T) {
	outerVary := append(make([]string, 0, 8), "Origin")
	h := http.Header{"Cache-Control": {"public, max-age=3600"}, "Vary": outerVary}
	SetPrivate(h)
	assert.Equal(t, []string{"private, max-age=0"}, h["Cache-Control"])
	assert.Equal(t, []string{"Origin", "Authorization"}, h["Vary"])
	assert.Equal(t, []string{"Origin"}, outerVary[:1:1])
	assert.Equal(t, "", outerVary[:2][1], "the outer handler's slice is not written through")
	SetPrivate(h)
	assert.Equal(t, []string{"Origin", "Authorization"}, h["Vary"], "Authorization listed once")
}
