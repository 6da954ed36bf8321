package crcache_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/internal/testenv"
)

// Gizmo is a custom resource with a Go type, as kubebuilder projects have; its list holds
// pointers, which some hand-written APIs do.
type Gizmo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GizmoSpec `json:"spec,omitempty"`
}

type GizmoSpec struct {
	Size   int64             `json:"size"`
	Tags   []string          `json:"tags,omitempty"`
	Extra  map[string]any    `json:"extra,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

type GizmoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []*Gizmo `json:"items"`
}

// schemeWith returns client-go's scheme with objs added as types of gv, as a project's
// scheme holds its custom resources' Go types.
func schemeWith(t *testing.T, gv schema.GroupVersion, objs ...runtime.Object) *runtime.Scheme {
	t.Helper()
	sch := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(sch))
	sch.AddKnownTypes(gv, objs...)
	metav1.AddToGroupVersion(sch, gv)
	return sch
}

func (g *Gizmo) DeepCopyObject() runtime.Object {
	out := *g
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Tags = append([]string(nil), g.Spec.Tags...)
	out.Spec.Extra = runtime.DeepCopyJSON(g.Spec.Extra)
	return &out
}

func (l *GizmoList) DeepCopyObject() runtime.Object {
	out := *l
	out.Items = make([]*Gizmo, len(l.Items))
	for i, g := range l.Items {
		out.Items[i] = g.DeepCopyObject().(*Gizmo)
	}
	return &out
}

// TestTypedCustomResource: a custom resource's Go type is decoded from the stored JSON
// (integers in free-form fields stay int64, as apimachinery decodes them), lists with pointer
// items work, and IndexField functions of the unstructured and metadata-only kinds receive
// objects of their kind.
func TestTypedCustomResource(t *testing.T) {
	group := testenv.UniqueName(t) + ".crcache.test"
	cp.InstallCRD(t, testenv.NewCRD(group, "Gizmo", "gizmos"))
	gv := schema.GroupVersion{Group: group, Version: "v1"}
	scheme := schemeWith(t, gv, &Gizmo{}, &GizmoList{})
	ns := cp.Namespace(t)
	ctx := t.Context()
	cl, err := client.New(cp.AdminConfig(), client.Options{Scheme: scheme})
	require.NoError(t, err)
	for i, size := range []int64{1, 5, 9} {
		g := &Gizmo{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: []string{"a", "b", "c"}[i]},
			Spec: GizmoSpec{Size: size, Tags: []string{"t"}, Extra: map[string]any{"n": size, "s": "x"}}}
		require.NoError(t, cl.Create(ctx, g))
	}

	c, err := crcache.NewCache(cp.AdminConfig(), cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}}, crcache.Options{})
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gv.WithKind("Gizmo"))
	require.NoError(t, c.IndexField(ctx, u, "uSize", func(o client.Object) []string {
		n, _, _ := unstructured.NestedInt64(o.(*unstructured.Unstructured).Object, "spec", "size")
		return []string{map[bool]string{true: "big", false: "small"}[n > 4]}
	}))
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gv.WithKind("Gizmo"))
	require.NoError(t, c.IndexField(ctx, m, "mName", func(o client.Object) []string {
		_ = o.(*metav1.PartialObjectMetadata)
		return []string{o.GetName()}
	}))
	run(t, c)
	require.True(t, c.WaitForCacheSync(ctx))

	var g Gizmo
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b"}, &g))
	assert.Equal(t, int64(5), g.Spec.Size)
	assert.Equal(t, int64(5), g.Spec.Extra["n"], "integers in free-form fields stay int64")
	assert.Equal(t, gv.WithKind("Gizmo"), g.GroupVersionKind())

	var all GizmoList
	require.NoError(t, c.List(ctx, &all, crcache.MustParseFields("spec.size>=5")))
	require.Len(t, all.Items, 2)
	assert.Equal(t, "b", all.Items[0].Name)
	assert.Equal(t, []string{"t"}, all.Items[1].Spec.Tags)

	ul := &unstructured.UnstructuredList{}
	ul.SetGroupVersionKind(gv.WithKind("GizmoList"))
	require.NoError(t, c.List(ctx, ul, client.MatchingFields{"uSize": "big"}))
	assert.Equal(t, []string{"b", "c"}, names(ptrs(ul.Items)))
	ml := &metav1.PartialObjectMetadataList{}
	ml.SetGroupVersionKind(gv.WithKind("GizmoList"))
	require.NoError(t, c.List(ctx, ml, client.MatchingFields{"mName": "c"}))
	assert.Equal(t, []string{"c"}, names(ptrs(ml.Items)))

	// The typed informer's handlers get the Go type.
	inf, err := c.GetInformer(ctx, &Gizmo{})
	require.NoError(t, err)
	ev := newEvents()
	_, err = inf.AddEventHandler(ev.handler())
	require.NoError(t, err)
	testenv.Eventually(t, 10*time.Second, func() bool { return ev.added(ns+"/c") != nil }, "no add")
	got, ok := ev.added(ns + "/c").(*Gizmo)
	require.True(t, ok, "%T", ev.added(ns+"/c"))
	assert.Equal(t, int64(9), got.Spec.Size)
}

// TestClusterScopedSelectors: in a cache restricted to namespaces, a cluster-scoped
// resource is cached once, with its own ByObject selector.
func TestClusterScopedSelectors(t *testing.T) {
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	var nsObj corev1.Namespace
	require.NoError(t, cl.Get(ctx, client.ObjectKey{Name: ns2}, &nsObj))
	nsObj.Labels = map[string]string{"picked": ns1}
	require.NoError(t, cl.Update(ctx, &nsObj))
	c := startCache(t, nil, cache.Options{
		DefaultNamespaces: map[string]cache.Config{ns1: {}},
		ByObject:          map[client.Object]cache.ByObject{&corev1.Namespace{}: {Label: mustSelector(t, "picked="+ns1)}},
	})
	var nss corev1.NamespaceList
	require.NoError(t, c.List(ctx, &nss))
	assert.Equal(t, []string{ns2}, names(ptrs(nss.Items)))
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "random", Name: ns2}, &corev1.Namespace{}))
	err := c.Get(ctx, client.ObjectKey{Name: ns1}, &corev1.Namespace{})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)

	_, err = crcache.NewCache(cp.AdminConfig(), cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Namespace{}: {Namespaces: map[string]cache.Config{ns1: {}}},
	}}, crcache.Options{})
	assert.ErrorContains(t, err, "not namespaced", "namespaces for a cluster-scoped type")
	var ler manager.LeaderElectionRunnable = c
	assert.False(t, ler.NeedLeaderElection())
}
