package informer

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// runClock is the reflector's clock for one run: the real clock, except that After fires
// as soon as the run's context ends. client-go's watch-list path waits on
// clock.After(backoff) without watching the context (after a refused connection or a 429),
// which would keep a stopped run's reflector alive for up to the 30s backoff cap; with this
// clock, stopping a run ends its reflector promptly. wait() blocks until every timer
// goroutine has ended.
type runClock struct {
	clock.RealClock
	ctx context.Context
	wg  sync.WaitGroup
}

var _ clock.WithTicker = (*runClock)(nil)

func newRunClock(ctx context.Context) *runClock { return &runClock{ctx: ctx} }

func (c *runClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	if c.ctx.Err() != nil {
		ch <- time.Now()
		return ch
	}
	t := time.NewTimer(d)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case now := <-t.C:
			ch <- now
		case <-c.ctx.Done():
			t.Stop()
			ch <- time.Now()
		}
	}()
	return ch
}

func (c *runClock) wait() { c.wg.Wait() }
