package authn

import "github.com/mcpkit/mcpkit/internal/jsonstrict"

// The small JSON objects of a token (the JOSE header, the claims, an
// introspection response) are read with the kit's strict JSON engine,
// never with encoding/json or jwx: duplicate member names (after
// unescaping, and case variants such as "sub" and "SUB": a parser
// differential such as two "aud" members is an attack, not a convenience),
// invalid UTF-8, lone surrogate escapes and trailing data reject the
// token, and nesting and member counts are bounded.
var tokenJSON = jsonstrict.Options{MaxDepth: 32, MaxMembers: 512}
