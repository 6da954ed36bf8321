package metadataonly_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/metadataonly"
)

// Metadata-only, as a user who may read the ConfigMaps of one namespace and not the custom
// resources owning them: an owner in the forbidden resource is unknown, never dangling,
// while a ConfigMap owner gone, recreated under its name or living in another namespace is
// dangling; once the user may read the owners' resource, the answers follow the server.
func TestAuditGC52MetadataForbiddenOwnerIsUnknown(t *testing.T) {
	ctx := context.Background()
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	group := testenv.UniqueName(t) + ".kindex.test"
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	wi := cp.Dynamic(t).Resource(gvr).Namespace(ns1)
	w := must(wi.Create(ctx, widget(group, "w"), metav1.CreateOptions{}))
	cms := cp.Clientset(t).CoreV1()
	other := must(cms.ConfigMaps(ns2).Create(ctx, labeled("other", nil), metav1.CreateOptions{}))
	old := must(cms.ConfigMaps(ns1).Create(ctx, labeled("owner", nil), metav1.CreateOptions{}))
	require.NoError(t, cms.ConfigMaps(ns1).Delete(ctx, "owner", metav1.DeleteOptions{}))
	must(cms.ConfigMaps(ns1).Create(ctx, labeled("owner", nil), metav1.CreateOptions{}))
	mk := func(name string, ref metav1.OwnerReference) {
		cm := labeled(name, nil)
		cm.OwnerReferences = []metav1.OwnerReference{ref}
		must(cms.ConfigMaps(ns1).Create(ctx, cm, metav1.CreateOptions{}))
	}
	mk("by-widget", ownerRef(w, group+"/v1", "Widget"))
	mk("by-recreated", ownerRef(old, "v1", "ConfigMap"))
	mk("by-other-namespace", ownerRef(other, "v1", "ConfigMap"))

	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	cp.Grant(t, user, ns1, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}})
	fx := start(t, cfg, metadataonly.Options{Namespace: ns1, OwnerIndex: true})
	wa, err := fx.f.WatchAll(ctx, discovery.Filter{IncludeResources: []string{"configmaps", "widgets." + group}})
	require.NoError(t, err)
	defer wa.Stop()

	got := func() (map[string]string, error) {
		orphans, err := fx.f.Orphans(ctx)
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for _, o := range orphans {
			s := fmt.Sprintf("orphaned=%v d=%d u=%d", o.Orphaned(), len(o.Dangling), len(o.Unknown))
			for _, u := range o.Unknown {
				if !errors.Is(u.Err, informer.ErrOwnerNotCached) {
					s += " " + u.Err.Error()
				}
			}
			out[o.Object.Name] = s
		}
		return out, nil
	}
	await := func(want map[string]string) {
		t.Helper()
		var last map[string]string
		testenv.EventuallyWith(t, follow, func() bool {
			g, err := got()
			require.NoError(t, err)
			last = g
			return fmt.Sprint(g) == fmt.Sprint(want)
		}, func() string { return fmt.Sprintf("got %v want %v", last, want) })
	}
	await(map[string]string{
		"by-widget":          "orphaned=false d=0 u=1",
		"by-recreated":       "orphaned=true d=1 u=0",
		"by-other-namespace": "orphaned=true d=1 u=0",
	})
	// Still unknown a while later: the widgets informer stays parked on the 403.
	g, err := got()
	require.NoError(t, err)
	require.Equal(t, "orphaned=false d=0 u=1", g["by-widget"])

	cp.Grant(t, user, ns1, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{"widgets"}, Verbs: []string{"get", "list", "watch"}})
	await(map[string]string{
		"by-recreated":       "orphaned=true d=1 u=0",
		"by-other-namespace": "orphaned=true d=1 u=0",
	})
	ds, err := fx.f.Dependents(ctx, w.GetUID())
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, "by-widget", ds[0].Object.Name)
	require.NoError(t, wi.Delete(ctx, "w", metav1.DeleteOptions{}))
	await(map[string]string{
		"by-widget":          "orphaned=true d=1 u=0",
		"by-recreated":       "orphaned=true d=1 u=0",
		"by-other-namespace": "orphaned=true d=1 u=0",
	})
}
