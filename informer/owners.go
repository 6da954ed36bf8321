package informer

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/internal/store"
	"github.com/kindex/kindex/query"
)

// The owner index: the built-in owner-uid index (an object under the UID of each of its
// owners) and uid index (an object under its own UID), kept in each entry's store under the
// same keys AddBuiltinIndex uses, so a user's registration of either shares them.
const (
	ownerIndexKey = "builtin:" + indexfuncs.IndexOwnerUID
	uidIndexKey   = "builtin:" + indexfuncs.IndexUID
)

// ensureOwnerIndex registers the owner index once for the entry's life; the store backfills
// the objects it holds.
func (e *entry) ensureOwnerIndex() {
	st := e.store
	e.idx.mu.Lock()
	defer e.idx.mu.Unlock()
	if e.idx.owner || e.ctx.Err() != nil {
		return
	}
	owner, _ := indexfuncs.Builtin(indexfuncs.IndexOwnerUID)
	uid, _ := indexfuncs.Builtin(indexfuncs.IndexUID)
	// Neither can fail: both have a name and a function.
	_ = st.AddIndex(ownerIndexKey, store.IndexFunc(owner))
	_ = st.AddIndex(uidIndexKey, store.IndexFunc(uid))
	e.idx.owner = true
}

// ownerEntries turns the owner index on for the factory (lazily, on the first Dependents or
// Orphans) and returns the live entries, each with the index registered.
func (c *core) ownerEntries() []*entry {
	c.ownerIndex.Store(true)
	// An entry created from now on registers the index itself; one created before is in the
	// registry's list (creation and listing share the registry's lock).
	entries := c.reg.list()
	for _, e := range entries {
		e.ensureOwnerIndex()
	}
	return entries
}

// ownedBy returns the stored items with an owner reference to uid.
func (e *entry) ownedBy(uid types.UID) []store.Item {
	keys, err := e.store.IndexKeysIn(ownerIndexKey, string(uid), "", true)
	if err != nil {
		return nil // the index is registered before any caller gets here
	}
	out := make([]store.Item, 0, len(keys))
	for _, k := range keys {
		if item, ok, err := e.store.GetByKey(k); err == nil && ok {
			out = append(out, store.Item{Key: k, Obj: item})
		}
	}
	return out
}

// withOwners returns the stored items that have owner references; the walk stops when ctx
// ends (its error). An entry without the owner index (one stopping: ensureOwnerIndex skips
// it) has none.
func (e *entry) withOwners(ctx context.Context) ([]store.Item, error) {
	items, _, _, err := e.store.Query(ctx, query.Query{Conditions: []query.Condition{query.Has(ownerIndexKey)}}, store.QueryOptions{})
	if errors.Is(err, store.ErrIndexNotFound) {
		return nil, nil
	}
	return items, err
}

// hasUID reports whether the entry caches an object with uid, in namespace ns unless
// allNamespaces.
func (e *entry) hasUID(uid types.UID, ns string, allNamespaces bool) bool {
	keys, err := e.store.IndexKeysIn(uidIndexKey, string(uid), ns, allNamespaces)
	return err == nil && len(keys) > 0
}

// metaOf reads a stored item's metadata, through the mode's object if the item itself does
// not expose it.
func (e *entry) metaOf(item any) (metav1.Object, error) {
	if m, err := meta.Accessor(item); err == nil {
		return m, nil
	}
	obj, err := e.core.mode.Object(item)
	if err != nil {
		return nil, err
	}
	return meta.Accessor(obj)
}
