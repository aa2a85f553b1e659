package skills_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

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
// the 499th. Keyset paging makes both cost the same; compare their ns/op
// (run both in one invocation, -count to repeat).
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
	for _, bc := range []struct {
		name string
		rq   mcptest.Request
	}{{"first", listRequest("")}, {"deep", listRequest(deep)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if w := mcptest.Do(b, h, bc.rq); w.Code != http.StatusOK || w.Body.Len() < 1000 {
					b.Fatal(w.Code)
				}
			}
		})
	}
}
