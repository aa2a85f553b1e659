package app

import (
	"context"
	"encoding/base64"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
)

// Shutdown stops accepting connections at once, waits for a slow request
// in flight, lets it complete, and only then returns.
func TestGracefulShutdownDrainsInFlight(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	s := start(t, func(c *Config) {
		c.wrap = func(h http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
				close(entered)
				<-release
				io.WriteString(w, "done")
			})
			mux.Handle("/", h)
			return mux
		}
	})
	type result struct {
		status int
		body   string
		err    error
	}
	resc := make(chan result, 1)
	go func() {
		res, err := http.Get(s.app.URL() + "/slow")
		if err != nil {
			resc <- result{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		resc <- result{res.StatusCode, string(b), err}
	}()
	<-entered
	s.cancel() // SIGINT / SIGTERM in main

	// The listener closes at once: new connections are refused...
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.app.Addr(), time.Second)
		if err != nil {
			break
		}
		c.Close()
		require.True(t, time.Now().Before(deadline), "listener still open")
		time.Sleep(5 * time.Millisecond)
	}
	// ...while Run still waits for the request in flight.
	select {
	case err := <-s.done:
		t.Fatalf("Run returned %v with a request in flight", err)
	default:
	}
	close(release)
	r := <-resc
	require.NoError(t, r.err)
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "done", r.body)
	require.NoError(t, <-s.done, "clean shutdown")
	s.done <- nil // for the cleanup
	assert.Contains(t, s.logs.String(), "draining requests in flight")
}

// Request logs carry method, route, status, duration and subject, and no
// byte of any token: not from the Authorization header, not from a query
// string, not from a path, not from a forged token.
func TestRequestLogHasNoTokens(t *testing.T) {
	s := start(t, nil) // logs at debug level
	alice := s.token(t, "alice")
	parts := strings.Split(alice, ".")
	require.Len(t, parts, 3)
	forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"mallory"}`)) + "." + parts[2]

	s.list(t, alice, "")
	res, _ := s.post(t, forged, "resources/list", nil)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	res, _ = get(t, s.app.URL()+"/mcp/"+alice) // not a route
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	res, _ = get(t, s.app.URL()+"/healthz?token="+alice)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	req, err := http.NewRequest(http.MethodPost, s.mcpURL()+"?access_token="+alice, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, "a token in the query is refused")

	logs := s.logs.String()
	for _, secret := range []string{alice, forged, parts[1], parts[2], "mallory"} {
		assert.NotContains(t, logs, secret)
	}
	assert.Contains(t, logs, "method=POST path=/mcp status=200")
	assert.Contains(t, logs, "subject=alice")
	assert.Contains(t, logs, "path=- status=404", "unmatched paths are not echoed")
	assert.Contains(t, logs, "path=/healthz status=200")
}

// The request log escapes the subject (%+q-style): a look-alike with a
// Cyrillic "а" is visibly not alice, and no subject forges a log line or
// field.
func TestRequestLogEscapesSubject(t *testing.T) {
	s := start(t, nil)
	for _, subject := range []string{"alice", "\u0430lice", "bob level=ERROR", "eve\u2028msg=forged", "mallory\u202e"} {
		s.list(t, s.token(t, subject), "")
	}
	logs := s.logs.String()
	for _, want := range []string{
		"subject=alice\n",                // plain ASCII stays as it is
		"subject=\\u0430lice\n",          // the look-alike: \u0430, never а
		`subject="bob level=ERROR"`,      // quoted by the logger: one field
		`subject="eve\\u2028msg=forged"`, // a line separator, escaped; quoted by the logger (the "=")
		"subject=mallory\\u202e\n",       // a bidi override, escaped
	} {
		assert.Contains(t, logs, want)
	}
	assert.NotContains(t, logs, "аlice")
	assert.NotContains(t, logs, "\u2028")
	assert.NotContains(t, logs, "\u202e")
}

// The documents template passes mcpkit's contract checker on SQLite, for a
// small and a multi-page collection, with page sizes 1, 7, 50 and 100.
func TestDocumentsTemplateContract(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite::memory:")
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, store.Seed(ctx, db))
	require.NoError(t, store.SeedMany(ctx, db, "dave", 260))
	for _, subject := range []string{"alice", "bob", "dave", "nobody"} {
		inventorytest.CheckList(t, DocumentsTemplate(db), principal.Principal{Subject: subject, Scopes: []string{ScopeRead}}, inventorytest.Options{})
	}
	_, err = listDocuments(db)(ctx, inventoryRequestWithoutSubject())
	assert.ErrorIs(t, err, errNoSubject, "never list without an owner")
}

// Close releases everything and can be called again; Run after Close
// fails instead of serving.
func TestCloseIsIdempotent(t *testing.T) {
	a, err := New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Logger: discardLogger()})
	require.NoError(t, err)
	require.NoError(t, a.Close())
	require.NoError(t, a.Close())
	assert.Error(t, a.Run(context.Background()))
}

// A configuration error is reported before anything is opened.
func TestNewRejectsBadConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub")
	_, err := New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: dir, PageSize: 101})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "page-size", ce.Flag)
	_, statErr := os.Stat(dir)
	assert.ErrorIs(t, statErr, fs.ErrNotExist, "nothing created")
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func inventoryRequestWithoutSubject() inventory.ListRequest {
	return inventory.ListRequest{Limit: 5, Principal: &principal.Principal{Scopes: []string{ScopeRead}}}
}

// Shutdown with notification streams open (a legacy GET and a modern
// subscriptions/listen): the hub closes first, so the streams end at once
// (the listen request with its final result) and Shutdown drains cleanly,
// long before its timeout; without that it would wait for them until the
// timeout and fail.
func TestShutdownEndsNotificationStreams(t *testing.T) {
	s := start(t, func(c *Config) { c.ShutdownTimeout = time.Minute })
	bob := s.token(t, "bob")
	get := s.openGET(t, bob, "bob", s.initialize(t, bob), 1)
	listen := s.listen(t, bob, "bob", []string{AboutURI}, 2)

	s.cancel()
	err := <-s.done
	s.done <- nil // for the cleanup
	require.NoError(t, err, "a clean shutdown, not a timeout")
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`,
		listen.next(t), "the listen request is completed")
	listen.ended(t)
	get.ended(t)
	assert.Equal(t, 0, s.app.hub.Subscribers("bob"))
	assert.Contains(t, s.logs.String(), "msg=stopped")
}
