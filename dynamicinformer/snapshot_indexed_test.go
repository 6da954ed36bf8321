package dynamicinformer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// An informer with JSONPath indexes restarted from its snapshot answers index queries and
// Item.Eval on the loaded objects as on listed ones, for fields behind large values, before
// and after it syncs, and after a change made while it was down. (That the loaded objects
// carry their records' spans, so that such reads step over those values, is
// internal/compact's TestSnapshotDecodeFindsSpans: reads give the same values either way.)
func TestSnapshotRestartIndexedFieldsBehindLargeValues(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	cms := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	data := func(i int) map[string]string {
		d := map[string]string{"zz": fmt.Sprint("v", i)}
		for j := range 30 { // keys before zz: an object of about 1 KB that has a span
			d[fmt.Sprintf("a%02d", j)] = strings.Repeat("x", 20)
		}
		return d
	}
	for i := range 6 {
		_, err := cms.Create(ctx, toUnstructured(t, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("o", i), Labels: map[string]string{"n": fmt.Sprint(i)}}, Data: data(i)}), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir(), Indexes: map[string]string{"zz": "{.data.zz}"}}
	snapshotOnce(t, opts, "configmaps")

	// While down: o5's value changes.
	o5, err := cms.Get(ctx, "o5", metav1.GetOptions{})
	require.NoError(t, err)
	o5.Object["data"].(map[string]any)["zz"] = "changed"
	_, err = cms.Update(ctx, o5, metav1.UpdateOptions{})
	require.NoError(t, err)

	_, inf, _ := restart(t, opts, "configmaps")
	testenv.Eventually(t, 10*time.Second, inf.Queryable, "queryable from the snapshot")
	zz := jsonpath.MustCompile("{.data.zz}")
	check := func(want map[string]string) {
		t.Helper()
		for name, v := range want {
			res, err := inf.QueryItems(ctx, query.Query{Conditions: []query.Condition{query.Eq("zz", v)}})
			require.NoError(t, err)
			require.Len(t, res.Items, 1, "zz=%s", v)
			require.Equal(t, name, res.Items[0].Name())
			vs, err := res.Items[0].Eval(zz)
			require.NoError(t, err)
			require.Len(t, vs, 1)
			require.Equal(t, v, vs[0].String())
		}
	}
	before := map[string]string{}
	for i := range 5 {
		before[fmt.Sprint("o", i)] = fmt.Sprint("v", i)
	}
	check(before) // from the snapshot, whether or not the watch has caught up
	waitSync(t, inf)
	before["o5"] = "changed"
	testenv.Eventually(t, 10*time.Second, func() bool {
		res, err := inf.QueryItems(ctx, query.Query{Conditions: []query.Condition{query.Eq("zz", "changed")}})
		return err == nil && len(res.Items) == 1
	}, "the change made while down")
	check(before)
	res, err := inf.QueryItems(ctx, query.Query{Conditions: []query.Condition{query.Eq("zz", "v5")}})
	require.NoError(t, err)
	require.Empty(t, res.Items, "o5's old value")
}
