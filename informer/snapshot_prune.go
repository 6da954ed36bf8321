package informer

import (
	"context"
	"time"

	"github.com/kindex/kindex/internal/snapshot"
)

// pruneSnapshots removes the files of SnapshotDir that no entry of the factory uses and
// that were not written for Options.SnapshotRetention (snapshot.Prune). It logs what it
// removed, and a failure once until the failure changes; lastErr is the previous failure.
func (c *core) pruneSnapshots(lastErr string) string {
	cfg := c.opts.snapshot
	live := map[string]bool{}
	for _, e := range c.reg.all() {
		if e.snap != nil {
			live[e.snap.path] = true
		}
	}
	removed, err := snapshot.Prune(cfg.dir, time.Now().Add(-cfg.retention), func(path string) bool { return live[path] })
	if len(removed) > 0 {
		c.logger.Info("Removed snapshot files not written for SnapshotRetention", "retention", cfg.retention.String(), "files", removed)
	}
	if err == nil {
		return ""
	}
	if msg := err.Error(); msg != lastErr {
		c.logger.Info("Cannot prune SnapshotDir; retrying, logged again only if the failure changes", "dir", cfg.dir, "err", msg)
		return msg
	}
	return lastErr
}

// followContext waits for the factory's context to end; with Options.SnapshotRetention it
// prunes SnapshotDir every retention/2, at most every hour, meanwhile (Start pruned first).
func (c *core) followContext(ctx context.Context, lastErr string) {
	cfg := c.opts.snapshot
	if cfg == nil || cfg.retention == 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(min(cfg.retention/2, time.Hour))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			lastErr = c.pruneSnapshots(lastErr)
		}
	}
}
