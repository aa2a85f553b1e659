package pgnotify_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcpkit/mcpkit/examples/documents/pgnotify"
	"github.com/mcpkit/mcpkit/notify"
)

// A hub whose events travel through PostgreSQL, so that every instance
// sharing the database notifies the streams it holds. pgxpool connects on
// first use: nothing here needs a running server.
func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@db.internal/app")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close() // after the hub's Close

	broker, err := pgnotify.New(pool, pgnotify.Options{Channel: "documents_notify"})
	if err != nil {
		fmt.Println(err)
		return
	}
	hub := notify.New(notify.Options{Broker: broker})
	defer hub.Close() // stops the listener
	fmt.Println("channel:", broker.Channel())
	// Output: channel: documents_notify
}

func ExampleValidChannel() {
	for _, name := range []string{"mcpkit_notify", "Mcpkit-Notify", "1st"} {
		fmt.Println(name, pgnotify.ValidChannel(name))
	}
	// Output:
	// mcpkit_notify true
	// Mcpkit-Notify false
	// 1st false
}
