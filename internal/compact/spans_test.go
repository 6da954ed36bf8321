package compact

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/internal/testsupport/podgen"
	"github.com/kindex/kindex/jsonpath"
)

// Objects decoded with Options.Spans carry the spans of their own JSON, keep every getter
// and their key, evaluate JSONPath to the same values with and without the spans, and
// survive a snapshot round trip, spans included.
func TestObjectSpans(t *testing.T) {
	plain, err := NewDecoder(Options{})
	require.NoError(t, err)
	spanned, err := NewDecoder(Options{Spans: true})
	require.NoError(t, err)
	paths := []string{`{.spec.nodeName}`, `{.status.phase}`, `{.metadata.name}`, `{.metadata.labels}`,
		`{.spec.containers[0].image}`, `{.spec.containers[*].image}`, `{.status.conditions[?(@.type=="Ready")].status}`,
		`{.spec.volumes[1].name}`, `{.metadata.uid}`, `{.nope.nope}`}
	m := &Mode{dec: spanned}
	for i := range 30 {
		data := podJSON(t, i)
		a, err := plain.DecodeObject(data)
		require.NoError(t, err)
		b, err := spanned.DecodeObject(data)
		require.NoError(t, err)
		require.Equal(t, a.RawJSON(), b.RawJSON())
		assert.Nil(t, a.Spans())
		require.NotEmpty(t, b.Spans(), "a realistic Pod has values of 512 bytes and more")
		assert.Equal(t, jsonpath.BuildSpans(nil, b.RawJSON(), spanSize), b.Spans())
		assert.Equal(t, a.StoreKey(), b.StoreKey())
		assert.Equal(t, a.GetUID(), b.GetUID())
		assert.Equal(t, a.GetResourceVersion(), b.GetResourceVersion())
		assert.Equal(t, a.GetNamespace(), b.GetNamespace())
		assert.Equal(t, a.GetLabels(), b.GetLabels())
		assert.NotNil(t, b.JSONSource().Spans)
		assert.Nil(t, a.JSONSource().Spans)
		for _, expr := range paths {
			p := jsonpath.MustCompile(expr)
			want, werr := p.Eval(jsonpath.JSON(a.RawJSON()))
			got, gerr := p.Eval(b)
			assert.Equal(t, werr, gerr, expr)
			assert.Equal(t, want, got, expr)
		}
		rec, ok := m.AppendSnapshot(nil, b)
		require.True(t, ok)
		back, err := m.SnapshotDecode(rec)
		require.NoError(t, err)
		c := back.(*Object)
		assert.Equal(t, b.RawJSON(), c.RawJSON())
		assert.Equal(t, b.StoreKey(), c.StoreKey())
		assert.Equal(t, b.GetUID(), c.GetUID())
		assert.Equal(t, b.Spans(), c.Spans())
		testingAllocs(t, b)
	}
}

// The getters that are free stay free with spans.
func testingAllocs(t *testing.T, o *Object) {
	t.Helper()
	n := testing.AllocsPerRun(10, func() {
		_ = o.StoreKey()
		_ = o.GetUID()
		_ = o.Spans()
		_ = o.RawJSON()
	})
	assert.Zero(t, n)
}

// BenchmarkSpansPerPod reports how many spans the realistic Pods of podgen keep (stored
// form, managedFields cut) at the compact mode's span size and at 256 bytes, and their
// bytes per Pod: what Options.Spans costs in memory.
//
//	go test -run '^$' -bench SpansPerPod -benchtime 1x ./internal/compact/
func BenchmarkSpansPerPod(b *testing.B) {
	d, err := NewDecoder(Options{Spans: true})
	if err != nil {
		b.Fatal(err)
	}
	const pods = 1000
	var spans, at256 int
	for b.Loop() {
		spans, at256 = 0, 0
		for i := range pods {
			o, err := d.DecodeObject(podgen.GenPodJSON(i))
			if err != nil {
				b.Fatal(err)
			}
			spans += len(o.Spans()) / 2
			at256 += len(jsonpath.BuildSpans(nil, o.RawJSON(), 256)) / 2
		}
	}
	b.ReportMetric(float64(spans)/pods, "spans/pod")
	b.ReportMetric(float64(8*spans)/pods, "span-bytes/pod")
	b.ReportMetric(float64(at256)/pods, "spans-at-256/pod")
}
