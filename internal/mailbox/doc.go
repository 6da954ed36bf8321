// Package mailbox is kindex's one unbounded queue with a delivery goroutine: a producer
// pushes without ever blocking, and one goroutine owned by the mailbox hands the items, in
// the order they were pushed, to a deliver function, one call at a time.
//
// # Place in kindex
//
// Wherever kindex calls code it does not control (a caller's event handler, a subscriber to
// discovery events or to an informer's status) or must not hold up a producer (the informer
// core's event loop), it puts a mailbox between the two: the producer may hold its own locks
// while it pushes, and a slow consumer delays only its own mailbox. Discovery subscriptions
// use it; the informer's handler listeners, its status hub and its core's event loop are
// meant to, so that every queue of kindex unsubscribes, drains and recovers the same way.
//
// # Semantics
//
//   - Push and PushAll never block and never call deliver. After the mailbox is closed they
//     drop the items and return false.
//   - deliver is called on the mailbox's goroutine, never concurrently with itself, in push
//     order. No lock of the mailbox is held during the call, so deliver may Push to its own
//     mailbox, and may Close it.
//   - A panic in deliver is recovered: it is counted (Stats.Panics), reported to
//     Options.OnPanic with the item and the stack, and delivery goes on with the next item.
//     The process never crashes because of a consumer.
//   - Close drops what is still queued: the call of deliver in flight (or starting), if
//     any, completes, and no other call starts. Close then waits until that call has
//     returned and the goroutine has exited.
//   - CloseAndDrain refuses further pushes, delivers everything already queued, and waits
//     until the goroutine has exited. If its context ends first, it drops what is left (as
//     Close would) and returns the context's error without waiting for the call in flight.
//   - Either close, called from deliver itself, does not wait (it would wait for itself): it
//     takes effect when deliver returns (Close: nothing more is delivered; CloseAndDrain: the
//     rest is delivered, then the goroutine exits) and returns at once. Done tells when the
//     goroutine has exited. Calling a close from a goroutine that deliver then waits for
//     deadlocks, as any wait for oneself does.
//   - Stop and Drain are Close and CloseAndDrain without the wait, for a caller that must
//     not wait (one holding a lock that deliver may take); Done tells when the goroutine has
//     exited.
//   - Pause holds delivery (pushes are still queued) until Resume, for a producer that wants
//     its consumer to start later (the informer holds its handlers while it loads a snapshot,
//     so that the load has the CPU). A close ends a pause, each close in its own way.
//   - Closing is idempotent. A Close after a CloseAndDrain that is still draining drops the
//     rest and waits: Close always means "stop now". A CloseAndDrain after a Close has nothing
//     left to deliver and only waits.
//
// # Memory
//
// The queue holds what was pushed and not yet delivered, nothing else: each item is released
// (zeroed in the queue) as soon as deliver returns for it, and a burst's backing array is
// released once the burst has been delivered. Only a small array (up to 64 items) is kept
// for reuse, so that steady traffic does not allocate.
//
// # Cost
//
// One goroutine per mailbox while it is open, which exits on close; a Push is a mutex
// acquisition and an append.
package mailbox
