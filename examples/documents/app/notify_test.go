package app

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The whole story, in both protocol eras: alice shares a document with bob
// through the REST API, and bob's streams (a legacy session's GET and a
// modern subscriptions/listen) learn that his list changed; he lists and
// reads it. Unsharing takes it away again, with another list_changed.
// alice's edit reaches the streams of everyone who may read the document
// and subscribed to it (alice's and bob's). carol, whose streams are
// subscribed to the same URI, hears nothing at all.
func TestSharingNotifiesOnlyTheRightStreams(t *testing.T) {
	s := start(t, nil)
	alice, bob, carol := s.token(t, "alice"), s.token(t, "bob"), s.token(t, "carol")
	id := s.firstDocs(t, "alice", 1)[0]
	uri := documentPrefix + id

	// Every stream also follows AboutURI: the test's end marker.
	session := map[string]string{}
	for subject, tok := range map[string]string{"alice": alice, "bob": bob, "carol": carol} {
		session[subject] = s.initialize(t, tok)
		s.subscribe(t, tok, session[subject], AboutURI)
	}
	s.subscribe(t, alice, session["alice"], uri)
	s.subscribe(t, carol, session["carol"], uri) // carol may subscribe: she is never told anything
	aliceGET := s.openGET(t, alice, "alice", session["alice"], 1)
	bobGET := s.openGET(t, bob, "bob", session["bob"], 1)
	bobListen := s.listen(t, bob, "bob", []string{AboutURI, uri}, 2)
	carolGET := s.openGET(t, carol, "carol", session["carol"], 1)
	carolListen := s.listen(t, carol, "carol", []string{AboutURI, uri}, 2)

	assert.NotContains(t, s.walkURIs(t, bob), uri)
	assert.NotNil(t, s.read(t, bob, uri).Error)

	// Share: bob's streams hear of it, and the document is his to read.
	res, body := s.api(t, alice, http.MethodPost, "/api/documents/"+id+"/shares", `{"with":"bob"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"uri":"`+uri+`","sharedWith":"bob"}`, body)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	assert.Equal(t, "private, max-age=0", res.Header.Get("Cache-Control"))
	assert.Equal(t, listChangedNote(), parseNote(t, bobGET.next(t)), "legacy stream")
	assert.Equal(t, listChangedNote(), parseNote(t, bobListen.next(t)), "modern stream")
	assert.Contains(t, s.walkURIs(t, bob), uri)
	out := s.read(t, bob, uri)
	require.Nil(t, out.Error)
	assert.Contains(t, readText(t, out), "private document of alice")

	// Unshare: told again, and the document is gone.
	s.unshare(t, alice, id, "bob")
	assert.Equal(t, listChangedNote(), parseNote(t, bobGET.next(t)))
	assert.Equal(t, listChangedNote(), parseNote(t, bobListen.next(t)))
	assert.NotContains(t, s.walkURIs(t, bob), uri)
	out = s.read(t, bob, uri)
	require.NotNil(t, out.Error)
	assert.EqualValues(t, -32002, out.Error.Code, "unreadable, like a missing document")

	// Share again, bob subscribes his session too; alice edits.
	s.share(t, alice, id, "bob")
	assert.Equal(t, listChangedNote(), parseNote(t, bobGET.next(t)))
	assert.Equal(t, listChangedNote(), parseNote(t, bobListen.next(t)))
	s.subscribe(t, bob, session["bob"], uri)
	s.update(t, alice, id, "Version 2, for alice and bob.")
	assert.Equal(t, updatedNote(uri), parseNote(t, aliceGET.next(t)), "the owner's stream")
	assert.Equal(t, updatedNote(uri), parseNote(t, bobGET.next(t)), "the grantee's legacy stream")
	assert.Equal(t, updatedNote(uri), parseNote(t, bobListen.next(t)), "the grantee's modern stream")
	assert.Equal(t, "Version 2, for alice and bob.", readText(t, s.read(t, bob, uri)))
	assert.Equal(t, "Version 2, for alice and bob.", readText(t, s.read(t, alice, uri)))

	// The markers come next on every stream: nothing else was sent, and
	// carol got nothing at all.
	ctx := context.Background()
	for _, subject := range []string{"alice", "bob", "carol"} {
		s.app.hub.ResourceUpdated(ctx, subject, AboutURI)
	}
	for name, st := range map[string]*sseStream{
		"alice GET": aliceGET, "bob GET": bobGET, "bob listen": bobListen, "carol GET": carolGET, "carol listen": carolListen,
	} {
		assert.Empty(t, st.untilMarker(t), name)
	}
}

// Only owners change documents: a grantee or a stranger gets 404 for
// sharing, unsharing and updating, exactly as for a missing document, and
// nobody is notified of the attempts.
func TestOnlyOwnersChangeDocuments(t *testing.T) {
	s := start(t, nil)
	alice, bob, carol := s.token(t, "alice"), s.token(t, "bob"), s.token(t, "carol")
	id := s.firstDocs(t, "alice", 1)[0]
	s.share(t, alice, id, "bob")
	sessions := map[string]string{"alice": s.initialize(t, alice), "bob": s.initialize(t, bob), "carol": s.initialize(t, carol)}
	streams := map[string]*sseStream{}
	for subject, tok := range map[string]string{"alice": alice, "bob": bob, "carol": carol} {
		s.subscribe(t, tok, sessions[subject], AboutURI)
		s.subscribe(t, tok, sessions[subject], documentPrefix+id)
		streams[subject] = s.openGET(t, tok, subject, sessions[subject], 1)
	}

	missing := "doesNotExist0000000000"
	for _, tc := range []struct {
		name, token, method, path, body string
	}{
		{"grantee shares", bob, http.MethodPost, "/api/documents/" + id + "/shares", `{"with":"carol"}`},
		{"stranger shares", carol, http.MethodPost, "/api/documents/" + id + "/shares", `{"with":"carol"}`},
		{"grantee unshares himself", bob, http.MethodDelete, "/api/documents/" + id + "/shares/bob", ""},
		{"stranger unshares", carol, http.MethodDelete, "/api/documents/" + id + "/shares/bob", ""},
		{"grantee updates", bob, http.MethodPut, "/api/documents/" + id, `{"body":"bob was here"}`},
		{"stranger updates", carol, http.MethodPut, "/api/documents/" + id, `{"body":"carol was here"}`},
		{"missing document shared", alice, http.MethodPost, "/api/documents/" + missing + "/shares", `{"with":"bob"}`},
		{"missing document updated", alice, http.MethodPut, "/api/documents/" + missing, `{"body":"x"}`},
		{"malformed id", alice, http.MethodPut, "/api/documents/a.b", `{"body":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := s.api(t, tc.token, tc.method, tc.path, tc.body)
			assert.Equal(t, http.StatusNotFound, res.StatusCode)
			assert.JSONEq(t, `{"error":"not_found","message":"document not found"}`, body)
		})
	}
	assert.Contains(t, readText(t, s.read(t, alice, documentPrefix+id)), "private document of alice", "unchanged")
	assert.Contains(t, s.walkURIs(t, bob), documentPrefix+id, "still shared with bob")
	assert.NotContains(t, s.walkURIs(t, carol), documentPrefix+id, "never shared with carol")

	for _, subject := range []string{"alice", "bob", "carol"} {
		s.app.hub.ResourceUpdated(context.Background(), subject, AboutURI)
	}
	for subject, st := range streams {
		assert.Empty(t, st.untilMarker(t), "%s was told nothing", subject)
	}
}

// A legacy session belongs to the principal who created it: another
// principal's token on it is "not found", for POST, GET and DELETE alike,
// and the session keeps working for its owner.
func TestSessionBoundToItsPrincipal(t *testing.T) {
	s := start(t, nil)
	alice, bob := s.token(t, "alice"), s.token(t, "bob")
	session := s.initialize(t, alice)

	res := s.rpc(t, bob, session, rpcBody(t, 2, "resources/list", nil), nil)
	res.Body.Close()
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "POST")
	res = s.rpc(t, bob, session, rpcBody(t, 3, "resources/subscribe", map[string]any{"uri": AboutURI}), nil)
	res.Body.Close()
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "subscribe")
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, err := http.NewRequest(method, s.mcpURL(), nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+bob)
		req.Header.Set("Mcp-Session-Id", session)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusNotFound, res.StatusCode, method)
	}
	assert.Equal(t, 0, s.app.hub.Subscribers("bob"), "no stream was opened")

	res = s.rpc(t, alice, session, rpcBody(t, 4, "resources/list", nil), nil)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode, "alice's session still works for alice")
}

// walkURIs returns every URI of the caller's listing.
func (s *testServer) walkURIs(t *testing.T, token string) []string {
	t.Helper()
	uris, _ := s.walk(t, token)
	return uris
}

// readText returns the text of a successful one-content read.
func readText(t *testing.T, out rpcResponse) string {
	t.Helper()
	require.Nil(t, out.Error)
	var rr readResult
	require.NoError(t, json.Unmarshal(out.Result, &rr))
	require.Len(t, rr.Contents, 1)
	return rr.Contents[0].Text
}
