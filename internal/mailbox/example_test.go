package mailbox_test

import (
	"context"
	"fmt"

	"github.com/kindex/kindex/internal/mailbox"
)

// A subscriber's mailbox: the producer pushes without waiting for the handler; the handler
// sees the items in order on the mailbox's goroutine, and a panic in it is reported, not
// fatal. CloseAndDrain delivers what is queued before the goroutine exits.
func Example() {
	m := mailbox.New(func(s string) {
		if s == "bad" {
			panic("handler bug")
		}
		fmt.Println("got", s)
	}, mailbox.Options[string]{OnPanic: func(item string, recovered any, _ []byte) {
		fmt.Printf("handler panicked on %q: %v\n", item, recovered)
	}})
	m.Push("a")
	m.PushAll("bad", "b")
	_ = m.CloseAndDrain(context.Background())
	fmt.Println("accepted after close:", m.Push("c"))
	fmt.Printf("%+v\n", m.Stats())
	// Output:
	// got a
	// handler panicked on "bad": handler bug
	// got b
	// accepted after close: false
	// {Pending:0 Delivered:3 Dropped:1 Panics:1}
}
