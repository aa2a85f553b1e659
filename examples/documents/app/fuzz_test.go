package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/go-chi/chi/v5"

	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/notify"
)

// FuzzDocumentIDValidate checks the one rule this package applies to client
// input (the id of a docs://documents/{id} URI): it accepts exactly the
// store's id charset, and for every id it accepts, the URI that
// listDocuments builds by concatenation is what inventory.Expand builds.
func FuzzDocumentIDValidate(f *testing.F) {
	for _, s := range []string{"", "a", "q3Xv0c7mS8e2N9Rk1pLwGA", "a-b_c", "a b", "a/b", "%41", "é", "a\x00", string(make([]byte, 65))} {
		f.Add(s)
	}
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	f.Fuzz(func(t *testing.T, id string) {
		err := validateID(id)
		if (err == nil) != valid.MatchString(id) {
			t.Fatalf("validateID(%q) = %v", id, err)
		}
		if err != nil {
			return
		}
		uri, err := inventory.Expand(DocumentTemplate, map[string]string{"id": id})
		if err != nil || uri != documentPrefix+id {
			t.Fatalf("Expand(%q) = %q, %v; listDocuments builds %q", id, uri, err, documentPrefix+id)
		}
	})
}

// FuzzDocumentsAPIRequest drives the REST API's handlers (behind a fixed
// caller, alice) with any body, content type, document id and user name:
// the answer is always a documented status, and an error body is always
// one of the fixed messages (never the input, never an internal error).
func FuzzDocumentsAPIRequest(f *testing.F) {
	for _, s := range []struct {
		op                    uint8
		id, user, ctype, body string
	}{
		{0, "", "", "application/json", `{"with":"bob"}`},
		{0, "nope", "", "application/json", `{"with":"bob"}`},
		{0, "", "", "application/json", `{"with":"alice"}`},
		{0, "", "", "text/plain", `with=bob`},
		{0, "", "", "application/json", `{"with":"bob","x":1}`},
		{1, "", "bob", "", ""},
		{1, "", "a%2Fb", "", ""},
		{1, "", "%zz", "", ""},
		{2, "", "", "application/json; charset=utf-8", `{"body":"new text"}`},
		{2, "", "", "application/json", `{"body":"\u0000"}`},
		{2, "a.b", "", "application/json", `{"body":null}`},
	} {
		f.Add(s.op, s.id, s.user, s.ctype, s.body)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite::memory:")
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	doc, err := db.Create(ctx, store.NewDocument{Owner: "alice", Title: "t", MIMEType: "text/plain"})
	if err != nil {
		f.Fatal(err)
	}
	hub := notify.New(notify.Options{})
	defer hub.Close()
	a := &App{db: db, hub: hub, log: slog.New(slog.DiscardHandler)}
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			p := principal.Principal{Subject: "alice", Scopes: []string{ScopeRead, ScopeShare}}
			ctx, err := principal.NewContext(req.Context(), p)
			if err != nil {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, req.WithContext(ctx))
		})
	})
	r.Post("/api/documents/{id}/shares", a.apiShare)
	r.Delete("/api/documents/{id}/shares/{user}", a.apiUnshare)
	r.Put("/api/documents/{id}", a.apiUpdate)
	fixed := map[string]bool{}
	for _, e := range []apiError{errDocNotFound, errBadJSON, errBadMediaType, errTooLarge, errBadGrantee,
		errShareOwner, errBadUser, errBodyMissing, errBodyInvalid, errBodyTooLarge} {
		b, _ := json.Marshal(e)
		fixed[string(b)] = true
	}

	f.Fuzz(func(t *testing.T, op uint8, id, user, ctype, body string) {
		if id == "" {
			id = doc.ID
		}
		var method, path string
		switch op % 3 {
		case 0:
			method, path = http.MethodPost, "/api/documents/"+id+"/shares"
		case 1:
			method, path = http.MethodDelete, "/api/documents/"+id+"/shares/"+user
		default:
			method, path = http.MethodPut, "/api/documents/"+id
		}
		u, err := url.Parse("http://127.0.0.1" + path)
		if err != nil || strings.ContainsAny(path, "?#") {
			return // not a request a client can send
		}
		req := httptest.NewRequest(method, "/", strings.NewReader(body))
		req.URL = u
		req.Header.Set("Content-Type", ctype)
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		switch w.Code {
		case http.StatusOK, http.StatusNoContent:
		case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
			if got := strings.TrimSpace(w.Body.String()); !fixed[got] && got != "404 page not found" {
				t.Fatalf("%s %q: status %d with body %q", method, path, w.Code, got)
			}
		default:
			t.Fatalf("%s %q: status %d", method, path, w.Code)
		}
	})
}
