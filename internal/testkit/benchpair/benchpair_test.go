package benchpair

import (
	"reflect"
	"testing"
	"time"
)

type recorded map[string]float64

func (r recorded) ReportMetric(n float64, unit string) { r[unit] = n }

// The metrics are named and computed as the callers' benchmarks had them:
// per-operation times of each and other/base.
func TestReport(t *testing.T) {
	got := recorded{}
	report(got, 4, "page", "first", 4*time.Microsecond, "deep", 12*time.Microsecond)
	want := recorded{"first-ns/page": 1000, "deep-ns/page": 3000, "deep/first": 3}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
