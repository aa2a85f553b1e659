package otelmcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpkit/mcpkit/internal/nilness/nilnesstest"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/otelmcp"
)

// somePropagator is a user's propagator type, for its typed nil.
type somePropagator struct{ propagation.TextMapPropagator }

// Misuse is an error, never a panic (issue 35): the module's option
// struct, walked field by field with typed nils, is refused by New or
// works through an endpoint's request.
func TestEveryOptionStructOfTheModule(t *testing.T) {
	cases := []nilnesstest.Case{{Options: otelmcp.Options{}, Build: func(t *testing.T, o any) error {
		obs, err := otelmcp.New(o.(otelmcp.Options))
		if err != nil {
			return err
		}
		inv, err := inventory.New([]inventory.Resource{{URI: "info://about", Name: "about", Access: inventory.Public,
			Read: func(context.Context, inventory.ReadRequest) ([]inventory.Contents, error) {
				return []inventory.Contents{{URI: "info://about", Text: "hi"}}, nil
			}}}, nil, inventory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ep, err := mcphttp.New(inv, mcphttp.Options{}, mcphttp.Observe(obs))
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		ep.ServeHTTP(httptest.NewRecorder(), r)
		return nil
	}}}
	nilnesstest.Covers(t, nilnesstest.OptionStructs(t, "."), cases)
	pool := []any{(*sdktrace.TracerProvider)(nil), (*sdkmetric.MeterProvider)(nil), (*somePropagator)(nil)}
	nilnesstest.Walk(t, "github.com/mcpkit/mcpkit/mcphttp/otelmcp", pool, cases)
}
