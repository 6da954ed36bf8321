package metadataonly_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
	"github.com/kindex/kindex/query"
)

// jsonOnlyConfig is the admin config of a client whose requests accept no protobuf, so
// that the API server answers as a server without it (an aggregated API) does: JSON, whose
// list items carry the kind and apiVersion of PartialObjectMetadata.
func jsonOnlyConfig() *rest.Config {
	cfg := rest.CopyConfig(cp.AdminConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return testsupport.RoundTripFunc(func(req *http.Request) (*http.Response, error) {
			var kept []string
			for _, t := range strings.Split(req.Header.Get("Accept"), ",") {
				if !strings.HasPrefix(t, "application/vnd.kubernetes.protobuf") {
					kept = append(kept, t)
				}
			}
			req = req.Clone(req.Context())
			req.Header.Set("Accept", strings.Join(kept, ","))
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

// From a server that answers JSON, the objects of a LIST (here the relist after a 410 on a
// restart from a snapshot) came with kind PartialObjectMetadata and apiVersion
// meta.k8s.io/v1, which the list items of that JSON carry, while watched ones had their
// resource's: an index on {.kind} found only some of them. Every object has its resource's.
// Not parallel: the compaction affects every watch.
func TestJSONListedObjectsHaveTheirKind(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	pts := cp.Clientset(t).CoreV1().PodTemplates(ns)
	create := func(name string) {
		t.Helper()
		_, err := pts.Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: name},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}},
			metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for i := range 3 {
		create(fmt.Sprint("o", i))
	}
	cfg := jsonOnlyConfig()
	opts := metadataonly.Options{Namespace: ns, SnapshotDir: t.TempDir()}
	fx := start(t, cfg, opts)
	inf, err := fx.f.Informer(ctx, "podtemplates")
	require.NoError(t, err)
	waitSync(t, inf)
	for _, o := range must(inf.List(nil)) {
		assert.Equal(t, corev1.SchemeGroupVersion.WithKind("PodTemplate"), o.GroupVersionKind(), "synced: %s", o.Name)
	}
	fx.f.Shutdown()
	oldRV := must(pts.List(ctx, metav1.ListOptions{})).ResourceVersion

	testsupport.Churn(t, ctx, cp.Dynamic(t).Resource(podTemplatesGVR).Namespace(ns), "missed", "o0", "o1")
	_, err = cp.CompactEtcd(ctx)
	require.NoError(t, err)
	testenv.Eventually(t, 30*time.Second, func() bool { return testenv.WatchGone(ctx, pts.Watch, oldRV) },
		"the apiserver answers 410 for the snapshot's resourceVersion")

	fx = start(t, cfg, opts)
	inf, err = fx.f.Informer(ctx, "podtemplates")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.AddIndex("kind", "{.kind}"))
	waitSync(t, inf)
	cacheMatches(t, inf, cp.Dynamic(t).Resource(podTemplatesGVR).Namespace(ns))
	path := "/api/v1/namespaces/" + ns + "/podtemplates"
	lists, _ := fx.rec.Count(path)
	require.Equal(t, 1, lists, "one relist after the 410")
	for _, r := range fx.rec.Requests(path) {
		require.Contains(t, r.ContentType, "json", "%+v", r)
	}
	for _, o := range must(inf.List(nil)) {
		assert.Equal(t, corev1.SchemeGroupVersion.WithKind("PodTemplate"), o.GroupVersionKind(), o.Name)
	}
	assert.Equal(t, []string{ns + "/missed", ns + "/o0", ns + "/o2"}, run(t, inf, conds(query.Eq("kind", "PodTemplate"))))
}
