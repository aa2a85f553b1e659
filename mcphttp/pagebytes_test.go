package mcphttp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// Issue 31: the endpoint has a page byte limit beside the result limit
// (the private-inventory rules' maxPageBytes and
// maxApplicationResultBytes); the tighter applies to list pages, the
// result limit alone to other results.
func TestMaxPageBytesBoundsPagesOnly(t *testing.T) {
	const pageLimit, resultLimit = 24 << 10, 1 << 20
	label := strings.Repeat("x", 200)
	big := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		s.Handle("test/big", func(_ context.Context, c *mcphttp.Request) (mcphttp.Result, error) {
			return mcphttp.JSONResult(c, map[string]string{"text": strings.Repeat("y", 2*pageLimit)}, mcphttp.CacheNone)
		}, mcphttp.MethodOptions{})
		return nil
	})
	f := mcptest.New(t, mcptest.Options{PageSize: 100, Endpoint: func(o *mcphttp.Options) {
		o.MaxResultBytes, o.MaxPageBytes = resultLimit, pageLimit
	}}, big)
	f.Store.AddNamed("carol", label, 101)
	body, hdr := mcptest.Modern(1, "resources/list", nil)
	w := f.Do(t, mcptest.Request{Body: body, Headers: hdr, Token: f.Token(t, "carol")})
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.LessOrEqual(t, w.Body.Len(), pageLimit, "a page stays within MaxPageBytes")
	var res listResult
	require.NoError(t, json.Unmarshal(mcptest.Decode(t, w).Result, &res))
	assert.Less(t, len(res.Resources), 100, "the page ended at its byte limit")
	assert.NotNil(t, res.NextCursor)

	body, hdr = mcptest.Modern(2, "test/big", nil)
	w = f.Do(t, mcptest.Request{Body: body, Headers: hdr})
	require.Equal(t, 200, w.Code)
	assert.Nil(t, mcptest.Decode(t, w).Error, "another result may pass MaxPageBytes")
	assert.Greater(t, w.Body.Len(), pageLimit)
}

func TestMaxPageBytesIsChecked(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	_, err := mcphttp.New(f.Inv, mcphttp.Options{MaxPageBytes: -1})
	assert.Error(t, err, "negative")
	_, err = mcphttp.New(f.Inv, mcphttp.Options{MaxPageBytes: 4096})
	assert.Error(t, err, "cannot hold the largest item")
	_, err = mcphttp.New(f.Inv, mcphttp.Options{MaxPageBytes: 20000, MaxResultBytes: 4096})
	assert.Error(t, err, "the tighter limit is the result's")
	_, err = mcphttp.New(f.Inv, mcphttp.Options{MaxPageBytes: 20000})
	assert.NoError(t, err)
}
