package crcache

import (
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SelectorIndexes is how many JSONPath indexes field selectors registered on the typed
// reads of gvk (tests of the bound).
func SelectorIndexes(c *Cache, gvk schema.GroupVersionKind) int {
	c.mu.Lock()
	a := c.accesses[accessKey{gvk: gvk, kind: kindTyped}]
	c.mu.Unlock()
	if a == nil {
		return 0
	}
	return a.selectorIndexes()
}

// MaxSelectorIndexes is maxSelectorIndexes.
const MaxSelectorIndexes = maxSelectorIndexes

// LoggerOf is the logger c passes to kindex.
func LoggerOf(c *Cache) logr.Logger { return c.kopts.Logger }
