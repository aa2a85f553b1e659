package mcphttp

import (
	"bytes"
	"errors"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// stringParam returns the member name of params as jsonrpc.UnmarshalParams
// decodes it into a struct field `json:"<name>"` of type *string, without
// reflection or a second decode: params must be strict JSON (else Invalid
// params); a member whose name is a case variant of name is Invalid params
// (encoding/json would take it for the field); null params or a null
// member leave the field unset (present false); a value that is not a
// string is Invalid params; empty params are absent. folded is jsonstrict.AppendFold of name.
// FuzzStringParam holds it to UnmarshalParams' answers.
func stringParam(params []byte, name, folded string) (value string, present bool, err error) {
	if len(params) == 0 {
		return "", false, nil // absent params decode into nothing
	}
	var (
		v       jsonstrict.Value
		found   bool
		variant bool
		buf     [64]byte
	)
	walkErr := jsonstrict.Options{}.Members(params, func(n []byte, mv jsonstrict.Value) bool {
		if string(n) == name {
			v, found = mv, true
		} else if string(jsonstrict.AppendFold(buf[:0], n)) == folded {
			variant = true
		}
		return true
	})
	switch {
	case walkErr != nil:
		if errors.Is(walkErr, jsonstrict.ErrKind) && bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
			return "", false, nil // null params decode into nothing
		}
		return "", false, errParamsFit()
	case variant:
		return "", false, errParamsFit()
	case !found || v.Kind() == jsonstrict.Null:
		return "", false, nil
	}
	s, ok := v.Str()
	if !ok {
		return "", false, errParamsFit()
	}
	return s, true, nil
}

// errParamsFit is UnmarshalParams' answer to params that do not fit.
func errParamsFit() error { return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params") }
