// Package benchpair reports the benchmarks of the kit's tests that time
// two things alternately in one run, a baseline and what is measured
// against it: each one's time per operation and their ratio, the figure
// that holds on a loaded machine. It is linked into tests only.
package benchpair

import (
	"testing"
	"time"
)

// Report reports base and other, each the total time of b.N operations,
// as "<baseName>-ns/<per>" and "<otherName>-ns/<per>", and other's time
// over base's as "<otherName>/<baseName>".
func Report(b *testing.B, per, baseName string, base time.Duration, otherName string, other time.Duration) {
	report(b, b.N, per, baseName, base, otherName, other)
}

// metrics is where Report's figures go: a *testing.B.
type metrics interface{ ReportMetric(n float64, unit string) }

func report(m metrics, n int, per, baseName string, base time.Duration, otherName string, other time.Duration) {
	m.ReportMetric(float64(base.Nanoseconds())/float64(n), baseName+"-ns/"+per)
	m.ReportMetric(float64(other.Nanoseconds())/float64(n), otherName+"-ns/"+per)
	m.ReportMetric(float64(other)/float64(base), otherName+"/"+baseName)
}
