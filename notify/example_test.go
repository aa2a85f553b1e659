package notify_test

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/notify"
)

func Example() {
	hub := notify.New(notify.Options{})
	defer hub.Close()

	alice := hub.Subscribe("alice") // an open stream of alice's
	defer alice.Close()
	bob := hub.Subscribe("bob")
	defer bob.Close()

	// alice's documents changed: only alice's streams hear of it.
	hub.ListChanged(context.Background(), "alice")

	select {
	case ev := <-alice.Events():
		fmt.Println("alice:", ev.Kind == notify.ListChanged)
	default:
		fmt.Println("alice: nothing")
	}
	select {
	case <-bob.Events():
		fmt.Println("bob: something")
	default:
		fmt.Println("bob: nothing")
	}
	// Output:
	// alice: true
	// bob: nothing
}

// A stream that reconnects asks what it missed after the last event it
// received; the hub's log answers for the caller's own key.
func ExampleHub_Since() {
	hub := notify.New(notify.Options{}) // a MemoryLog; share one in a fleet
	defer hub.Close()
	ctx := context.Background()

	alice := hub.Subscribe("alice")
	hub.ListChanged(ctx, "alice")
	last := (<-alice.Events()).ID
	alice.Close() // the connection drops

	hub.ResourceUpdated(ctx, "alice", "docs://documents/1")
	missed, ok, _ := hub.Since(ctx, "alice", last)
	fmt.Println(ok, len(missed), missed[0].URI)
	_, ok, _ = hub.Since(ctx, "bob", last) // alice's id means nothing for bob
	fmt.Println(ok)
	// Output:
	// true 1 docs://documents/1
	// false
}
