package app

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/store"
)

// Long titles are listed clipped to the name limit (512 UTF-16 code units,
// with "…"), and the rest of the caller's list still comes: one long title
// never fails a whole list. The read still returns the whole document.
func TestLongTitlesAreListedClipped(t *testing.T) {
	s := start(t, nil)
	ctx := context.Background()
	titles := map[string]string{} // URI → title
	for _, title := range []string{
		strings.Repeat("文", 600),  // 600 code units, 1,800 bytes
		strings.Repeat("😀", 1000), // 2,000 code units, 4,000 bytes
	} {
		d, err := s.app.db.Create(ctx, store.NewDocument{Owner: "alice", Title: title, Body: "long", MIMEType: "text/plain"})
		require.NoError(t, err)
		titles[documentPrefix+d.ID] = title
	}
	alice := s.token(t, "alice")
	var names = map[string]string{}
	listed := 0
	for cursor := ""; ; {
		page := s.list(t, alice, cursor)
		for _, r := range page.Resources {
			names[r.URI] = r.Name
			listed++
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	assert.Equal(t, 1+12+2, listed, "about, alice's 12 seeded documents and the two long ones")
	for uri, title := range titles {
		name, ok := names[uri]
		require.True(t, ok, "%s is listed", uri)
		assert.True(t, utf8.ValidString(name))
		assert.LessOrEqual(t, len(utf16.Encode([]rune(name))), 512, "clipped to the name limit")
		assert.True(t, strings.HasSuffix(name, "…"))
		assert.True(t, strings.HasPrefix(title, strings.TrimSuffix(name, "…")), "a prefix of the title")
		out := s.read(t, alice, uri)
		require.Nil(t, out.Error)
		// search and fetch report the clipped title too (a hit's name and
		// Contents.Title have the name limit).
		text, isErr := s.callTool(t, alice, "fetch", map[string]any{"id": uri})
		require.False(t, isErr, text)
		assert.Contains(t, text, `"title":"`+name+`"`)
	}
	hits := s.search(t, alice, "long")
	assert.Len(t, hits, 2, "the long-titled documents are found by their body")
	for _, h := range hits {
		assert.True(t, strings.HasSuffix(h, "…"), "clipped: %s", h)
	}
}

// A valid non-ASCII subject of 200 characters (400 bytes) lists and reads
// its documents: the store counts UTF-16 code units, as authn does.
func TestNonASCIISubject(t *testing.T) {
	s := start(t, nil)
	subject := strings.Repeat("д", 200)
	d, err := s.app.db.Create(context.Background(), store.NewDocument{Owner: subject, Title: "Мой документ", Body: "текст", MIMEType: "text/plain"})
	require.NoError(t, err)
	tok := s.token(t, subject)
	res, out := s.post(t, tok, "resources/list", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Nil(t, out.Error, "resources/list")
	assert.Contains(t, string(out.Result), documentPrefix+d.ID)
	read := s.read(t, tok, documentPrefix+d.ID)
	require.Nil(t, read.Error)
	assert.Contains(t, string(read.Result), "текст")
}
