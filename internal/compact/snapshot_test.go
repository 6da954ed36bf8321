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
	"github.com/kindex/kindex/jsonpath"
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

// With Options.Spans a loaded object has the spans its decode found (a record holds none):
// without them every index function and Item.Eval would scan it until it changed.
func TestSnapshotDecodeFindsSpans(t *testing.T) {
	m := &Mode{dec: mustDecoder(t, Options{Spans: true})}
	require.True(t, m.SnapshotViews())
	for i := range 5 {
		obj, err := m.dec.DecodeObject(podJSON(t, i))
		require.NoError(t, err)
		require.NotEmpty(t, obj.Spans())
		b, ok := m.AppendSnapshot(nil, obj)
		require.True(t, ok)
		back, err := m.SnapshotDecode(b)
		require.NoError(t, err)
		o := back.(*Object)
		require.Equal(t, obj.RawJSON(), o.RawJSON())
		require.Equal(t, obj.StoreKey(), o.StoreKey())
		require.Equal(t, obj.GetUID(), o.GetUID())
		require.Equal(t, obj.GetResourceVersion(), o.GetResourceVersion())
		require.Equal(t, obj.GetLabels(), o.GetLabels())
		require.Equal(t, []uint32(obj.Spans()), []uint32(o.Spans()))
		again, ok := m.AppendSnapshot(nil, o)
		require.True(t, ok)
		require.Equal(t, b, again, "a loaded object writes the record it was loaded from")
		// A view has them too, beside it.
		view, err := m.SnapshotView(b)
		require.NoError(t, err)
		v := view.(*Object)
		require.Same(t, &b[0], &v.raw[0], "a view shares the record's bytes")
		require.Equal(t, []uint32(obj.Spans()), []uint32(v.Spans()))
		require.Equal(t, obj.StoreKey(), v.StoreKey())
		require.Equal(t, obj.GetUID(), v.GetUID())
		again, ok = m.AppendSnapshot(nil, v)
		require.True(t, ok)
		require.Equal(t, b, again, "a view writes the record it was loaded from")

		// A record of an object without spans: the load finds them.
		plain := &Mode{dec: mustDecoder(t, Options{})}
		pobj, err := plain.dec.DecodeObject(podJSON(t, i))
		require.NoError(t, err)
		require.Empty(t, pobj.Spans())
		pb, ok := plain.AppendSnapshot(nil, pobj)
		require.True(t, ok)
		require.Less(t, len(pb), len(b), "a record without spans is smaller")
		back, err = m.SnapshotDecode(pb)
		require.NoError(t, err)
		require.Equal(t, []uint32(obj.Spans()), []uint32(back.(*Object).Spans()))
		require.Equal(t, obj.RawJSON(), back.(*Object).RawJSON())
		view, err = m.SnapshotView(pb)
		require.NoError(t, err)
		require.Equal(t, []uint32(obj.Spans()), []uint32(view.(*Object).Spans()))
		require.Equal(t, obj.StoreKey(), view.(*Object).StoreKey())
		// And a mode without spans loads a record with them as it loads any other.
		view, err = plain.SnapshotView(b)
		require.NoError(t, err)
		require.Empty(t, view.(*Object).Spans())
		require.Equal(t, obj.RawJSON(), view.(*Object).RawJSON())
		require.Equal(t, obj.StoreKey(), view.(*Object).StoreKey())
		require.Equal(t, obj.GetResourceVersion(), view.(*Object).GetResourceVersion())
		for j := range b {
			_, _ = m.SnapshotDecode(b[:j]) // never panics
			_, _ = plain.SnapshotView(b[j:])
		}
	}
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
	ms := &Mode{dec: mustDecoder(f, Options{Spans: true})}
	sobj, err := ms.dec.DecodeObject(podJSON(f, 4))
	require.NoError(f, err)
	srec, _ := ms.AppendSnapshot(nil, sobj)
	f.Add(srec)
	paths := []*jsonpath.Path{jsonpath.MustCompile("{.spec.nodeName}"), jsonpath.MustCompile("{.status.conditions[0].type}")}
	f.Fuzz(func(t *testing.T, data []byte) {
		// A record's spans are the file's, checked by its checksum only: spans that do not
		// describe the JSON give unspecified values, never a panic.
		sit, err := ms.SnapshotDecode(data)
		sview, verr := ms.SnapshotView(data)
		if (err == nil) != (verr == nil) {
			t.Fatalf("decode: %v, view: %v", err, verr)
		}
		if err == nil {
			for _, p := range paths {
				a, aerr := p.Eval(sit.(*Object))
				b, berr := p.Eval(sview.(*Object))
				if (aerr == nil) != (berr == nil) || len(a) != len(b) {
					t.Fatalf("%s: decoded %v %v, view %v %v", p, a, aerr, b, berr)
				}
			}
		}
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
