package nilness

import (
	"context"
	"errors"
	"io"
	"testing"
)

type stringer struct{}

func (*stringer) String() string { return "" }

type fn func()

func (fn) Close() error { return nil }

func TestIsTypedValues(t *testing.T) {
	var nilStringer *stringer
	var nilCloser io.Closer
	for _, tc := range []struct {
		name string
		v    any
		want bool
	}{
		{"nil", nil, true},
		{"nil interface variable", nilCloser, true},
		{"nil pointer", nilStringer, true},
		{"nil function", fn(nil), true},
		{"nil map", map[string]int(nil), true},
		{"nil slice", []int(nil), true},
		{"nil channel", (chan int)(nil), true},
		{"pointer", &stringer{}, false},
		{"function", fn(func() {}), false},
		{"empty map", map[string]int{}, false},
		{"struct", struct{}{}, false},
		{"int zero", 0, false},
		{"error value", errors.New("x"), false},
		{"context", context.Background(), false},
	} {
		if got := Is(tc.v); got != tc.want {
			t.Errorf("%s: Is = %v, want %v", tc.name, got, tc.want)
		}
	}
}
