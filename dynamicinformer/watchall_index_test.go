package dynamicinformer_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/query"
)

// "Every object with label team=a, whatever its kind": an index on a watch-all set answers
// across ConfigMaps and Secrets of a real server, each result naming its resource, and
// follows a relabelling.
func TestWatchAllIndexAcrossResources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cp.Namespace(t)
	team := "team-" + ns // a value of this run only
	cs := cp.Clientset(t).CoreV1()
	for i := range 3 {
		lbl := map[string]string{"team": []string{team, "other"}[i%2]}
		_, err := cs.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm", i), Labels: lbl}}, metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = cs.Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("s", i), Labels: lbl}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	fx := start(t, nil, dynamicinformer.Options{Namespace: ns})
	ws, err := fx.f.WatchAll(ctx, discovery.Filter{IncludeResources: []string{"configmaps", "secrets"}})
	require.NoError(t, err)
	defer ws.Stop()
	require.NoError(t, ws.AddIndex("team", "{.metadata.labels.team}"))
	require.NoError(t, ws.WaitForSync(ctx))
	byTeam := query.Query{Conditions: []query.Condition{query.Eq("team", team)}, Limit: 3}
	keys := func() []string {
		var out []string
		q := byTeam
		for {
			res, err := ws.QueryItems(ctx, q)
			require.NoError(t, err)
			for _, it := range res.Items {
				out = append(out, it.Resource.GVR.Resource+" "+it.Name())
			}
			if res.Continue == "" {
				return out
			}
			q.Continue = res.Continue
		}
	}
	assert.Equal(t, []string{"configmaps cm0", "configmaps cm2", "secrets s0", "secrets s2"}, keys())

	cm, err := cs.ConfigMaps(ns).Get(ctx, "cm1", metav1.GetOptions{})
	require.NoError(t, err)
	cm.Labels["team"] = team
	_, err = cs.ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	testenv.Eventually(t, 20*time.Second, func() bool { return len(keys()) == 5 }, "relabelled: %v", keys())
	assert.Equal(t, []string{"configmaps cm0", "configmaps cm1", "configmaps cm2", "secrets s0", "secrets s2"}, keys())
}
