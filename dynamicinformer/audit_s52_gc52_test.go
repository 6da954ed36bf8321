package dynamicinformer_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/internal/testenv"
)

// gc52Server is a fresh LIST of what the owner references of the test can name.
type gc52Server struct {
	cms        []corev1.ConfigMap // of the test's namespaces
	roles      []rbacv1.ClusterRole
	namespaces map[types.UID]bool
	configmaps map[string]bool // ns/uid
	widgets    map[string]bool // ns/uid
	allRoles   map[types.UID]bool
	gadgets    map[string]bool // ns/uid; nil when the kind is not served
	goneGroup  string
}

func gc52List(t *testing.T, ctx context.Context, gvr schema.GroupVersionResource, gone string, nss []string, prefix string) gc52Server {
	cs := cp.Clientset(t)
	s := gc52Server{namespaces: map[types.UID]bool{}, configmaps: map[string]bool{}, widgets: map[string]bool{}, allRoles: map[types.UID]bool{}}
	for _, ns := range nss {
		cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, cm := range cms.Items {
			s.cms = append(s.cms, cm)
			s.configmaps[ns+"/"+string(cm.UID)] = true
		}
		ws, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, w := range ws.Items {
			s.widgets[ns+"/"+string(w.GetUID())] = true
		}
	}
	nsl, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, n := range nsl.Items {
		s.namespaces[n.UID] = true
	}
	crs, err := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, r := range crs.Items {
		s.allRoles[r.UID] = true
		if strings.HasPrefix(r.Name, prefix) {
			s.roles = append(s.roles, r)
		}
	}
	s.goneGroup = gone
	gl, err := cp.Dynamic(t).Resource(schema.GroupVersionResource{Group: gone, Version: "v1", Resource: "gadgets"}).List(ctx, metav1.ListOptions{})
	if err == nil {
		s.gadgets = map[string]bool{}
		for _, g := range gl.Items {
			s.gadgets[g.GetNamespace()+"/"+string(g.GetUID())] = true
		}
	}
	return s
}

// classify applies the garbage collector's rules: "" (an owner exists, or no owner
// reference), or "orphaned d=N u=M" / "unknown d=N u=M".
func (s gc52Server) classify(group, ns string, refs []metav1.OwnerReference) string {
	if len(refs) == 0 {
		return ""
	}
	d, u := 0, 0
	for _, ref := range refs {
		var present, known, namespaced bool
		switch {
		case ref.APIVersion == "v1" && ref.Kind == "ConfigMap":
			known, namespaced = true, true
			present = s.configmaps[ns+"/"+string(ref.UID)]
		case ref.APIVersion == "v1" && ref.Kind == "Namespace":
			known = true
			present = s.namespaces[ref.UID]
		case ref.APIVersion == "rbac.authorization.k8s.io/v1" && ref.Kind == "ClusterRole":
			known = true
			present = s.allRoles[ref.UID]
		case ref.APIVersion == s.goneGroup+"/v1" && ref.Kind == "Gadget" && s.gadgets != nil:
			known, namespaced = true, true
			present = s.gadgets[ns+"/"+string(ref.UID)]
		case (ref.APIVersion == group+"/v1" || ref.APIVersion == group+"/v2") && ref.Kind == "Widget":
			known, namespaced = true, true
			present = s.widgets[ns+"/"+string(ref.UID)]
		}
		switch {
		case !known || (namespaced && ns == ""):
			u++
		case present:
			return ""
		default:
			d++
		}
	}
	state := "unknown"
	if u == 0 {
		state = "orphaned"
	}
	return fmt.Sprintf("%s d=%d u=%d", state, d, u)
}

func (s gc52Server) want(group string) map[string]string {
	out := map[string]string{}
	for _, cm := range s.cms {
		if c := s.classify(group, cm.Namespace, cm.OwnerReferences); c != "" {
			out["configmaps "+cm.Namespace+"/"+cm.Name] = c
		}
	}
	for _, r := range s.roles {
		if c := s.classify(group, "", r.OwnerReferences); c != "" {
			out["clusterroles /"+r.Name] = c
		}
	}
	return out
}

func (s gc52Server) dependents(uid types.UID) []string {
	out := []string{}
	for _, cm := range s.cms {
		for _, r := range cm.OwnerReferences {
			if r.UID == uid {
				out = append(out, "configmaps "+cm.Namespace+"/"+cm.Name)
				break
			}
		}
	}
	for _, cr := range s.roles {
		for _, r := range cr.OwnerReferences {
			if r.UID == uid {
				out = append(out, "clusterroles /"+cr.Name)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

func gc52Got(ctx context.Context, f *dynamicinformer.Factory, nss []string, prefix string) (map[string]string, error) {
	orphans, err := f.Orphans(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, o := range orphans {
		ns := o.Object.GetNamespace()
		mine := (ns == "" && strings.HasPrefix(o.Object.GetName(), prefix)) || (ns != "" && (ns == nss[0] || ns == nss[1]))
		if !mine {
			continue
		}
		state := "unknown"
		if o.Orphaned() {
			state = "orphaned"
		}
		out[o.Resource.GVR.Resource+" "+ns+"/"+o.Object.GetName()] = fmt.Sprintf("%s d=%d u=%d", state, len(o.Dangling), len(o.Unknown))
	}
	return out, nil
}

// Orphans and Dependents against the garbage collector's rules, on objects whose owners
// were recreated (same name, new UID), live in another namespace, are cluster-scoped, are of
// a kind no server serves or a resource not cached, are cited twice or at another version,
// and through foreground deletion, removal of owner references, recreation and a CRD's
// deletion; every answer compared with one computed from a fresh LIST, in every mode.
func TestAuditGC52OrphansFollowGCRules(t *testing.T) {
	ctx := context.Background()
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	nss := []string{ns1, ns2}
	prefix := testenv.UniqueName(t) + "-"
	group := testenv.UniqueName(t) + ".kindex.test"
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets", "v1", "v2"))
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	gone := "g" + testenv.UniqueName(t) + ".kindex.test"
	goneCRD := cp.InstallCRD(t, testenv.NewCRD(gone, "Gadget", "gadgets"))
	cs := cp.Clientset(t)
	cms := func(ns string) interface {
		Create(context.Context, *corev1.ConfigMap, metav1.CreateOptions) (*corev1.ConfigMap, error)
	} {
		return cs.CoreV1().ConfigMaps(ns)
	}
	mkCM := func(ns, name string, refs ...metav1.OwnerReference) *corev1.ConfigMap {
		cm := configMap(name, "x", nil)
		cm.OwnerReferences = refs
		return must(cms(ns).Create(ctx, cm, metav1.CreateOptions{}))
	}
	wi := cp.Dynamic(t).Resource(gvr).Namespace(ns1)
	owner := mkCM(ns1, "owner")
	other := mkCM(ns2, "other")
	old := mkCM(ns1, "recreated")
	require.NoError(t, cs.CoreV1().ConfigMaps(ns1).Delete(ctx, "recreated", metav1.DeleteOptions{}))
	mkCM(ns1, "recreated")
	nsObj := must(cs.CoreV1().Namespaces().Get(ctx, ns2, metav1.GetOptions{}))
	w := must(wi.Create(ctx, widget(group, "w", 1), metav1.CreateOptions{}))
	fg := must(wi.Create(ctx, widget(group, "fg", 1), metav1.CreateOptions{}))
	gad := must(cp.Dynamic(t).Resource(schema.GroupVersionResource{Group: gone, Version: "v1", Resource: "gadgets"}).Namespace(ns1).Create(ctx,
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": gone + "/v1", "kind": "Gadget", "metadata": map[string]any{"name": "gad"}}}, metav1.CreateOptions{}))
	role := must(cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: prefix + "role"}}, metav1.CreateOptions{}))
	t.Cleanup(func() { _ = cs.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{}) })
	fake := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "nobody", UID: "0b5e3c1e-0000-4000-8000-0000000000aa"}

	mkCM(ns1, "dangling-recreated", ownerRef(old, "v1", "ConfigMap"))
	mkCM(ns1, "cross-namespace", ownerRef(other, "v1", "ConfigMap"))
	mkCM(ns1, "by-namespace", ownerRef(nsObj, "v1", "Namespace"))
	mkCM(ns1, "by-gone-namespace", metav1.OwnerReference{APIVersion: "v1", Kind: "Namespace", Name: "gone", UID: "0b5e3c1e-0000-4000-8000-0000000000bb"})
	mkCM(ns1, "by-clusterrole", ownerRef(role, "rbac.authorization.k8s.io/v1", "ClusterRole"))
	mkCM(ns1, "by-unserved-kind", metav1.OwnerReference{APIVersion: "nothere.kindex.test/v1", Kind: "Thing", Name: "t", UID: "0b5e3c1e-0000-4000-8000-0000000000cc"})
	mkCM(ns1, "by-uncached", metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "0b5e3c1e-0000-4000-8000-0000000000dd"})
	mkCM(ns1, "by-old-version", metav1.OwnerReference{APIVersion: "apps/v1beta1", Kind: "Deployment", Name: "d", UID: "0b5e3c1e-0000-4000-8000-0000000000ee"})
	mkCM(ns1, "one-of-two", fake, ownerRef(owner, "v1", "ConfigMap"))
	mkCM(ns1, "duplicate", fake, fake)
	mkCM(ns1, "by-lowercase-kind", metav1.OwnerReference{APIVersion: "v1", Kind: "configmap", Name: "nobody", UID: "0b5e3c1e-0000-4000-8000-0000000000ff"})
	mkCM(ns1, "by-widget-v2", ownerRef(w, group+"/v2", "Widget"))
	mkCM(ns1, "by-widget", ownerRef(w, group+"/v1", "Widget"))
	mkCM(ns1, "fg-dep", ownerRef(fg, group+"/v1", "Widget"))
	mkCM(ns1, "by-gadget", ownerRef(gad, gone+"/v1", "Gadget"))
	mkCM(ns2, "by-namespace-elsewhere", ownerRef(owner, "v1", "ConfigMap"))
	must(cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: prefix + "by-configmap",
		OwnerReferences: []metav1.OwnerReference{ownerRef(owner, "v1", "ConfigMap")}}}, metav1.CreateOptions{}))
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoles().Delete(context.Background(), prefix+"by-configmap", metav1.DeleteOptions{})
	})

	var factories []*dynamicinformer.Factory
	for _, m := range s52Modes[:2] {
		f := m.start(t, nil, dynamicinformer.Options{})
		for _, r := range []string{"configmaps", "namespaces", "clusterroles", "widgets." + group, "gadgets." + gone} {
			inf, err := f.Informer(ctx, r)
			require.NoError(t, err)
			t.Cleanup(inf.Release)
		}
		wctx, cancel := context.WithTimeout(ctx, follow)
		require.NoError(t, f.WaitForSync(wctx))
		cancel()
		factories = append(factories, f)
	}
	modes := []string{s52Modes[0].name, s52Modes[1].name}

	// compare awaits, in every mode, Orphans and Dependents equal to a fresh LIST's.
	compare := func(step string, owners ...types.UID) {
		t.Helper()
		for i, f := range factories {
			var msg string
			testenv.EventuallyWith(t, follow, func() bool {
				s := gc52List(t, ctx, gvr, gone, nss, prefix)
				want := s.want(group)
				got, err := gc52Got(ctx, f, nss, prefix)
				require.NoError(t, err)
				ok := fmt.Sprint(want) == fmt.Sprint(got)
				msg = fmt.Sprintf("%s, %s:\n got  %v\n want %v", step, modes[i], got, want)
				for _, uid := range owners {
					ds, err := f.Dependents(ctx, uid)
					require.NoError(t, err)
					g, wd := dependentKeys(ds), s.dependents(uid)
					if fmt.Sprint(g) != fmt.Sprint(wd) {
						ok = false
						msg += fmt.Sprintf("\n dependents of %s: got %v want %v", uid, g, wd)
					}
				}
				return ok
			}, func() string { return msg })
		}
	}
	compare("initial", w.GetUID(), fg.GetUID(), owner.UID)

	// Foreground deletion: the owner stays, with a deletionTimestamp, until its finalizer goes.
	fgp := metav1.DeletePropagationForeground
	require.NoError(t, wi.Delete(ctx, "fg", metav1.DeleteOptions{PropagationPolicy: &fgp}))
	cur := must(wi.Get(ctx, "fg", metav1.GetOptions{}))
	require.NotNil(t, cur.GetDeletionTimestamp())
	compare("foreground deletion pending", fg.GetUID())
	cur.SetFinalizers(nil)
	_, err := wi.Update(ctx, cur, metav1.UpdateOptions{})
	require.NoError(t, err)
	compare("owner gone", fg.GetUID())
	// Dependents updated while the owner is gone, then the owner recreated with its name.
	dep := must(cs.CoreV1().ConfigMaps(ns1).Get(ctx, "fg-dep", metav1.GetOptions{}))
	dep.Data = map[string]string{"color": "y"}
	must(cs.CoreV1().ConfigMaps(ns1).Update(ctx, dep, metav1.UpdateOptions{}))
	fg2 := must(wi.Create(ctx, widget(group, "fg", 2), metav1.CreateOptions{}))
	compare("owner recreated", fg.GetUID(), fg2.GetUID())
	// The garbage collector's orphan propagation removes the owner references.
	one := must(cs.CoreV1().ConfigMaps(ns1).Get(ctx, "by-widget", metav1.GetOptions{}))
	one.OwnerReferences = nil
	must(cs.CoreV1().ConfigMaps(ns1).Update(ctx, one, metav1.UpdateOptions{}))
	compare("owner references removed", w.GetUID())
	// A CRD deleted: its kind no longer resolves.
	cp.DeleteCRD(t, goneCRD.Name)
	compare("CRD deleted")
}
