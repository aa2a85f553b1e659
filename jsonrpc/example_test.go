package jsonrpc_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

func ExampleDecode() {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"docs://a"}}`)
	msg, err := jsonrpc.Decode(body, 1<<20)
	if err != nil {
		// Answer with AppendError(nil, msg.ID, …): msg.ID is set when it could be read.
		return
	}
	fmt.Println(msg.Kind, msg.Method, msg.ID.Raw(), string(msg.Params))
	// Output: request resources/read 7 {"uri":"docs://a"}
}

func ExampleDecode_invalid() {
	// A27: "Method" is not "method"; the id can still be echoed.
	msg, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":"r1","Method":"ping"}`), 0)
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		fmt.Println(rpcErr.Code == jsonrpc.CodeInvalidRequest)
		fmt.Println(string(jsonrpc.AppendError(nil, msg.ID, rpcErr)))
	}

	// A body over the limit.
	_, err = jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","method":"ping"}`), 8)
	var tooLarge *jsonrpc.TooLargeError
	fmt.Println(errors.As(err, &tooLarge), tooLarge.Limit)
	// Output:
	// true
	// {"jsonrpc":"2.0","id":"r1","error":{"code":-32600,"message":"Invalid Request"}}
	// true 8
}

func ExampleDecodeBatch() {
	body := []byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":""}]`)
	if !jsonrpc.IsBatch(body) {
		return
	}
	items, err := jsonrpc.DecodeBatch(body, 0)
	if err != nil {
		return
	}
	for _, it := range items {
		fmt.Println(it.Message.ID.Raw(), it.Message.Method, it.Err)
	}
	// Output:
	// 1 ping <nil>
	// 2  jsonrpc: error -32600: Invalid Request
}

func ExampleIsBatch() {
	fmt.Println(jsonrpc.IsBatch([]byte(` [{"jsonrpc":"2.0","method":"ping","id":1}]`)))
	fmt.Println(jsonrpc.IsBatch([]byte(`{"jsonrpc":"2.0","method":"ping","id":1}`)))
	// Output:
	// true
	// false
}

func ExampleResultEnvelope() {
	head, tail := jsonrpc.ResultEnvelope(jsonrpc.Int64ID(3))
	os.Stdout.Write(head)
	os.Stdout.WriteString(`{"resources":[]}`) // e.g. streamed by a page assembler
	os.Stdout.Write(tail)
	// Output: {"jsonrpc":"2.0","id":3,"result":{"resources":[]}}
}

func ExampleAppendResult() {
	msg, _ := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`), 0)
	fmt.Println(string(jsonrpc.AppendResult(nil, msg.ID, json.RawMessage(`{}`))))
	// Output: {"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}
}

func ExampleAppendError() {
	e := jsonrpc.NewError(jsonrpc.CodeResourceNotFound, "Resource not found").
		WithData(map[string]string{"uri": "docs://missing"})
	fmt.Println(string(jsonrpc.AppendError(nil, jsonrpc.StringID("r9"), e)))
	fmt.Println(string(jsonrpc.AppendError(nil, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeParseError, "Parse error"))))
	// Output:
	// {"jsonrpc":"2.0","id":"r9","error":{"code":-32002,"message":"Resource not found","data":{"uri":"docs://missing"}}}
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}
}

func ExampleError_Is() {
	var err error = jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found")
	err = fmt.Errorf("routing: %w", err)
	fmt.Println(errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}))
	fmt.Println(errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}))
	// Output:
	// true
	// false
}

func ExampleError_WithData() {
	e := jsonrpc.NewError(jsonrpc.CodeUnsupportedProtocolVersion, "Unsupported protocol version").
		WithData(map[string]any{"supported": []string{"2026-07-28"}, "requested": "2024-01-01"})
	b, _ := json.Marshal(e)
	fmt.Println(string(b))
	// Output: {"code":-32022,"message":"Unsupported protocol version","data":{"requested":"2024-01-01","supported":["2026-07-28"]}}
}

func ExampleStringID() {
	fmt.Println(jsonrpc.StringID("é\n").Raw(), jsonrpc.Int64ID(-5).Raw(), jsonrpc.ID{}.IsZero())
	b, _ := json.Marshal([]jsonrpc.ID{jsonrpc.StringID("a"), jsonrpc.Int64ID(1), {}})
	fmt.Println(string(b))
	// Output:
	// "é\n" -5 true
	// ["a",1,null]
}
