package discovery

import (
	"sync"
	"time"
)

// The re-discoveries that misses may cause: a burst of missRoundBurst, then one every
// missRoundEvery. Each is a full round (two requests with aggregated discovery, one per group
// version without), so a caller that sends one name after another (a user typing, a
// dashboard's search box, a script over a list of names) would otherwise make the client
// re-discover everything once per distinct name, back to back.
const (
	missRoundBurst = 5
	missRoundEvery = time.Second
)

// missBudget is a token bucket of miss-caused re-discoveries, driven by the client's clock.
type missBudget struct {
	mu     sync.Mutex
	tokens time.Duration // accumulated refill time; one round costs missRoundEvery
	last   time.Time
}

// take reports whether a miss at now may re-discover, and if so spends its token.
func (b *missBudget) take(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	const full = missRoundBurst * missRoundEvery
	if b.last.IsZero() {
		b.tokens = full
	} else if d := now.Sub(b.last); d > 0 {
		b.tokens = min(full, b.tokens+d)
	}
	b.last = now
	if b.tokens < missRoundEvery {
		return false
	}
	b.tokens -= missRoundEvery
	return true
}
