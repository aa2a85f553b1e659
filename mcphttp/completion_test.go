package mcphttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// TestCompletionTotal: the result carries total only when it is known;
// an unknown total is left out rather than guessed from the values.
func TestCompletionTotal(t *testing.T) {
	values := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("v%03d", i)
		}
		return out
	}
	answers := map[string]inventory.Completion{
		"all":     {Values: values(3)},
		"many":    {Values: values(150)},
		"some":    {Values: values(100), HasMore: true},
		"known":   {Values: values(100), Total: 400, HasMore: true},
		"nothing": {},
	}
	tmpl := inventory.Template{
		Name: "letters", URITemplate: "test://letters/{x}", Access: inventory.Public,
		Read: inventory.TextReader("text/plain", ""),
		Complete: map[string]inventory.CompleteFunc{"x": func(_ context.Context, req inventory.CompleteRequest) (inventory.Completion, error) {
			return answers[req.Value], nil
		}},
	}
	f := mcptest.New(t, mcptest.Options{Templates: []inventory.Template{tmpl}})
	for _, tc := range []struct {
		value     string
		wantN     int
		wantTotal *int
		wantMore  bool
	}{
		{value: "all", wantN: 3, wantTotal: ptr(3)},
		{value: "many", wantN: 100, wantTotal: ptr(150), wantMore: true},
		{value: "some", wantN: 100, wantMore: true},
		{value: "known", wantN: 100, wantTotal: ptr(400), wantMore: true},
		{value: "nothing", wantN: 0, wantTotal: ptr(0)},
	} {
		t.Run(tc.value, func(t *testing.T) {
			w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "completion/complete", map[string]any{
				"ref": map[string]any{"type": "ref/resource", "uri": tmpl.URITemplate}, "argument": map[string]any{"name": "x", "value": tc.value}})})
			require.Equal(t, 200, w.Code, w.Body.String())
			var res struct {
				Completion struct {
					Values  []string `json:"values"`
					Total   *int     `json:"total"`
					HasMore bool     `json:"hasMore"`
				} `json:"completion"`
			}
			require.NoError(t, json.Unmarshal(mcptest.Decode(t, w).Result, &res))
			assert.Len(t, res.Completion.Values, tc.wantN)
			assert.Equal(t, tc.wantTotal, res.Completion.Total)
			assert.Equal(t, tc.wantMore, res.Completion.HasMore)
		})
	}
}

func ptr[T any](v T) *T { return &v }
