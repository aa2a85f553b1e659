package jsonrpc

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeCase is one row of the decoding table. code 0 means Decode must
// succeed; then kind, method, id (raw text) and params describe the Message.
// For failures, id is the id the Message must still carry ("" for none)
// and reason, when set, a part of the rule the scanner must report.
type decodeCase struct {
	name   string
	in     string
	code   int64
	kind   Kind
	method string
	id     string
	params string
	reason string
}

// env prefixes the members every message needs.
const env = `{"jsonrpc":"2.0",`

var validCases = []decodeCase{
	{name: "request int id", in: env + `"id":1,"method":"resources/list"}`, kind: KindRequest, method: "resources/list", id: "1"},
	{name: "request string id", in: env + `"id":"abc","method":"ping"}`, kind: KindRequest, method: "ping", id: `"abc"`},
	{name: "negative id", in: env + `"id":-42,"method":"ping"}`, kind: KindRequest, method: "ping", id: "-42"},
	{name: "zero id", in: env + `"id":0,"method":"ping"}`, kind: KindRequest, method: "ping", id: "0"},
	{name: "minus zero id kept", in: env + `"id":-0,"method":"ping"}`, kind: KindRequest, method: "ping", id: "-0"},
	// A27: huge numbers are ids too, echoed exactly (never through float64).
	{name: "huge integer id", in: env + `"id":123456789012345678901234567890,"method":"ping"}`, kind: KindRequest, method: "ping", id: "123456789012345678901234567890"},
	{name: "escaped string id kept raw", in: env + `"id":"\u00e9\n","method":"ping"}`, kind: KindRequest, method: "ping", id: `"\u00e9\n"`},
	{name: "empty string id", in: env + `"id":"","method":"ping"}`, kind: KindRequest, method: "ping", id: `""`},
	{name: "surrogate pair id", in: env + `"id":"\ud83d\ude00","method":"ping"}`, kind: KindRequest, method: "ping", id: `"\ud83d\ude00"`},
	{name: "notification", in: env + `"method":"notifications/initialized"}`, kind: KindNotification, method: "notifications/initialized"},
	{name: "notification with params", in: env + `"method":"notifications/cancelled","params":{"requestId":3}}`, kind: KindNotification, method: "notifications/cancelled", params: `{"requestId":3}`},
	{name: "params object", in: env + `"id":2,"method":"resources/read","params":{"uri":"file:///a"}}`, kind: KindRequest, method: "resources/read", id: "2", params: `{"uri":"file:///a"}`},
	{name: "empty params", in: env + `"id":2,"method":"ping","params":{}}`, kind: KindRequest, method: "ping", id: "2", params: `{}`},
	{name: "members in any order", in: `{"params":{"a":[1,2,{"b":null}]},"method":"x/y","id":"q","jsonrpc":"2.0"}`, kind: KindRequest, method: "x/y", id: `"q"`, params: `{"a":[1,2,{"b":null}]}`},
	{name: "white space everywhere", in: " \t\r\n{ \"jsonrpc\" : \"2.0\" ,\n\"id\" :\t7 , \"method\" : \"ping\" , \"params\" : { } }\n ", kind: KindRequest, method: "ping", id: "7", params: "{ }"},
	{name: "escaped method", in: env + `"id":1,"method":"resources\/list"}`, kind: KindRequest, method: "resources/list", id: "1"},
	{name: "unicode method", in: env + `"id":1,"method":"x/\u00e9t\u00e9/ü"}`, kind: KindRequest, method: "x/été/ü", id: "1"},
	{name: "unknown method is fine here", in: env + `"id":1,"method":"vendor/thing"}`, kind: KindRequest, method: "vendor/thing", id: "1"},
	{name: "escaped member name is the same name", in: `{"jsonrpc":"2.0","id":1,"m\u0065thod":"ping"}`, kind: KindRequest, method: "ping", id: "1"},
	{name: "escaped jsonrpc value", in: `{"jsonrpc":"\u0032.0","id":1,"method":"ping"}`, kind: KindRequest, method: "ping", id: "1"},
	{name: "result response", in: env + `"id":5,"result":{"resources":[]}}`, kind: KindResponse, id: "5"},
	{name: "error response", in: env + `"id":"x","error":{"code":-32601,"message":"Method not found"}}`, kind: KindResponse, id: `"x"`},
	{name: "error response with null id and data", in: env + `"id":null,"error":{"code":-32700,"message":"Parse error","data":[1,"2"]}}`, kind: KindResponse},
	{name: "valid strings and numbers in params", in: env + `"id":1,"method":"m","params":{"s":"a\"\\\/\b\f\n\r\t\u0000\uFFFF","n":[0,-0.5,1e10,2E-3,1.25e+2],"u":"€😀","t":true,"f":false,"z":null}}`, kind: KindRequest, method: "m", id: "1"},
	{name: "literal U+FFFD is valid UTF-8", in: env + `"id":1,"method":"m","params":{"r":"` + "\uFFFD" + `"}}`, kind: KindRequest, method: "m", id: "1"},
	{name: "nesting at MaxDepth", in: env + `"id":1,"method":"m","params":` + nest(MaxDepth-1) + `}`, kind: KindRequest, method: "m", id: "1"},
	{name: "large object without duplicates", in: env + `"id":1,"method":"m","params":` + bigObject(200, "") + `}`, kind: KindRequest, method: "m", id: "1"},
	{name: "names that only look alike", in: env + `"id":1,"method":"m","params":{"uri":1,"uri ":2,"ur":3,"urj":4,"ürí":5,"İ":6,"i":7}}`, kind: KindRequest, method: "m", id: "1"},
}

var invalidCases = []decodeCase{
	// Parse errors: the body is not JSON.
	{name: "empty body", in: ``, code: CodeParseError},
	{name: "only white space", in: " \n\t", code: CodeParseError},
	{name: "truncated", in: env + `"id":1,"method":"ping"`, code: CodeParseError},
	{name: "truncated string", in: env + `"id":1,"method":"pi`, code: CodeParseError},
	{name: "trailing garbage", in: env + `"id":1,"method":"ping"} x`, code: CodeParseError, reason: "after"},
	{name: "two objects", in: env + `"id":1,"method":"ping"}{}`, code: CodeParseError, reason: "after"},
	{name: "trailing comma", in: env + `"id":1,"method":"ping",}`, code: CodeParseError},
	{name: "trailing comma in array", in: env + `"id":1,"method":"m","params":{"a":[1,]}}`, code: CodeParseError},
	{name: "single quotes", in: `{'jsonrpc':'2.0'}`, code: CodeParseError},
	{name: "comment", in: env + `"id":1,/*x*/"method":"ping"}`, code: CodeParseError},
	{name: "byte order mark", in: "\xef\xbb\xbf" + env + `"id":1,"method":"ping"}`, code: CodeParseError},
	{name: "leading zero", in: env + `"id":01,"method":"ping"}`, code: CodeParseError},
	{name: "plus sign", in: env + `"id":+1,"method":"ping"}`, code: CodeParseError},
	{name: "bare fraction", in: env + `"id":1.,"method":"ping"}`, code: CodeParseError},
	{name: "NaN", in: env + `"id":NaN,"method":"ping"}`, code: CodeParseError},
	{name: "bad literal", in: env + `"id":1,"method":"m","params":{"a":tru}}`, code: CodeParseError},
	{name: "raw newline in string", in: env + "\"id\":1,\"method\":\"pi\nng\"}", code: CodeParseError, reason: "control"},
	{name: "bad escape", in: env + `"id":1,"method":"p\xing"}`, code: CodeParseError, reason: "escape"},
	{name: "short unicode escape", in: env + `"id":1,"method":"p\u12"}`, code: CodeParseError, reason: "escape"},
	// A28: invalid UTF-8 and lone surrogates are rejected, never turned into U+FFFD.
	{name: "A28 invalid UTF-8 byte", in: env + "\"id\":1,\"method\":\"p\xffng\"}", code: CodeParseError, reason: "UTF-8"},
	{name: "A28 invalid UTF-8 in a name", in: env + "\"id\":1,\"method\":\"m\",\"params\":{\"\xc3\":1}}", code: CodeParseError, reason: "UTF-8"},
	{name: "A28 overlong encoding", in: env + "\"id\":1,\"method\":\"\xc0\xaf\"}", code: CodeParseError, reason: "UTF-8"},
	{name: "A28 surrogate encoded in UTF-8", in: env + "\"id\":1,\"method\":\"\xed\xa0\x80\"}", code: CodeParseError, reason: "UTF-8"},
	{name: "A28 truncated UTF-8", in: env + "\"id\":1,\"method\":\"\xe2\x82\"}", code: CodeParseError, reason: "UTF-8"},
	{name: "A28 UTF-8 outside strings", in: env + "\"id\":1,\"method\":\"m\"}\xc3\xa9", code: CodeParseError},
	{name: "A28 lone high surrogate", in: env + `"id":1,"method":"\ud800"}`, code: CodeParseError, reason: "escape"},
	{name: "A28 lone low surrogate", in: env + `"id":1,"method":"\udc00x"}`, code: CodeParseError, reason: "escape"},
	{name: "A28 high surrogate then letter", in: env + `"id":1,"method":"\ud800\u0041"}`, code: CodeParseError, reason: "escape"},
	{name: "A28 reversed pair", in: env + `"id":1,"method":"\ude00\ud83d"}`, code: CodeParseError, reason: "escape"},
	{name: "A28 lone surrogate in id", in: env + `"id":"\ud83d","method":"ping"}`, code: CodeParseError},
	{name: "A28 lone surrogate in a name", in: env + `"id":1,"method":"m","params":{"\udfff":1}}`, code: CodeParseError},
	{name: "syntax error after a broken rule is still a parse error", in: `{"Method":"x","id":1,`, code: CodeParseError},

	// Not a message object.
	{name: "A27 batch array", in: `[` + env + `"id":1,"method":"ping"}]`, code: CodeInvalidRequest, reason: "batch"},
	{name: "empty array", in: `[]`, code: CodeInvalidRequest, reason: "batch"},
	{name: "string", in: `"ping"`, code: CodeInvalidRequest, reason: "not an object"},
	{name: "number", in: `1`, code: CodeInvalidRequest, reason: "not an object"},
	{name: "null", in: `null`, code: CodeInvalidRequest, reason: "not an object"},
	{name: "empty object", in: `{}`, code: CodeInvalidRequest, reason: "jsonrpc is missing"},

	// jsonrpc member.
	{name: "jsonrpc missing", in: `{"id":1,"method":"ping"}`, code: CodeInvalidRequest, id: "1", reason: "jsonrpc is missing"},
	{name: "jsonrpc 1.0", in: `{"jsonrpc":"1.0","id":1,"method":"ping"}`, code: CodeInvalidRequest, id: "1", reason: "2.0"},
	{name: "jsonrpc number", in: `{"jsonrpc":2.0,"id":1,"method":"ping"}`, code: CodeInvalidRequest, id: "1", reason: "2.0"},
	{name: "jsonrpc with space", in: `{"jsonrpc":"2.0 ","id":1,"method":"ping"}`, code: CodeInvalidRequest, id: "1", reason: "2.0"},

	// A27 / issue 11: case variants of the envelope's members. Peers such as
	// mcp-go decode names case-insensitively, so each of these bodies means
	// something else to them: invalid, whether or not the member itself is
	// there too (then it is also a duplicate), and no id is echoed when the
	// variant is one of "id".
	{name: "A27 Method without method", in: env + `"id":1,"Method":"ping"}`, code: CodeInvalidRequest, id: "1", reason: "case variant"},
	{name: "A27 Method beside method", in: env + `"id":1,"method":"ping","Method":"resources/read"}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 METHOD without method", in: env + `"id":1,"METHOD":"ping"}`, code: CodeInvalidRequest, id: "1", reason: "case variant"},
	{name: "A27 JSONRPC", in: `{"JSONRPC":"2.0","id":1,"method":"ping"}`, code: CodeInvalidRequest, id: "1", reason: "case variant"},
	{name: "A27 Jsonrpc beside jsonrpc", in: `{"jsonrpc":"2.0","Jsonrpc":"1.0","id":1,"method":"ping"}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 long s in jsonrpc folds to it", in: `{"jſonrpc":"2.0","id":1,"method":"ping"}`, code: CodeInvalidRequest, id: "1", reason: "case variant"},
	{name: "A27 Params", in: env + `"id":1,"method":"ping","Params":{}}`, code: CodeInvalidRequest, id: "1", reason: "case variant"},
	{name: "A27 PARAMS beside params", in: env + `"id":1,"method":"resources/read","params":{"uri":"a"},"PARAMS":{"uri":"b"}}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 ID instead of id", in: env + `"ID":1,"method":"ping"}`, code: CodeInvalidRequest, reason: "case variant"},
	{name: "A27 Id beside id echoes no id", in: env + `"id":1,"Id":2,"method":"ping"}`, code: CodeInvalidRequest, reason: "duplicate"},
	{name: "A27 ID and id echo no id", in: env + `"ID":2,"id":1,"method":"ping"}`, code: CodeInvalidRequest, reason: "duplicate"},
	{name: "A27 Result", in: env + `"id":1,"Result":{}}`, code: CodeInvalidRequest, id: "1", reason: "case variant"},
	{name: "A27 RESULT beside result", in: env + `"id":1,"result":{},"RESULT":{}}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 Error", in: env + `"id":1,"Error":{"code":1,"message":"x"}}`, code: CodeInvalidRequest, id: "1", reason: "case variant"},
	{name: "A27 eRROR beside error", in: env + `"id":1,"error":{"code":1,"message":"x"},"eRROR":{}}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 escaped upper-case name", in: env + `"id":1,"\u004dethod":"ping"}`, code: CodeInvalidRequest, id: "1", reason: "case variant"},
	{name: "A27 escaped ID", in: env + `"\u0049\u0044":1,"method":"ping"}`, code: CodeInvalidRequest, reason: "case variant"},
	{name: "a name that only looks like a member", in: env + `"id":1,"method":"ping","methods":1}`, code: CodeInvalidRequest, id: "1", reason: "unknown member"},
	{name: "unknown member", in: env + `"id":1,"method":"ping","foo":1}`, code: CodeInvalidRequest, id: "1", reason: "unknown member"},
	{name: "_meta at the top level", in: env + `"id":1,"method":"ping","_meta":{}}`, code: CodeInvalidRequest, id: "1", reason: "unknown member"},
	{name: "error object members at the top level", in: env + `"id":1,"method":"ping","code":1}`, code: CodeInvalidRequest, id: "1", reason: "unknown member"},

	// A27: duplicate member names, at any depth.
	{name: "A27 method twice", in: env + `"id":1,"method":"ping","method":"resources/read"}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 escaped duplicate", in: env + `"id":1,"method":"ping","m\u0065thod":"resources/read"}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 case duplicate", in: env + `"id":1,"method":"ping","METHOD":"resources/read"}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 id twice echoes no id", in: env + `"id":1,"method":"ping","id":2}`, code: CodeInvalidRequest, reason: "duplicate"},
	{name: "A27 duplicate in params", in: env + `"id":1,"method":"resources/read","params":{"uri":"a","uri":"b"}}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 case duplicate in params", in: env + `"id":1,"method":"resources/read","params":{"uri":"a","URI":"b"}}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 escaped duplicate in params", in: env + `"id":1,"method":"resources/read","params":{"uri":"a","ur\u0069":"b"}}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 escaped case duplicate in params", in: env + `"id":1,"method":"resources/read","params":{"uri":"a","\u0055RI":"b"}}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 Kelvin sign folds like encoding/json", in: env + `"id":1,"method":"m","params":{"kind":"a","\u212aind":"b"}}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 long s folds like encoding/json", in: env + `"id":1,"method":"m","params":{"scope":"a","ſcope":"b"}}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 duplicate deep inside", in: env + `"id":1,"method":"m","params":{"_meta":{"a":[{"x":1,"y":{"k":1,"K":2}}]}}}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 duplicate in a large object", in: env + `"id":1,"method":"m","params":` + bigObject(200, "k17") + `}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 case duplicate in a large object", in: env + `"id":1,"method":"m","params":` + bigObject(200, "K150") + `}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 duplicate in the error object", in: env + `"id":1,"error":{"code":1,"message":"a","code":2}}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},
	{name: "A27 duplicate empty names", in: env + `"id":1,"method":"m","params":{"":1,"":2}}`, code: CodeInvalidRequest, id: "1", reason: "duplicate"},

	// method.
	{name: "empty method", in: env + `"id":1,"method":""}`, code: CodeInvalidRequest, id: "1", reason: "method is empty"},
	{name: "method number", in: env + `"id":1,"method":1}`, code: CodeInvalidRequest, id: "1", reason: "method is not a string"},
	{name: "method null", in: env + `"id":1,"method":null}`, code: CodeInvalidRequest, id: "1", reason: "method is not a string"},
	{name: "method object", in: env + `"id":1,"method":{"a":1}}`, code: CodeInvalidRequest, id: "1", reason: "method is not a string"},

	// params: named only.
	{name: "params array", in: env + `"id":1,"method":"m","params":[1,2]}`, code: CodeInvalidRequest, id: "1", reason: "params is not an object"},
	{name: "params string", in: env + `"id":1,"method":"m","params":"x"}`, code: CodeInvalidRequest, id: "1", reason: "params is not an object"},
	{name: "params null", in: env + `"id":1,"method":"m","params":null}`, code: CodeInvalidRequest, id: "1", reason: "params is not an object"},

	// A27: id types in requests.
	{name: "A27 null id in a request", in: env + `"id":null,"method":"ping"}`, code: CodeInvalidRequest, reason: "null"},
	{name: "A27 fraction id", in: env + `"id":1.0,"method":"ping"}`, code: CodeInvalidRequest, reason: "request id"},
	{name: "A27 exponent id", in: env + `"id":1e3,"method":"ping"}`, code: CodeInvalidRequest, reason: "request id"},
	{name: "A27 negative fraction id", in: env + `"id":-1.5,"method":"ping"}`, code: CodeInvalidRequest, reason: "request id"},
	{name: "A27 true id", in: env + `"id":true,"method":"ping"}`, code: CodeInvalidRequest, reason: "request id"},
	{name: "A27 false id", in: env + `"id":false,"method":"ping"}`, code: CodeInvalidRequest, reason: "request id"},
	{name: "A27 object id", in: env + `"id":{"a":1},"method":"ping"}`, code: CodeInvalidRequest, reason: "request id"},
	{name: "A27 array id", in: env + `"id":[1],"method":"ping"}`, code: CodeInvalidRequest, reason: "request id"},

	// Members that do not go together.
	{name: "request with result", in: env + `"id":1,"method":"m","result":{}}`, code: CodeInvalidRequest, id: "1", reason: "result or error in a request"},
	{name: "notification with error", in: env + `"method":"m","error":{"code":1,"message":"x"}}`, code: CodeInvalidRequest, reason: "result or error in a request"},
	{name: "only jsonrpc and id", in: env + `"id":1}`, code: CodeInvalidRequest, id: "1", reason: "no method, result or error"},
	{name: "result and error", in: env + `"id":1,"result":{},"error":{"code":1,"message":"x"}}`, code: CodeInvalidRequest, id: "1", reason: "both"},
	{name: "response without id", in: env + `"result":{}}`, code: CodeInvalidRequest, reason: "without id"},
	{name: "result with null id", in: env + `"id":null,"result":{}}`, code: CodeInvalidRequest, reason: "null id"},
	{name: "response with a fraction id", in: env + `"id":2.5,"result":{}}`, code: CodeInvalidRequest, reason: "response id"},
	{name: "params in a response", in: env + `"id":1,"result":{},"params":{}}`, code: CodeInvalidRequest, id: "1", reason: "params without method"},
	{name: "result not an object", in: env + `"id":1,"result":[]}`, code: CodeInvalidRequest, id: "1", reason: "result is not an object"},
	{name: "result null", in: env + `"id":1,"result":null}`, code: CodeInvalidRequest, id: "1", reason: "result is not an object"},
	{name: "error not an object", in: env + `"id":1,"error":"bad"}`, code: CodeInvalidRequest, id: "1", reason: "error is not an object"},
	{name: "error without code", in: env + `"id":1,"error":{"message":"x"}}`, code: CodeInvalidRequest, id: "1", reason: "code and message"},
	{name: "error without message", in: env + `"id":1,"error":{"code":1}}`, code: CodeInvalidRequest, id: "1", reason: "code and message"},
	{name: "error code fraction", in: env + `"id":1,"error":{"code":1.5,"message":"x"}}`, code: CodeInvalidRequest, id: "1", reason: "code"},
	{name: "error code string", in: env + `"id":1,"error":{"code":"1","message":"x"}}`, code: CodeInvalidRequest, id: "1", reason: "code"},
	{name: "error code overflows int64", in: env + `"id":1,"error":{"code":99999999999999999999,"message":"x"}}`, code: CodeInvalidRequest, id: "1", reason: "code"},
	{name: "error message number", in: env + `"id":1,"error":{"code":1,"message":2}}`, code: CodeInvalidRequest, id: "1", reason: "message"},
	{name: "error with unknown member", in: env + `"id":1,"error":{"code":1,"message":"x","Data":1}}`, code: CodeInvalidRequest, id: "1", reason: "unknown member"},

	// A27: nesting.
	{name: "A27 nesting past MaxDepth", in: env + `"id":1,"method":"m","params":` + nest(MaxDepth) + `}`, code: CodeInvalidRequest, id: "1", reason: "deep"},
	{name: "A27 10k-deep objects", in: env + `"id":"deep","method":"m","params":` + nest(10000) + `}`, code: CodeInvalidRequest, id: `"deep"`, reason: "deep"},
	{name: "A27 10k-deep arrays", in: strings.Repeat("[", 10000) + strings.Repeat("]", 10000), code: CodeInvalidRequest, reason: "deep"},
	{name: "A27 10k-deep unterminated", in: env + `"id":1,"method":"m","params":{"a":` + strings.Repeat("[", 10000), code: CodeInvalidRequest, id: "1", reason: "deep"},
}

// nest returns an object nested n levels deep: {"a":{"a":…{}…}}.
func nest(n int) string {
	return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1)
}

// bigObject returns an object with n members k0…k(n-1) and, if extra is
// set, one more member named extra at the end.
func bigObject(n int, extra string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + itoa(i) + `":` + itoa(i))
	}
	if extra != "" {
		b.WriteString(`,"` + extra + `":0`)
	}
	b.WriteByte('}')
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestDecodeValid(t *testing.T) {
	for _, tc := range validCases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.in), 0)
			require.NoError(t, err)
			assert.Equal(t, tc.kind, m.Kind, "kind")
			assert.Equal(t, tc.method, m.Method, "method")
			assert.Equal(t, tc.id, m.ID.Raw(), "id")
			if tc.params != "" {
				assert.Equal(t, tc.params, string(m.Params), "params")
			}
		})
	}
}

func TestDecodeInvalid(t *testing.T) {
	for _, tc := range invalidCases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.in), 0)
			require.Error(t, err)
			assert.ErrorIs(t, err, &Error{Code: tc.code})
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, standardMessage(tc.code), e.Message, "fixed message")
			assert.Nil(t, e.Data, "no data")
			if tc.reason != "" {
				assert.Contains(t, e.reason, tc.reason, "reason")
			}
			assert.Equal(t, tc.id, m.ID.Raw(), "echoed id")
			assert.Equal(t, KindInvalid, m.Kind)
			assert.Empty(t, m.Method)
			assert.Nil(t, m.Params)
		})
	}
}

func TestDecodeMessageParts(t *testing.T) {
	t.Run("params alias the input, capped", func(t *testing.T) {
		in := []byte(env + `"id":1,"method":"m","params":{"a":1}}`)
		m, err := Decode(in, 0)
		require.NoError(t, err)
		assert.Equal(t, `{"a":1}`, string(m.Params))
		assert.Equal(t, len(m.Params), cap(m.Params), "appending must not overwrite the input")
	})
	t.Run("absent params are nil", func(t *testing.T) {
		m, err := Decode([]byte(env+`"id":1,"method":"m"}`), 0)
		require.NoError(t, err)
		assert.Nil(t, m.Params)
		assert.Nil(t, m.Result)
		assert.Nil(t, m.Error)
	})
	t.Run("result", func(t *testing.T) {
		m, err := Decode([]byte(env+`"id":"r","result":{"x":[1]}}`), 0)
		require.NoError(t, err)
		assert.Equal(t, `{"x":[1]}`, string(m.Result))
		assert.Nil(t, m.Error)
	})
	t.Run("error with escaped message and data", func(t *testing.T) {
		m, err := Decode([]byte(env+`"id":null,"error":{"data":{"uri":"a"},"message":"not \u0066ound","code":-32002}}`), 0)
		require.NoError(t, err)
		require.NotNil(t, m.Error)
		assert.Equal(t, int64(CodeResourceNotFound), m.Error.Code)
		assert.Equal(t, "not found", m.Error.Message)
		assert.JSONEq(t, `{"uri":"a"}`, string(m.Error.Data))
		assert.True(t, m.ID.IsZero())
		assert.Nil(t, m.Result)
	})
	t.Run("error without data", func(t *testing.T) {
		m, err := Decode([]byte(env+`"id":3,"error":{"code":-1,"message":""}}`), 0)
		require.NoError(t, err)
		assert.Equal(t, int64(-1), m.Error.Code)
		assert.Nil(t, m.Error.Data)
	})
}

func TestDecodeSizeLimit(t *testing.T) {
	body := []byte(env + `"id":1,"method":"ping"}`)
	n := int64(len(body))

	_, err := Decode(body, n)
	assert.NoError(t, err, "exactly at the limit")

	_, err = Decode(body, n-1)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, n-1, tl.Limit)
	assert.NotContains(t, err.Error(), "ping", "no input in the error text")

	big := make([]byte, DefaultMaxBytes+1)
	for _, limit := range []int64{0, -1} {
		_, err = Decode(big, limit)
		require.ErrorAs(t, err, &tl, "limit %d means the default", limit)
		assert.Equal(t, int64(DefaultMaxBytes), tl.Limit)
	}
	// The limit is checked before anything else: this body is not JSON.
	_, err = DecodeBatch(big, 0)
	assert.ErrorAs(t, err, &tl)
}

// A27: deep nesting is refused early, in bounded time and memory.
func TestDecodeDeepNestingIsCheap(t *testing.T) {
	for _, body := range []string{
		strings.Repeat("[", 1<<20),
		env + `"id":1,"method":"m","params":` + strings.Repeat(`{"a":`, 1<<18),
	} {
		in := []byte(body)
		_, err := Decode(in, 8<<20)
		require.ErrorIs(t, err, &Error{Code: CodeInvalidRequest})
		allocs := testing.AllocsPerRun(10, func() { _, _ = Decode(in, 8<<20) })
		assert.LessOrEqual(t, allocs, 2.0, "the error and the id, nothing per level")
	}
}

func TestDecodeAllocations(t *testing.T) {
	in := []byte(env + `"id":42,"method":"resources/list","params":{"cursor":"abc","_meta":{"progressToken":1}}}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Decode(in, 0); err != nil {
			t.Fatal(err)
		}
	})
	assert.LessOrEqual(t, allocs, 1.0, "only the id is copied")
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindInvalid: "invalid", KindRequest: "request", KindNotification: "notification", KindResponse: "response", 99: "invalid"} {
		assert.Equal(t, want, k.String())
	}
}
