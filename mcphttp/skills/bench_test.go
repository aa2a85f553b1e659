package skills_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testkit/benchpair"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
)

func listRequest(cursor string) mcptest.Request {
	params := map[string]any{}
	if cursor != "" {
		params["cursor"] = cursor
	}
	body, hd := mcptest.Modern(1, "skills/list", params)
	hd["X-Test-User"] = "alice"
	return mcptest.Request{Body: body, Headers: hd}
}

// BenchmarkListDepth serves skills/list pages of alice's 10,000 skills
// through the endpoint (20 skills a page, 500 pages): the first page and
// the 499th. Keyset paging makes both cost the same: deep/first ≈ 1.
func BenchmarkListDepth(b *testing.B) {
	s := newStore()
	for i := range 10000 {
		s.add("alice", fmt.Sprintf("skill-%05d", i), map[string]string{"references/guide.md": "# Guide\n"})
	}
	h := endpoint(b, s, skills.Options{PageSize: 20}, mcphttp.Options{})
	deep := ""
	for range 498 {
		w := mcptest.Do(b, h, listRequest(deep))
		var res struct {
			Next string `json:"nextCursor"`
		}
		if err := json.Unmarshal(mcptest.Decode(b, w).Result, &res); err != nil || res.Next == "" {
			b.Fatalf("walking: %v %q", err, res.Next)
		}
		deep = res.Next
	}
	// First and deep pages alternate in one loop, each timed, so that the
	// load of a shared machine falls on both alike: deep/first is the
	// figure.
	first, deepRq := listRequest(""), listRequest(deep)
	var firstNS, deepNS time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		w1 := mcptest.Do(b, h, first)
		t1 := time.Now()
		w2 := mcptest.Do(b, h, deepRq)
		t2 := time.Now()
		if w1.Code != http.StatusOK || w2.Code != http.StatusOK || w2.Body.Len() < 1000 {
			b.Fatal(w1.Code, w2.Code)
		}
		firstNS += t1.Sub(t0)
		deepNS += t2.Sub(t1)
	}
	benchpair.Report(b, "page", "first", firstNS, "deep", deepNS)
}
