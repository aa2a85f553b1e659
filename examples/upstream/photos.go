package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/principal"
)

// photo is one photo of the stand-in photos service.
type photo struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// album holds a few photos per user of the photos service.
var album = map[string][]photo{
	"alice": {{"a1", "Alice at the lake"}, {"a2", "Alice's cat"}, {"a3", "Sunset from Alice's window"}},
	"bob":   {{"b1", "Bob's bicycle"}, {"b2", "Bob hiking"}},
	"carol": {{"c1", "Carol's garden"}},
}

// photosAPI is the stand-in third-party API under /photos/api/: it
// answers to tokens of its own audience only (an MCP access token gets
// 401), and shows each user their own photos.
//
//	GET /photos/api/photos        the caller's photos, JSON
//	GET /photos/api/photos/{id}   one photo (an SVG), 404 for another's
func photosAPI(auth *authn.Authenticator) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /photos/api/photos", func(w http.ResponseWriter, r *http.Request) {
		p, _ := principal.FromContext(r.Context())
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(album[p.Subject])
	})
	mux.HandleFunc("GET /photos/api/photos/{id}", func(w http.ResponseWriter, r *http.Request) {
		p, _ := principal.FromContext(r.Context())
		i := slices.IndexFunc(album[p.Subject], func(ph photo) bool { return ph.ID == r.PathValue("id") })
		if i < 0 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="40"><text x="4" y="24">%s</text></svg>`,
			svgText.Replace(album[p.Subject][i].Title))
	})
	return auth.Handler(mux)
}

// svgText escapes the text of an SVG element.
var svgText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// client is how a callback reaches the photos API as its caller: an
// upstream.Exchanger's or upstream.Grants' Client.
type client func(ctx context.Context, caller principal.Principal) *http.Client

// photosTemplate lists and reads the caller's photos from the photos API
// as the caller: photos://{id}.
func photosTemplate(apiBase string, as client) inventory.Template {
	fetch := func(ctx context.Context, caller principal.Principal, path string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, apiBase+path, nil)
		if err != nil {
			return nil, err
		}
		resp, err := as(ctx, caller).Do(req)
		if err != nil {
			return nil, err // an *upstream.ElicitationError passes through *url.Error
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		switch {
		case err != nil:
			return nil, err
		case resp.StatusCode == http.StatusNotFound:
			return nil, inventory.ErrNotFound
		case resp.StatusCode != http.StatusOK:
			return nil, fmt.Errorf("photos API answered %d", resp.StatusCode)
		}
		return body, nil
	}
	return inventory.Template{
		Name: "photos", Title: "Photos", Description: "Your photos, from the photos service",
		URITemplate: "photos://{id}", MIMEType: "image/svg+xml",
		Access: inventory.Protected, RequiredScopes: []string{scopeMCP},
		List: func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
			body, err := fetch(ctx, *req.Principal, "/photos")
			if err != nil {
				return inventory.Page{}, err
			}
			var all []photo
			if err := json.Unmarshal(body, &all); err != nil {
				return inventory.Page{}, err
			}
			slices.SortFunc(all, func(a, b photo) int { return cmp.Compare(a.ID, b.ID) })
			var page inventory.Page
			for _, ph := range all {
				if ph.ID <= req.After {
					continue
				}
				if len(page.Entries) == req.Limit {
					page.HasMore = true
					break
				}
				page.Entries = append(page.Entries, inventory.Entry{Key: ph.ID, URI: "photos://" + ph.ID, Name: inventory.ClipName(ph.Title)})
			}
			return page, nil
		},
		Read: func(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			id := req.Params["id"]
			if id == "" || strings.ContainsAny(id, "/?#%") {
				return nil, inventory.ErrNotFound
			}
			if req.Principal == nil {
				return nil, inventory.ErrNotFound
			}
			body, err := fetch(ctx, *req.Principal, "/photos/"+id)
			if err != nil {
				return nil, err
			}
			return []inventory.Contents{{URI: req.URI, MIMEType: "image/svg+xml", Text: string(body)}}, nil
		},
	}
}
