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
