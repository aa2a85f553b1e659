package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/sealedcursor"
)

// FuzzOpenRow: whatever a store hands back (a damaged or hostile row),
// openRow never panics and opens only what was sealed for the binding.
func FuzzOpenRow(f *testing.F) {
	keys, _ := sealedcursor.NewKeyRing(sealedcursor.Key{ID: 1, Secret: []byte(strings.Repeat("k", 32))})
	s := sealedcursor.MustNew(sealedcursor.Options{Keys: keys, TTL: time.Hour})
	binding := bindingOf("grant", "photos", "alice")
	good, _ := sealRow(s, binding, []byte(`{"r":"x","a":"y","e":1}`), time.Now())
	long, _ := sealRow(s, binding, []byte(strings.Repeat("z", 2000)), time.Now())
	for _, seed := range []string{good, long, "", "u1.", "u1..", "u1.AAAA.AAAA", good + ".", strings.Replace(good, ".", "..", 1)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, row string) {
		p, err := openRow(s, binding, row)
		// Fuzzing workers seal their own seeds (another random row id and
		// nonce): what opens must be one of the payloads sealed.
		if err == nil && string(p) != `{"r":"x","a":"y","e":1}` && string(p) != strings.Repeat("z", 2000) {
			t.Fatalf("a row not sealed for the binding opened: %q -> %q", row, p)
		}
	})
}

// FuzzCallback: the callback handler answers any query without panicking,
// and never stores a grant without a state it issued.
func FuzzCallback(f *testing.F) {
	keys, _ := sealedcursor.NewKeyRing(sealedcursor.Key{ID: 1, Secret: []byte(strings.Repeat("k", 32))})
	st, _ := NewMemoryStore(0, nil)
	g, err := NewGrants(GrantOptions{Name: "photos", AuthorizeURL: "http://127.0.0.1:1/a", TokenURL: "http://127.0.0.1:1/t",
		ClientID: "c", ConnectURL: "http://127.0.0.1:2/connect", CallbackURL: "http://127.0.0.1:2/callback", Keys: keys, Store: st})
	if err != nil {
		f.Fatal(err)
	}
	h, c := g.CallbackHandler(), g.ConnectHandler()
	for _, seed := range []string{"state=a&code=b", "error=access_denied&state=x", "state=" + strings.Repeat("s", 200), "link=u1.AAAA", "%zz", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, query string) {
		for _, handler := range []http.Handler{h, c} {
			r := httptest.NewRequest(http.MethodGet, "/x", nil)
			r.URL.RawQuery = query
			r.AddCookie(&http.Cookie{Name: g.cookie, Value: url.QueryEscape(query)})
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, r)
			if w.Code == http.StatusOK || w.Code == http.StatusFound {
				t.Fatalf("%q answered %d", query, w.Code)
			}
		}
		if ok, _ := g.Connected(context.Background(), alice()); ok {
			t.Fatal("a grant was stored")
		}
	})
}
