package crcache

import (
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SelectorIndexes is how many JSONPath indexes field selectors registered on gvk's
// resource (tests of the bound).
func SelectorIndexes(c *Cache, gvk schema.GroupVersionKind) int { return c.selectorIndexes(gvk) }

// MaxSelectorIndexes is maxSelectorIndexes.
const MaxSelectorIndexes = maxSelectorIndexes

// LoggerOf is the logger c passes to kindex.
func LoggerOf(c *Cache) logr.Logger { return c.kopts.Logger }

// FailAcquire makes the acquisitions of the informers of gvr's plans fail with fail's
// error while it returns one (nil: acquisitions succeed). Call it before Start.
func FailAcquire(c *Cache, gvr schema.GroupVersionResource, fail func(namespaced bool) error) {
	c.acquireFault = func(g schema.GroupVersionResource, namespaced bool) error {
		if g != gvr {
			return nil
		}
		return fail(namespaced)
	}
}
