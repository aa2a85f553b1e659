package redisstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn/upstream"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

func TestUpstreamStoreContract(t *testing.T) {
	_, client := startBackend(t)
	s, err := redisstore.NewUpstreamStore(client, redisstore.UpstreamOptions{})
	require.NoError(t, err)
	ctx := context.Background()

	_, err = s.LoadGrant(ctx, "photos|alice")
	assert.ErrorIs(t, err, upstream.ErrNoGrant)
	require.NoError(t, s.SaveGrant(ctx, "photos|alice", "row-a"))
	row, err := s.LoadGrant(ctx, "photos|alice")
	require.NoError(t, err)
	assert.Equal(t, "row-a", row)
	_, err = s.LoadGrant(ctx, "photos|bob")
	assert.ErrorIs(t, err, upstream.ErrNoGrant)
	require.NoError(t, s.DeleteGrant(ctx, "photos|alice"))
	_, err = s.LoadGrant(ctx, "photos|alice")
	assert.ErrorIs(t, err, upstream.ErrNoGrant)
	require.NoError(t, s.DeleteGrant(ctx, "photos|alice"), "deleting nothing")

	keys, err := allKeys(client, "*")
	require.NoError(t, err)
	for _, k := range keys {
		assert.NotContains(t, k, "alice", "keys are digests")
	}

	// A state is taken once, by one of many instances asking at once.
	require.NoError(t, s.SavePending(ctx, "state-1", "pending", time.Now().Add(time.Minute)))
	var got atomic.Int64
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			other, _ := redisstore.NewUpstreamStore(client, redisstore.UpstreamOptions{})
			if r, err := other.TakePending(ctx, "state-1"); err == nil && r == "pending" {
				got.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 1, got.Load())
	_, err = s.TakePending(ctx, "state-1")
	assert.ErrorIs(t, err, upstream.ErrNoPending)
	require.NoError(t, s.SavePending(ctx, "state-2", "pending", time.Now().Add(-time.Second)))
	_, err = s.TakePending(ctx, "state-2")
	assert.ErrorIs(t, err, upstream.ErrNoPending, "expired already")

	_, err = redisstore.NewUpstreamStore(nil, redisstore.UpstreamOptions{})
	assert.Error(t, err)
}

// TestUpstreamGrantsFleet: the user connects through one instance (its
// connect page; the callback lands on the other) and both use the grant.
func TestUpstreamGrantsFleet(t *testing.T) {
	_, client := startBackend(t)
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("redirect_uri")+"?code=c"+fmt.Sprint(n.Add(1))+"&state="+r.URL.Query().Get("state"), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "acc-" + fmt.Sprint(n.Add(1)), "token_type": "Bearer",
			"expires_in": 600, "refresh_token": "ref-" + fmt.Sprint(n.Load())})
	})
	as := httptest.NewServer(mux)
	defer as.Close()

	keys, err := sealedcursor.NewKeyRing(sealedcursor.Key{ID: 1, Secret: []byte(strings.Repeat("f", 32))})
	require.NoError(t, err)
	// Both instances behind one address: the load balancer sends the
	// connect page to one and the callback to the other.
	var instances [2]*upstream.Grants
	var turn atomic.Int64
	lb := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := instances[turn.Add(1)%2]
		if strings.HasPrefix(r.URL.Path, "/connect") {
			g.ConnectHandler().ServeHTTP(w, r)
			return
		}
		g.CallbackHandler().ServeHTTP(w, r)
	}))
	lb.Start()
	defer lb.Close()
	for i := range instances {
		st, err := redisstore.NewUpstreamStore(client, redisstore.UpstreamOptions{})
		require.NoError(t, err)
		instances[i], err = upstream.NewGrants(upstream.GrantOptions{Name: "photos", AuthorizeURL: as.URL + "/authorize", TokenURL: as.URL + "/token",
			ClientID: "mcp", ConnectURL: lb.URL + "/connect", CallbackURL: lb.URL + "/callback", Keys: keys, Store: st})
		require.NoError(t, err)
	}
	alice := principal.Principal{Subject: "alice"}
	_, err = instances[0].Token(context.Background(), alice)
	var el *upstream.ElicitationError
	require.ErrorAs(t, err, &el)
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(el.URL)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	for i, g := range instances {
		tok, err := g.Token(context.Background(), alice)
		require.NoError(t, err, "instance %d", i)
		assert.True(t, strings.HasPrefix(tok, "acc-"))
	}
}
