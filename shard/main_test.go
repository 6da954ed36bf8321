package shard

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// noPodTemplateWatchCache lets a watch of PodTemplates from a compacted resourceVersion
// fail with 410 Gone (see testenv.CompactEtcd).
const noPodTemplateWatchCache = "--watch-cache-sizes=podtemplates#0"

// gated has ShardedListAndWatch on (the server filters); plain has it off (kindex filters).
var gated, plain *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if gated, err = testenv.Start(testenv.Options{ExtraAPIServerArgs: []string{"--feature-gates=ShardedListAndWatch=true", noPodTemplateWatchCache}}); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: cannot start the test control plane: %v\n", err)
		return 1
	}
	defer gated.Stop()
	if plain, err = testenv.Start(testenv.Options{ExtraAPIServerArgs: []string{noPodTemplateWatchCache}}); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: cannot start the test control plane: %v\n", err)
		return 1
	}
	defer plain.Stop()
	return m.Run()
}

// startFactory starts a factory of newFactory on cp that stops when the test ends.
func startFactory[T informer.Object](t *testing.T, cp *testenv.ControlPlane, opts informer.Options[T],
	newFactory func(*rest.Config, informer.Options[T]) (*informer.Factory[T], error)) *informer.Factory[T] {
	t.Helper()
	opts.Logger = (&testsupport.Lines{}).Logger(0)
	f, _, _ := testsupport.StartFactory(t, cp.AdminConfig(), opts, newFactory)
	return f
}

// configMaps creates n ConfigMaps named prefix-<i> in ns and returns their UIDs.
func configMaps(t *testing.T, cp *testenv.ControlPlane, ns, prefix string, n int) []types.UID {
	t.Helper()
	cs := cp.Clientset(t)
	out := make([]types.UID, 0, n)
	for i := range n {
		cm, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + strconv.Itoa(i)},
			Data:       map[string]string{"i": strconv.Itoa(i)},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		out = append(out, cm.UID)
	}
	return out
}

// uidSet is the set of UIDs of objs.
func uidSet[T informer.Object](objs []T) map[types.UID]bool {
	out := map[types.UID]bool{}
	for _, o := range objs {
		out[o.GetUID()] = true
	}
	return out
}

// serverUIDs lists the ConfigMaps of ns from the server.
func serverUIDs(t *testing.T, cp *testenv.ControlPlane, ns string) map[types.UID]bool {
	t.Helper()
	l, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	out := map[types.UID]bool{}
	for _, cm := range l.Items {
		out[cm.UID] = true
	}
	return out
}

func within(s informer.Shard, all map[types.UID]bool) map[types.UID]bool {
	out := map[types.UID]bool{}
	for u := range all {
		if s.Matches(string(u)) {
			out[u] = true
		}
	}
	return out
}

func waitCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
