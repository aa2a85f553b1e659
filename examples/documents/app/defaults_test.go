package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/examples/internal/flood"
)

// withDefaults sets c's limits to the flags' defaults (start's Config has
// none) and gives subject n documents before the server opens the
// database.
func withDefaults(t *testing.T, subject string, n int) func(*Config) {
	return func(c *Config) {
		d, _, err := ParseFlags(nil, func(string) string { return "" }, io.Discard)
		require.NoError(t, err)
		c.RateList, c.RateRead, c.RateSearch, c.RateOther, c.RateRefused = d.RateList, d.RateRead, d.RateSearch, d.RateOther, d.RateRefused
		c.MaxInFlight = d.MaxInFlight
		c.AuditLog = "off"
		if n > 0 {
			ctx := context.Background()
			db, err := store.Open(ctx, "sqlite:"+filepath.Join(c.DataDir, "documents.db"))
			require.NoError(t, err)
			require.NoError(t, store.SeedMany(ctx, db, subject, n))
			require.NoError(t, db.Close())
		}
	}
}

// call sends one 2025-11-25 request with client and returns the status
// and, for a 200, the result.
func call(t *testing.T, client *http.Client, url, token, method string, params any) (int, json.RawMessage) {
	t.Helper()
	res, out := postRPC(t, client, url, token, method, params,
		map[string]string{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"})
	require.Nil(t, out.Error, "%s: %+v", method, out.Error)
	return res.StatusCode, out.Result
}

// Issue 27: at the documents server's defaults, one client that walks a
// user of 1,000 documents twice, back to back, as fast as it can, one
// call after another (list every page, read every resource), never gets
// a 429: none of the SDK clients retries one, so a 429 is a lost
// resource. (At the defaults before, a read burst of 500, the same walks
// got 585 answers of 2,044 calls and 1,459 × 429.)
func TestDefaultsTwoWalksOfAThousandResources(t *testing.T) {
	if testing.Short() {
		t.Skip("about 2,000 calls")
	}
	s := start(t, withDefaults(t, "walker", 1000))
	token := s.token(t, "walker")
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	statuses := map[int]int{}
	for walk := range 2 {
		var uris []string
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 100)
			var params any
			if cursor != "" {
				params = map[string]any{"cursor": cursor}
			}
			code, result := call(t, client, s.mcpURL(), token, "resources/list", params)
			statuses[code]++
			if code != http.StatusOK {
				break
			}
			var lr listResult
			require.NoError(t, json.Unmarshal(result, &lr))
			for _, r := range lr.Resources {
				uris = append(uris, r.URI)
			}
			if cursor = lr.NextCursor; cursor == "" {
				break
			}
		}
		assert.GreaterOrEqual(t, len(uris), 1000, "walk %d listed everything", walk)
		for _, u := range uris {
			code, _ := call(t, client, s.mcpURL(), token, "resources/read", map[string]any{"uri": u})
			statuses[code]++
		}
	}
	t.Logf("two walks: %v", statuses)
	assert.Zero(t, statuses[http.StatusTooManyRequests], "no 429: %v", statuses)
	assert.Equal(t, 1, len(statuses), "every call 200: %v", statuses)
}

// A flood — many calls in flight at once from one caller — is still
// limited at the defaults: past DefaultMaxInFlight it gets 429 with
// Retry-After and the MCP draft's -32023, and another caller is served
// meanwhile.
func TestDefaultsLimitAFlood(t *testing.T) {
	s := start(t, withDefaults(t, "", 0))
	mallory, alice := s.token(t, "mallory"), s.token(t, "alice")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	const inFlight, each = 48, 10
	wait := flood.Start(client, s.mcpURL(), mallory, `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, inFlight*each, inFlight)
	aliceOK := 0
	for range 20 {
		if code, _ := call(t, http.DefaultClient, s.mcpURL(), alice, "resources/list", nil); code == http.StatusOK {
			aliceOK++
		}
	}
	c := wait()
	t.Logf("a flood of %d calls, %d in flight: %d served, %d refused with 429; alice served %d of 20", inFlight*each, inFlight, c.Served, c.Limited, aliceOK)
	assert.Zero(t, c.Other, "only 200 and well-formed 429s")
	assert.Positive(t, c.Limited, "the flood is limited")
	assert.Equal(t, 20, aliceOK, "alice is served meanwhile")
}
