package mcphttp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAcceptsType(t *testing.T) {
	cases := []struct {
		accept []string
		want   bool
	}{
		{nil, true},
		{[]string{"application/json"}, true},
		{[]string{"APPLICATION/JSON"}, true},
		{[]string{"application/json, text/event-stream"}, true},
		{[]string{"text/event-stream", "application/json"}, true},
		{[]string{"application/*;q=0.5"}, true},
		{[]string{"text/html, */*;q=0.1"}, true},
		{[]string{"application/json;q=0"}, false},
		{[]string{"application/json; q=0.0, text/html"}, false},
		{[]string{"application/json;q=0.001"}, true},
		{[]string{"text/event-stream"}, false},
		{[]string{"application/jsonx"}, false},
		{[]string{""}, false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, acceptsType(tc.accept, "application/json", "application/*"), "%q", tc.accept)
	}
	assert.True(t, acceptsType([]string{"text/*"}, "text/event-stream", "text/*"))
	assert.False(t, acceptsType([]string{"application/json"}, "text/event-stream", "text/*"))
}

func TestContentType(t *testing.T) {
	for ct, ok := range map[string]bool{
		"application/json": true, "application/json; charset=utf-8": true, "Application/JSON": true,
		" application/json ": true, "application/jsonx": false, "application/json-seq": false,
		"text/plain": false, "": false,
	} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Content-Type", ct)
		w := httptest.NewRecorder()
		assert.Equal(t, ok, negotiateContent(w, r), "%q", ct)
	}
}

func TestReadLimited(t *testing.T) {
	e := &Endpoint{maxBody: 10}
	for body, ok := range map[string]bool{"": true, "0123456789": true, "0123456789a": false, strings.Repeat("x", 9000): false} {
		for _, known := range []bool{true, false} {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
			if !known {
				r.ContentLength = -1
			}
			w := httptest.NewRecorder()
			b, got := e.readLimited(w, r)
			assert.Equal(t, ok, got, "%d bytes, length known %v", len(body), known)
			if got {
				assert.Equal(t, body, string(b.b))
				putBody(b)
			} else {
				assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
			}
		}
	}
}
