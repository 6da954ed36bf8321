package metadataonly_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
)

var cp *testenv.ControlPlane

// The control plane has no watch cache for pod templates, so that a watch from a
// resourceVersion before an etcd compaction certainly gets 410 Gone
// (TestSnapshotRestartAfterCompaction).
func TestMain(m *testing.M) {
	testenv.Main(m, &cp, testenv.Options{ExtraAPIServerArgs: []string{"--watch-cache-sizes=podtemplates#0"}})
}

type fixture struct {
	f   *metadataonly.Factory
	rec *testsupport.Recorder
	log *testsupport.Lines
}

func start(t *testing.T, cfg *rest.Config, opts metadataonly.Options) *fixture {
	t.Helper()
	if cfg == nil {
		cfg = cp.AdminConfig()
	}
	f, rec, log := testsupport.StartFactory(t, cfg, opts, metadataonly.NewFactory)
	return &fixture{f: f, rec: rec, log: log}
}

func waitSync(t *testing.T, inf *metadataonly.Informer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, inf.WaitForSync(ctx))
}

func names(objs []*metav1.PartialObjectMetadata) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Name)
	}
	return out
}

func widget(group, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"size": int64(1)},
	}}
}

// must is testsupport.Must.
func must[V any](v V, err error) V { return testsupport.Must(v, err) }
