package jsonrpc

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeBatch(t *testing.T) {
	t.Run("each element gets its own item", func(t *testing.T) {
		in := `[` + env + `"id":1,"method":"resources/list"},
			` + env + `"method":"notifications/initialized"},
			` + env + `"id":"x","Method":"ping"},
			42,
			[1],
			` + env + `"id":2,"result":{}},
			` + env + `"id":3,"method":"m","params":{"a":1,"A":2}}
		]`
		items, err := DecodeBatch([]byte(in), 0)
		require.NoError(t, err)
		require.Len(t, items, 7)

		assert.NoError(t, items[0].Err)
		assert.Equal(t, KindRequest, items[0].Message.Kind)
		assert.Equal(t, "resources/list", items[0].Message.Method)
		assert.Equal(t, "1", items[0].Message.ID.Raw())

		assert.NoError(t, items[1].Err)
		assert.Equal(t, KindNotification, items[1].Message.Kind)

		assert.ErrorIs(t, items[2].Err, &Error{Code: CodeInvalidRequest}, "case variant")
		assert.Equal(t, `"x"`, items[2].Message.ID.Raw(), "the id is still echoed")

		assert.ErrorIs(t, items[3].Err, &Error{Code: CodeInvalidRequest}, "not an object")
		assert.ErrorIs(t, items[4].Err, &Error{Code: CodeInvalidRequest}, "nested batch")

		assert.NoError(t, items[5].Err)
		assert.Equal(t, KindResponse, items[5].Message.Kind)

		assert.ErrorIs(t, items[6].Err, &Error{Code: CodeInvalidRequest}, "A27 duplicate")
		assert.Equal(t, "3", items[6].Message.ID.Raw())
	})

	t.Run("same rules as Decode", func(t *testing.T) {
		for _, tc := range append(append([]decodeCase{}, validCases...), invalidCases...) {
			if !strings.HasPrefix(strings.TrimSpace(tc.in), "{") || tc.code == CodeParseError {
				continue
			}
			items, err := DecodeBatch([]byte("["+tc.in+"]"), 0)
			if strings.Contains(tc.reason, "deep") {
				assert.ErrorIs(t, err, &Error{Code: CodeInvalidRequest}, tc.name)
				continue
			}
			require.NoError(t, err, tc.name)
			require.Len(t, items, 1, tc.name)
			m, derr := Decode([]byte(tc.in), 0)
			assert.Equal(t, m, items[0].Message, tc.name)
			if tc.code == 0 {
				assert.NoError(t, items[0].Err, tc.name)
			} else {
				assert.ErrorIs(t, items[0].Err, &Error{Code: tc.code}, tc.name)
				assert.Equal(t, derr, items[0].Err, tc.name)
			}
		}
	})

	one := env + `"id":1,"method":"ping"}`
	for _, tc := range []struct {
		name string
		in   string
		code int64
	}{
		{"empty batch", ` [ ] `, CodeInvalidRequest},
		{"not an array", one, CodeInvalidRequest},
		{"not an array, not JSON", `{"a":`, CodeParseError},
		{"empty body", ``, CodeParseError},
		{"unterminated", `[` + one, CodeParseError},
		{"trailing comma", `[` + one + `,]`, CodeParseError},
		{"trailing bytes", `[` + one + `] x`, CodeParseError},
		{"trailing bytes after empty", `[] x`, CodeParseError},
		{"missing comma", `[` + one + one + `]`, CodeParseError},
		{"A28 invalid UTF-8 in one element", `[` + one + ",\"\xff\"]", CodeParseError},
		{"too many elements", `[` + strings.Repeat(one+",", MaxBatch) + one + `]`, CodeInvalidRequest},
		{"too many elements, not JSON", `[` + strings.Repeat(one+",", MaxBatch) + `{]`, CodeParseError},
		{"A27 deep element", `[` + one + `,` + strings.Repeat("[", 10000) + `]`, CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, err := DecodeBatch([]byte(tc.in), 0)
			assert.ErrorIs(t, err, &Error{Code: tc.code})
			assert.Nil(t, items)
		})
	}

	t.Run("MaxBatch elements", func(t *testing.T) {
		items, err := DecodeBatch([]byte(`[`+strings.Repeat(one+",", MaxBatch-1)+one+`]`), 0)
		require.NoError(t, err)
		assert.Len(t, items, MaxBatch)
	})

	t.Run("size limit", func(t *testing.T) {
		_, err := DecodeBatch([]byte(`[`+one+`]`), 10)
		var tl *TooLargeError
		require.ErrorAs(t, err, &tl)
		assert.Equal(t, int64(10), tl.Limit)
	})
}

func TestIsBatch(t *testing.T) {
	for in, want := range map[string]bool{
		`[]`: true, " \t\r\n[": true, `{}`: false, ``: false, `  `: false, `x[`: false, "\xef\xbb\xbf[": false,
	} {
		assert.Equal(t, want, IsBatch([]byte(in)), "%q", in)
	}
}
