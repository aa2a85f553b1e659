// Package principal is the identity of a caller: the [Principal] value, its
// context functions and its identity keys. It is a leaf: it imports no JWT
// library and nothing else of the kit, so the inventory, the notification
// hub and a service that authenticates with middleware of its own link no
// token code at all.
//
// Principals obey one set of rules whoever makes them: [New] (and
// [NewContext], which calls it) sorts the scopes once and refuses
// identifiers that are too long or hold control characters, so that no
// consumer repairs a principal and a principal from a service's own
// middleware is held to exactly the rules of one a token verifier made.
// Every refusal matches [ErrInvalid] and names the field and the rule it
// broke. The zero Principal is refused too: it names no caller, and a
// middleware that has none leaves the request's context without one (the
// request is then anonymous), never stores an empty principal that would
// look signed in.
//
// A service's own authentication middleware:
//
//	func auth(next http.Handler) http.Handler {
//		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
//			user, ok := sessionUser(r) // the service's own
//			if !ok {
//				next.ServeHTTP(w, r) // anonymous
//				return
//			}
//			ctx, err := principal.NewContext(r.Context(), principal.Principal{
//				Subject: user.ID, Scopes: user.Scopes,
//			})
//			if err != nil {
//				http.Error(w, "unauthorized", http.StatusUnauthorized)
//				return
//			}
//			next.ServeHTTP(w, r.WithContext(ctx))
//		})
//	}
package principal
