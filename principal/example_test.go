package principal_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/principal"
)

// A service's own authentication middleware: its signed-in user becomes
// the caller every piece of the kit after it uses. A request without a
// user is left anonymous (no principal), never given an empty one.
func ExampleNewContext() {
	users := map[string]string{"cookie-alice": "alice"} // the service's own sessions
	auth := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := r.Cookie("session")
			if err != nil || users[c.Value] == "" {
				next.ServeHTTP(w, r) // anonymous
				return
			}
			ctx, err := principal.NewContext(r.Context(), principal.Principal{
				Subject: users[c.Value], Scopes: []string{"notes:write", "notes:read"},
			})
			if err != nil {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
	whoami := auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := principal.FromContext(r.Context()); ok {
			fmt.Printf("%s %v (key %q)\n", p.Subject, p.Scopes, p.Key())
			return
		}
		fmt.Println("anonymous")
	}))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(&http.Cookie{Name: "session", Value: "cookie-alice"})
	whoami.ServeHTTP(httptest.NewRecorder(), r)
	whoami.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))

	// Misuse is an error that names the rule.
	_, err := principal.New(principal.Principal{Subject: "al\nice"})
	fmt.Println(errors.Is(err, principal.ErrInvalid), err)
	_, err = principal.New(principal.Principal{})
	fmt.Println(errors.Is(err, principal.ErrInvalid))
	// Output:
	// alice [notes:read notes:write] (key "alice")
	// anonymous
	// true principal: invalid principal: Subject holds a control character
	// true
}
