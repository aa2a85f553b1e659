package nilness

import (
	"net/http"
	"testing"
)

func TestIs(t *testing.T) {
	var mux *http.ServeMux
	var h http.Handler = mux
	var f http.HandlerFunc
	cases := []struct {
		name string
		v    any
		want bool
	}{
		{"nil", nil, true},
		{"typed nil pointer", h, true},
		{"typed nil func", http.Handler(f), true},
		{"nil map", map[string]int(nil), true},
		{"pointer", http.NewServeMux(), false},
		{"struct value", struct{}{}, false},
		{"func", http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), false},
		{"int", 0, false},
	}
	for _, c := range cases {
		if got := Is(c.v); got != c.want {
			t.Errorf("%s: Is = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRefuse(t *testing.T) {
	var mux *http.ServeMux
	if err := Refuse("authn", "Options.Handler", http.Handler(mux)); err == nil || err.Error() != "authn: Options.Handler is a nil *http.ServeMux" {
		t.Errorf("typed nil: Refuse = %v", err)
	}
	if err := Refuse("authn", "Options.Handler", nil); err != nil {
		t.Errorf("nil: Refuse = %v, want nil", err)
	}
	if err := Refuse("authn", "Options.Handler", http.NewServeMux()); err != nil {
		t.Errorf("a value: Refuse = %v, want nil", err)
	}
}
