package budget_test

import (
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/budget"
)

func Example() {
	head := []byte(`{"jsonrpc":"2.0","id":7,"result":{"resources":`)
	tail := []byte(`}}`)
	p, err := budget.New(head, tail, budget.Limits{MaxItems: 2, MaxBytes: 200, Reserve: 40})
	if err != nil {
		panic(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		item := append([]byte(`{"name":`), budget.AppendString(nil, name)...)
		item = append(item, '}')
		if err := p.Add(item); errors.Is(err, budget.ErrFull) {
			fmt.Println("next page starts at", name)
			break
		}
	}
	out, _ := p.Finish([]byte(`,"nextCursor":"c2"`))
	fmt.Println(string(out))
	// Output:
	// next page starts at c
	// {"jsonrpc":"2.0","id":7,"result":{"resources":[{"name":"a"},{"name":"b"}],"nextCursor":"c2"}}
}
