package dynamicinformer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

var cp *testenv.ControlPlane

// The control plane has no watch cache for pod templates (TestCompactionForcesRelist) and a
// short request timeout, which bounds a graceful apiserver shutdown while watches are open
// (TestAPIServerRestartKeepsCacheExact); the default would make it wait a minute.
func TestMain(m *testing.M) {
	testenv.Main(m, &cp, testenv.Options{ExtraAPIServerArgs: []string{
		"--watch-cache-sizes=podtemplates#0",
		"--request-timeout=5s",
	}})
}

// fixture is a started factory whose requests are recorded.
type fixture struct {
	f   *dynamicinformer.Factory
	rec *testsupport.Recorder
	log *testsupport.Lines
}

// start starts a factory for cfg (the admin when nil) that stops when the test ends.
func start(t *testing.T, cfg *rest.Config, opts dynamicinformer.Options) *fixture {
	t.Helper()
	if cfg == nil {
		cfg = cp.AdminConfig()
	}
	f, rec, log := testsupport.StartFactory(t, cfg, opts, dynamicinformer.NewFactory)
	return &fixture{f: f, rec: rec, log: log}
}

func waitSync(t *testing.T, inf *dynamicinformer.Informer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, inf.WaitForSync(ctx))
}

// nameRVs returns name -> resourceVersion.
func nameRVs[T interface {
	GetName() string
	GetResourceVersion() string
}](objs []T) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		out[o.GetName()] = o.GetResourceVersion()
	}
	return out
}

// installWidgets installs a namespaced Widget CRD (plural widgets, version v1) in a group
// of the test's own and returns the group, the CRD and the resource.
func installWidgets(t *testing.T) (string, *apiextv1.CustomResourceDefinition, schema.GroupVersionResource) {
	t.Helper()
	group := testenv.UniqueName(t) + ".kindex.test"
	crd := cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	return group, crd, schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
}

// widget is a Widget of the given CRD group.
func widget(group, name string, size int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"size": size},
	}}
}

func toUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	require.NoError(t, err)
	return &unstructured.Unstructured{Object: m}
}

// must is testsupport.Must.
func must[V any](v V, err error) V { return testsupport.Must(v, err) }
