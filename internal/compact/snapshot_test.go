package compact

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/internal/snapshot"
)

// The mode's snapshot bytes decode back into the same object, and the identity names the
// options that change what is stored.
func TestSnapshotModeRoundTrip(t *testing.T) {
	m := &Mode{dec: mustDecoder(t, Options{})}
	obj, err := m.dec.DecodeObject(podJSON(t, 1))
	require.NoError(t, err)
	b, ok := m.AppendSnapshot(nil, obj)
	require.True(t, ok)
	back, err := m.SnapshotDecode(b)
	require.NoError(t, err)
	o := back.(*Object)
	require.Equal(t, obj.RawJSON(), o.RawJSON())
	require.Equal(t, obj.StoreKey(), o.StoreKey())
	require.Equal(t, obj.GetResourceVersion(), o.GetResourceVersion())
	require.Equal(t, obj.GetUID(), o.GetUID())
	require.Equal(t, obj.GetLabels(), o.GetLabels())
	for i := range b {
		_, _ = m.SnapshotDecode(b[:i]) // never panics
	}
	view, err := m.SnapshotView(b)
	require.NoError(t, err)
	v := view.(*Object)
	require.Equal(t, o.RawJSON(), v.RawJSON())
	require.Equal(t, o.StoreKey(), v.StoreKey())
	require.Equal(t, o.GetUID(), v.GetUID())
	require.Same(t, &b[0], &v.raw[0], "a view shares the record's bytes")
	require.NotSame(t, &b[0], &o.raw[0], "a decoded record is a copy")
	require.Equal(t, len(b)-snapshotTrailer, cap(v.raw), "the view ends with its key text")
	l := m.SnapshotList([]any{o}, "42").(*List)
	require.Equal(t, "42", l.ResourceVersion)
	require.Len(t, l.Items, 1)

	ids := map[string]bool{}
	for _, opts := range []Options{{}, {KeepManagedFields: true}, {Projection: []string{"{.spec.nodeName}"}},
		{Projection: []string{"{.spec.nodeName}", "{.status.phase}"}}, {Projection: []string{}}} {
		id := (&Mode{dec: mustDecoder(t, opts)}).SnapshotIdentity()
		require.False(t, ids[id], "identity %q repeated", id)
		ids[id] = true
	}
	a := (&Mode{dec: mustDecoder(t, Options{Projection: []string{"{.status.phase}", "{.spec.nodeName}"}})}).SnapshotIdentity()
	b2 := (&Mode{dec: mustDecoder(t, Options{Projection: []string{"{.spec.nodeName}", "{.status.phase}"}})}).SnapshotIdentity()
	require.Equal(t, a, b2, "canonical")
}

func mustDecoder(t testing.TB, o Options) *Decoder {
	d, err := NewDecoder(o)
	require.NoError(t, err)
	return d
}

// TestSnapshotCost measures writing and loading snapshots of realistic Pods (managedFields
// cut, as the mode stores them): KINDEX_SNAPSHOT_COST=100000 sets the count.
func TestSnapshotCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("KINDEX_SNAPSHOT_COST"))
	if n == 0 {
		t.Skip("set KINDEX_SNAPSHOT_COST=<objects> to measure")
	}
	m := &Mode{dec: mustDecoder(t, Options{})}
	items := make([]any, n)
	size := 0
	for i := range items {
		o, err := m.dec.DecodeObject(podJSON(t, i))
		require.NoError(t, err)
		items[i] = o
		size += len(o.RawJSON())
	}
	for _, key := range [][]byte{nil, []byte("0123456789abcdef0123456789abcdef")} {
		path := filepath.Join(t.TempDir(), "s")
		start := time.Now()
		var buf []byte
		require.NoError(t, snapshot.Write(path, snapshot.Meta{Identity: "id", ResourceVersion: "1"}, n, func(i int) []byte {
			buf, _ = m.AppendSnapshot(buf[:0], items[i])
			return buf
		}, snapshot.Options{Key: key}))
		write := time.Since(start)

		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start = time.Now()
		r, err := snapshot.Open(path, "id", snapshot.Options{Key: key})
		require.NoError(t, err)
		loaded := make([]any, 0, r.Count())
		for {
			b, err := r.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			o, err := m.SnapshotDecode(b)
			require.NoError(t, err)
			loaded = append(loaded, o)
		}
		_ = r.Close()
		load := time.Since(start)
		runtime.ReadMemStats(&after)
		fi, _ := os.Stat(path)
		t.Logf("%d pods (%.1f KB each), encrypted=%v: file %d MB; write %v (%v per 10,000); load+decode %v (%v per 100,000); allocated while loading %.2fx the objects' bytes",
			n, float64(size)/float64(n)/1024, key != nil, fi.Size()>>20, write.Round(time.Millisecond),
			(write * 10000 / time.Duration(n)).Round(time.Millisecond), load.Round(time.Millisecond),
			(load * 100000 / time.Duration(n)).Round(time.Millisecond), float64(after.TotalAlloc-before.TotalAlloc)/float64(size))
		require.Len(t, loaded, n)
	}
	_ = fmt.Sprint()
}

// FuzzSnapshotDecode: any record is an object or an error, never a panic, and an object's
// cheap getters stay within its bytes.
func FuzzSnapshotDecode(f *testing.F) {
	m := &Mode{dec: mustDecoder(f, Options{})}
	obj, err := m.dec.DecodeObject(podJSON(f, 3))
	require.NoError(f, err)
	rec, _ := m.AppendSnapshot(nil, obj)
	f.Add(rec)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		it, err := m.SnapshotDecode(data)
		view, verr := m.SnapshotView(data)
		if (err == nil) != (verr == nil) {
			t.Fatalf("decode: %v, view: %v", err, verr)
		}
		if err != nil {
			return
		}
		if string(view.(*Object).RawJSON()) != string(it.(*Object).RawJSON()) || view.(*Object).StoreKey() != it.(*Object).StoreKey() {
			t.Fatal("a view differs from the copy")
		}
		o := it.(*Object)
		_ = o.StoreKey()
		_ = o.GetNamespace()
		_ = o.GetName()
		_ = o.GetResourceVersion()
		_ = o.GetUID()
		_ = o.RawJSON()
		_ = o.GetLabels()
		_ = o.GetAnnotations()
		_ = o.GetOwnerReferences()
		_ = o.GetCreationTimestamp()
		_, _ = o.Unstructured()
	})
}
