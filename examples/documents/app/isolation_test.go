package app

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNotificationIsolationProperty: several principals, each with a
// legacy stream and a modern one subscribed to every document's URI (even
// those they cannot read), while random shares, unshares, updates and
// forbidden attempts by non-owners go through the REST API. Every
// notification a stream receives must be for its own principal and about
// a document that principal could see when it changed; and each stream
// receives exactly what a model of the access table predicts, in order.
//
// Complexity: one model-based script (random operations, the model of who hears what, the check); split, every piece would need the server, the model and the generator passed.
//
//gocyclo:ignore
func TestNotificationIsolationProperty(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0x5eed))

	s := start(t, nil)
	principals := []string{"alice", "bob", "carol", "dave"} // dave owns nothing
	tokens := map[string]string{}
	for _, p := range principals {
		tokens[p] = s.token(t, p)
	}
	type doc struct{ id, owner, uri string }
	var docs []doc
	for owner, n := range map[string]int{"alice": 3, "bob": 2, "carol": 1} {
		for _, id := range s.firstDocs(t, owner, n) {
			docs = append(docs, doc{id, owner, documentPrefix + id})
		}
	}
	slices.SortFunc(docs, func(a, b doc) int { return strings.Compare(a.id, b.id) }) // the seed alone decides
	uris := []string{AboutURI}
	for _, d := range docs {
		uris = append(uris, d.uri)
	}

	// Streams: per principal, a legacy session subscribed to every URI,
	// and a subscriptions/listen for every URI.
	type stream struct {
		principal string
		st        *sseStream
	}
	var streams []stream
	for _, p := range principals {
		session := s.initialize(t, tokens[p])
		for _, u := range uris {
			s.subscribe(t, tokens[p], session, u)
		}
		streams = append(streams,
			stream{p, s.openGET(t, tokens[p], p, session, 1)},
			stream{p, s.listen(t, tokens[p], p, uris, 2)})
	}

	// The model: who may read each document; and what each principal must
	// be told, in order.
	readers := map[string]map[string]bool{}
	for _, d := range docs {
		readers[d.id] = map[string]bool{d.owner: true}
	}
	expected := map[string][]note{}
	// mayHear[p] holds the notes p may legitimately receive: a list change
	// of p's own visibility, an update of a document p could read then.
	mayHear := map[string]map[note]bool{}
	for _, p := range principals {
		mayHear[p] = map[note]bool{}
	}
	tell := func(p string, n note) {
		expected[p] = append(expected[p], n)
		mayHear[p][n] = true
	}
	others := func(p string) []string {
		var out []string
		for _, q := range principals {
			if q != p {
				out = append(out, q)
			}
		}
		return out
	}

	const ops = 60
	for i := range ops {
		d := docs[r.IntN(len(docs))]
		switch op := r.IntN(5); op {
		case 0, 1: // share with someone else
			g := pick(r, others(d.owner))
			s.share(t, tokens[d.owner], d.id, g)
			readers[d.id][g] = true
			tell(g, listChangedNote())
		case 2: // unshare (whether or not it was shared: the user is told either way)
			g := pick(r, others(d.owner))
			s.unshare(t, tokens[d.owner], d.id, g)
			delete(readers[d.id], g)
			tell(g, listChangedNote())
		case 3: // the owner updates: every reader is told
			s.update(t, tokens[d.owner], d.id, "revision "+string(rune('A'+i%26)))
			for _, p := range principals { // in any order: each stream has one principal
				if readers[d.id][p] {
					tell(p, updatedNote(d.uri))
				}
			}
		case 4: // somebody else tries to change it: 404, nobody is told
			p := pick(r, others(d.owner))
			var res *http.Response
			switch r.IntN(3) {
			case 0:
				res, _ = s.api(t, tokens[p], http.MethodPost, "/api/documents/"+d.id+"/shares", `{"with":"`+p+`"}`)
			case 1:
				res, _ = s.api(t, tokens[p], http.MethodDelete, "/api/documents/"+d.id+"/shares/"+pick(r, principals), "")
			default:
				res, _ = s.api(t, tokens[p], http.MethodPut, "/api/documents/"+d.id, `{"body":"hijacked"}`)
			}
			require.Equal(t, http.StatusNotFound, res.StatusCode)
		}
	}

	// End markers, then every stream's notifications up to its marker.
	for _, p := range principals {
		s.app.hub.ResourceUpdated(context.Background(), p, AboutURI)
	}
	for i, st := range streams {
		got := st.st.untilMarker(t)
		kind := [2]string{"legacy", "modern"}[i%2]
		for _, n := range got {
			assert.True(t, mayHear[st.principal][n], "%s's %s stream received %v, which is not %s's to hear", st.principal, kind, n, st.principal)
		}
		assert.Equal(t, expected[st.principal], got, "%s's %s stream", st.principal, kind)
	}

	// And the listings agree with the model.
	for _, p := range principals {
		var want []string
		for _, d := range docs {
			if readers[d.id][p] {
				want = append(want, d.uri)
			}
		}
		var got []string
		for _, u := range s.walkURIs(t, tokens[p]) {
			if slices.Contains(uris[1:], u) {
				got = append(got, u)
			}
		}
		assert.ElementsMatch(t, want, got, "%s's listing", p)
	}
}

func pick(r *rand.Rand, from []string) string { return from[r.IntN(len(from))] }
