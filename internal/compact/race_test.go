//go:build race

package compact

// raceEnabled: the race detector makes sync.Pool drop items at random, so allocation counts
// are not exact.
const raceEnabled = true
