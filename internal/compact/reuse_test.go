package compact

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// A relist decoded against the cache answers unchanged items (same key, resourceVersion
// and uid) with the cached objects and allocates nothing for them; changed, new and
// re-created items are decoded; the result otherwise equals DecodeListFrom's.
func TestDecodeListFromReusingKeepsUnchangedObjects(t *testing.T) {
	const n = 200
	d, err := NewDecoder(Options{})
	require.NoError(t, err)
	body := podListBody(t, n)
	first, err := d.DecodeListFrom(bytes.NewReader(body))
	require.NoError(t, err)
	cache := map[string]*Object{}
	for _, o := range first.Items {
		cache[o.StoreKey()] = o
	}
	// Item 3 changed, item 4 was re-created (another uid), item 5 is new to the cache.
	changed, recreated, fresh := first.Items[3], first.Items[4], first.Items[5]
	cache[changed.StoreKey()] = withRV(t, d, changed, "1")
	cache[recreated.StoreKey()] = withUID(t, d, recreated, "other-uid")
	delete(cache, fresh.StoreKey())
	known := func(key string) (any, bool) {
		o, ok := cache[key]
		return o, ok
	}

	want, err := d.DecodeListFrom(bytes.NewReader(body))
	require.NoError(t, err)
	got, err := d.DecodeListFromReusing(bytes.NewReader(body), known)
	require.NoError(t, err)
	require.Equal(t, want.ListMeta, got.ListMeta)
	require.Len(t, got.Items, n)
	for i, o := range got.Items {
		require.Equal(t, string(want.Items[i].RawJSON()), string(o.RawJSON()), "item %d", i)
		cached := cache[o.StoreKey()]
		if i == 3 || i == 4 || i == 5 {
			require.NotSame(t, cached, o, "item %d changed: decoded", i)
			continue
		}
		require.Same(t, cached, o, "item %d unchanged: the cached object", i)
	}

	// Nothing is allocated for unchanged items: the relist costs its 64 KB stream buffer,
	// the item slice and the three decoded objects, a fifth of the objects' bytes at most
	// (decoding them all allocates more than their bytes).
	var size int
	for _, o := range first.Items {
		size += cap(o.raw)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = d.DecodeListFromReusing(bytes.NewReader(body), known)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(size/5), "bytes allocated by a relist of unchanged objects (objects: %d bytes)", size)
}

func withRV(t *testing.T, d *Decoder, o *Object, rv string) *Object {
	t.Helper()
	u, err := o.Unstructured()
	require.NoError(t, err)
	u.SetResourceVersion(rv)
	n, err := fromUnstructured(u, d)
	require.NoError(t, err)
	return n
}

func withUID(t *testing.T, d *Decoder, o *Object, uid string) *Object {
	t.Helper()
	u, err := o.Unstructured()
	require.NoError(t, err)
	u.SetUID(types.UID(uid))
	n, err := fromUnstructured(u, d)
	require.NoError(t, err)
	return n
}
