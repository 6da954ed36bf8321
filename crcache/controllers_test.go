package crcache_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/internal/testenv"
)

// Controllers as users write them, run on a manager with controller-runtime's default cache
// and with crcache: the same scenario must end the same way.

// startManager starts mgr until the test ends, checking that Start returns without error.
func startManager(t *testing.T, mgr manager.Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop")
		}
	})
}

type ownerRun struct {
	mu            sync.Mutex
	reconciles    map[string]int
	secretUpdates []string // old labels -> new labels, for each update a predicate saw
	sharedPointer bool     // an update whose old and new objects were the same pointer
}

func (r *ownerRun) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprintf("reconciles %v, secret updates %v", r.reconciles, r.secretUpdates)
}

// ownerScenario runs a Deployment controller owning ConfigMaps (CreateOrUpdate,
// CreateOrPatch, SetControllerReference, an index on the controller owner and one on a spec
// field, a Secret watch through a map function and predicates, status updates) on a manager
// with the given cache, and returns the final state as a string.
func ownerScenario(t *testing.T, newCache cache.NewCacheFunc) string {
	ns := cp.Namespace(t)
	ctx := t.Context()
	hasWatched, err := labels.Parse("watched")
	require.NoError(t, err)
	mgr, err := manager.New(cp.AdminConfig(), manager.Options{
		NewCache: newCache,
		Cache: cache.Options{
			DefaultNamespaces:           map[string]cache.Config{ns: {}},
			DefaultTransform:            cache.TransformStripManagedFields(),
			ByObject:                    map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: hasWatched}},
			ReaderFailOnMissingInformer: true,
		},
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	require.NoError(t, err)
	c := mgr.GetClient()
	require.NoError(t, mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, ".metadata.controller", func(o client.Object) []string {
		owner := metav1.GetControllerOf(o)
		if owner == nil || owner.Kind != "Deployment" {
			return nil
		}
		return []string{owner.Name}
	}))
	require.NoError(t, mgr.GetFieldIndexer().IndexField(ctx, &appsv1.Deployment{}, "spec.secrets", func(o client.Object) []string {
		var out []string
		for _, v := range o.(*appsv1.Deployment).Spec.Template.Spec.Volumes {
			if v.Secret != nil {
				out = append(out, v.Secret.SecretName)
			}
		}
		return out
	}))

	run := &ownerRun{reconciles: map[string]int{}}
	recordSecrets := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		run.mu.Lock()
		defer run.mu.Unlock()
		if e.ObjectOld == e.ObjectNew {
			run.sharedPointer = true
		}
		run.secretUpdates = append(run.secretUpdates, fmt.Sprintf("%v->%v", e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()))
		return true
	}}
	secretToDeployments := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		var ds appsv1.DeploymentList
		if err := c.List(ctx, &ds, client.InNamespace(o.GetNamespace()), client.MatchingFields{"spec.secrets": o.GetName()}); err != nil {
			t.Errorf("list deployments of secret %s: %v", o.GetName(), err)
			return nil
		}
		var out []reconcile.Request
		for _, d := range ds.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: d.Namespace, Name: d.Name}})
		}
		return out
	})
	err = builder.ControllerManagedBy(mgr).
		Named(strings.ReplaceAll(testenv.UniqueName(t), "-", "_")).
		For(&appsv1.Deployment{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.ConfigMap{}).
		Watches(&corev1.Secret{}, secretToDeployments, builder.WithPredicates(recordSecrets, predicate.LabelChangedPredicate{})).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			run.mu.Lock()
			run.reconciles[req.Name]++
			run.mu.Unlock()
			var d appsv1.Deployment
			if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			var secrets corev1.SecretList
			if err := c.List(ctx, &secrets, client.InNamespace(req.Namespace)); err != nil {
				return reconcile.Result{}, err
			}
			var seen []string
			for _, s := range secrets.Items {
				seen = append(seen, s.Name+"="+string(s.Data["k"]))
			}
			sort.Strings(seen)
			var sa corev1.ServiceAccount
			saErr := c.Get(ctx, types.NamespacedName{Namespace: req.Namespace, Name: "default"}, &sa)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name + "-cm"}}
			if _, err := controllerutil.CreateOrUpdate(ctx, c, cm, func() error {
				cm.Data = map[string]string{
					"replicas":     fmt.Sprint(*d.Spec.Replicas),
					"secrets":      strings.Join(seen, ","),
					"notCached":    fmt.Sprint(isNotCached(saErr)),
					"managedField": fmt.Sprint(len(d.ManagedFields)),
				}
				return controllerutil.SetControllerReference(&d, cm, scheme.Scheme)
			}); err != nil {
				return reconcile.Result{}, err
			}
			patched := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name + "-patched"}}
			if _, err := controllerutil.CreateOrPatch(ctx, c, patched, func() error {
				if patched.Annotations == nil {
					patched.Annotations = map[string]string{}
				}
				patched.Annotations["generation"] = fmt.Sprint(d.Generation)
				return controllerutil.SetControllerReference(&d, patched, scheme.Scheme)
			}); err != nil {
				return reconcile.Result{}, err
			}
			var owned corev1.ConfigMapList
			if err := c.List(ctx, &owned, client.InNamespace(req.Namespace), client.MatchingFields{".metadata.controller": d.Name}); err != nil {
				return reconcile.Result{}, err
			}
			// Sorted: controller-runtime's cache lists in no particular order.
			ownedNames := fmt.Sprint(slices.Sorted(slices.Values(names(ptrs(owned.Items)))))
			if d.Annotations["owned"] != ownedNames {
				if d.Annotations == nil {
					d.Annotations = map[string]string{}
				}
				d.Annotations["owned"] = ownedNames
				if err := c.Update(ctx, &d); err != nil {
					return reconcile.Result{}, err
				}
			}
			if d.Status.ObservedGeneration != d.Generation {
				d.Status.ObservedGeneration = d.Generation
				if err := c.Status().Update(ctx, &d); err != nil {
					return reconcile.Result{}, err
				}
			}
			return reconcile.Result{}, nil
		}))
	require.NoError(t, err)
	startManager(t, mgr)

	admin := adminClient(t)
	d := newDeployment(ns, "web")
	d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}}}
	require.NoError(t, admin.Create(ctx, d))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds", Labels: map[string]string{"watched": "yes"}}, Data: map[string][]byte{"k": []byte("v1")}}
	require.NoError(t, admin.Create(ctx, secret))
	require.NoError(t, admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hidden"}, Data: map[string][]byte{"k": []byte("h")}}))

	cmData := func(name string) map[string]string {
		var cm corev1.ConfigMap
		if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &cm); err != nil {
			return nil
		}
		return cm.Data
	}
	deployment := func() *appsv1.Deployment {
		var d appsv1.Deployment
		require.NoError(t, admin.Get(ctx, client.ObjectKeyFromObject(newDeployment(ns, "web")), &d))
		return &d
	}
	converged := func(replicas, secrets string) func() bool {
		return func() bool {
			data := cmData("web-cm")
			d := deployment()
			return data["replicas"] == replicas && data["secrets"] == secrets &&
				d.Status.ObservedGeneration == d.Generation && d.Annotations["owned"] == "[web-cm web-patched]"
		}
	}
	state := func() string {
		d := deployment()
		return fmt.Sprintf("cm %v, deployment gen %d observed %d owned %q; %s", cmData("web-cm"), d.Generation, d.Status.ObservedGeneration, d.Annotations["owned"], run)
	}
	testenv.EventuallyWith(t, 30*time.Second, converged("1", "creds=v1"), state)

	// The owned ConfigMap deleted or changed by someone else: its owner is reconciled.
	require.NoError(t, admin.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-cm"}}))
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return cmData("web-cm")["replicas"] == "1" }, state)
	var cm corev1.ConfigMap
	require.NoError(t, admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web-cm"}, &cm))
	cm.Data["replicas"] = "tampered"
	require.NoError(t, admin.Update(ctx, &cm))
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return cmData("web-cm")["replicas"] == "1" }, state)

	// A data-only change of the Secret is filtered out by LabelChangedPredicate; a label
	// change passes, with the old labels in the old object.
	secret.Data["k"] = []byte("v2")
	require.NoError(t, admin.Update(ctx, secret))
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		run.mu.Lock()
		defer run.mu.Unlock()
		return len(run.secretUpdates) == 1
	}, state)
	secret.Labels["rev"] = "2"
	require.NoError(t, admin.Update(ctx, secret))
	testenv.EventuallyWith(t, 30*time.Second, converged("1", "creds=v2"), state)

	// A scale: the generation changes, the ConfigMap follows, the status is observed.
	three := int32(3)
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := deployment()
		d.Spec.Replicas = &three
		return admin.Update(ctx, d)
	}))
	testenv.EventuallyWith(t, 30*time.Second, converged("3", "creds=v2"), state)

	run.mu.Lock()
	defer run.mu.Unlock()
	assert.False(t, run.sharedPointer, "an update's old and new objects were one object")
	assert.Less(t, run.reconciles["web"], 40, "reconciles: %v", run.reconciles)
	final := cmData("web-cm")
	dd := deployment()
	return fmt.Sprintf("cm %v; observed %v; owned %s; secret updates %v", final, dd.Status.ObservedGeneration == dd.Generation, dd.Annotations["owned"], run.secretUpdates)
}

func isNotCached(err error) bool {
	var nc *cache.ErrResourceNotCached
	return errors.As(err, &nc)
}

// TestOwnerControllerLikeControllerRuntime: the same Deployment controller, owning ConfigMaps
// and watching Secrets, ends in the same state with either cache.
func TestOwnerControllerLikeControllerRuntime(t *testing.T) {
	cr := ownerScenario(t, cache.New)
	kx := ownerScenario(t, crcache.New)
	assert.Equal(t, cr, kx)
	t.Logf("controller-runtime: %s", cr)
}

type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
}

func (c *counter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

func (c *counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprint(c.n)
}

// crdScenario runs a typed and an unstructured controller of a custom resource and a
// ConfigMap controller on one manager, deletes the CRD, checks that the custom resource's
// controllers do not loop and the ConfigMap controller goes on, then installs the CRD again.
func crdScenario(t *testing.T, newCache cache.NewCacheFunc) string {
	group := testenv.UniqueName(t) + ".crcache.test"
	crd := testenv.NewCRD(group, "Gizmo", "gizmos")
	cp.InstallCRD(t, crd.DeepCopy())
	gv := schema.GroupVersion{Group: group, Version: "v1"}
	sch := schemeWith(t, gv, &Gizmo{}, &GizmoList{})
	ns := cp.Namespace(t)
	ctx := t.Context()
	mgr, err := manager.New(cp.AdminConfig(), manager.Options{
		Scheme:   sch,
		NewCache: newCache,
		Cache:    cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics:  metricsserver.Options{BindAddress: "0"},
	})
	require.NoError(t, err)
	c := mgr.GetClient()
	var typed, unstr, cms, errs counter
	name := func(s string) string { return strings.ReplaceAll(testenv.UniqueName(t), "-", "_") + s }
	require.NoError(t, builder.ControllerManagedBy(mgr).Named(name("typed")).For(&Gizmo{}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			typed.add(req.Name)
			var g Gizmo
			if err := c.Get(ctx, req.NamespacedName, &g); err != nil {
				if !apierrors.IsNotFound(err) {
					errs.add("typed " + errClass(err))
				}
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: "g-" + req.Name}}
			_, err := controllerutil.CreateOrUpdate(ctx, c, cm, func() error {
				cm.Data = map[string]string{"size": fmt.Sprint(g.Spec.Size)}
				return controllerutil.SetControllerReference(&g, cm, sch)
			})
			return reconcile.Result{}, err
		})))
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gv.WithKind("Gizmo"))
	require.NoError(t, builder.ControllerManagedBy(mgr).Named(name("unstructured")).For(u).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			unstr.add(req.Name)
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gv.WithKind("Gizmo"))
			err := c.Get(ctx, req.NamespacedName, u)
			if err != nil && !apierrors.IsNotFound(err) {
				errs.add("unstructured " + errClass(err))
			}
			return reconcile.Result{}, client.IgnoreNotFound(err)
		})))
	require.NoError(t, builder.ControllerManagedBy(mgr).Named(name("configmaps")).For(&corev1.ConfigMap{}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			cms.add(req.Name)
			return reconcile.Result{}, nil
		})))
	startManager(t, mgr)
	admin, err := client.New(cp.AdminConfig(), client.Options{Scheme: sch})
	require.NoError(t, err)
	state := func() string {
		return fmt.Sprintf("typed %v, unstructured %v, configmaps %v, errors %v", &typed, &unstr, &cms, &errs)
	}

	require.NoError(t, admin.Create(ctx, &Gizmo{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}, Spec: GizmoSpec{Size: 3}}))
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return cms.get("g-a") > 0 && unstr.get("a") > 0 }, state)

	cp.DeleteCRD(t, crd.Name)
	typedAtDelete, unstrAtDelete := typed.get("a"), unstr.get("a")
	for i := range 5 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("after-%d", i)}}
		require.NoError(t, admin.Create(ctx, cm))
		testenv.EventuallyWith(t, 30*time.Second, func() bool { return cms.get(cm.Name) > 0 }, state)
	}
	assert.Less(t, typed.get("a")-typedAtDelete, 5, "the typed controller loops: %s", state())
	assert.Less(t, unstr.get("a")-unstrAtDelete, 5, "the unstructured controller loops: %s", state())

	cp.InstallCRD(t, crd.DeepCopy())
	require.NoError(t, admin.Create(ctx, &Gizmo{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"}, Spec: GizmoSpec{Size: 4}}))
	testenv.EventuallyWith(t, 90*time.Second, func() bool { return cms.get("g-b") > 0 && unstr.get("b") > 0 }, state)
	return fmt.Sprintf("b: typed %v unstructured %v", typed.get("b") > 0, unstr.get("b") > 0)
}

// TestCRDDeletedUnderControllers: controllers of a custom resource whose CRD is deleted
// neither loop nor hold up the manager's other controllers, and take up the resource again
// when it is installed again.
func TestCRDDeletedUnderControllers(t *testing.T) {
	t.Run("controller-runtime", func(t *testing.T) { t.Log(crdScenario(t, cache.New)) })
	t.Run("crcache", func(t *testing.T) { t.Log(crdScenario(t, crcache.New)) })
}

// eventLog is a predicate that records the events it is given, and checks their objects.
type eventLog struct {
	mu     sync.Mutex
	events []string
	faults []string
}

func (l *eventLog) record(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, s)
}

func (l *eventLog) fault(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.faults = append(l.faults, s)
}

func (l *eventLog) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if e == s {
			return true
		}
	}
	return false
}

func (l *eventLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("events %v, faults %v", l.events, l.faults)
}

func (l *eventLog) predicate() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool {
			l.record(fmt.Sprintf("create %s %T %v", e.Object.GetName(), e.Object, e.Object.GetLabels()))
			return true
		},
		UpdateFunc: func(e event.UpdateEvent) bool {
			if e.ObjectOld.GetResourceVersion() != e.ObjectNew.GetResourceVersion() {
				if e.ObjectOld == e.ObjectNew {
					l.fault("update of " + e.ObjectNew.GetName() + " with one object as old and new")
				}
				l.record(fmt.Sprintf("update %s %T %v->%v", e.ObjectNew.GetName(), e.ObjectNew, e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()))
			}
			return true
		},
		DeleteFunc: func(e event.DeleteEvent) bool {
			l.record(fmt.Sprintf("delete %s %T %v", e.Object.GetName(), e.Object, e.Object.GetLabels()))
			return true
		},
	}
}

// metadataScenario: a controller owning ConfigMaps watched as metadata only, whose
// reconciler reads them typed (CreateOrUpdate), so that crcache moves the metadata watch to
// the typed informer; the owner must still be told of changes and deletes of what it owns.
func metadataScenario(t *testing.T, newCache cache.NewCacheFunc) string {
	ns := cp.Namespace(t)
	ctx := t.Context()
	mgr, err := manager.New(cp.AdminConfig(), manager.Options{
		NewCache: newCache,
		Cache:    cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics:  metricsserver.Options{BindAddress: "0"},
	})
	require.NoError(t, err)
	c := mgr.GetClient()
	var log eventLog
	var reconciles counter
	require.NoError(t, builder.ControllerManagedBy(mgr).
		Named(strings.ReplaceAll(testenv.UniqueName(t), "-", "_")).
		For(&appsv1.Deployment{}).
		Owns(&corev1.ConfigMap{}, builder.OnlyMetadata, builder.WithPredicates(log.predicate())).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			reconciles.add(req.Name)
			var d appsv1.Deployment
			if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name + "-cm"}}
			_, err := controllerutil.CreateOrUpdate(ctx, c, cm, func() error {
				cm.Data = map[string]string{"replicas": fmt.Sprint(*d.Spec.Replicas)}
				if cm.Labels == nil {
					cm.Labels = map[string]string{}
				}
				cm.Labels["owner"] = d.Name
				return controllerutil.SetControllerReference(&d, cm, scheme.Scheme)
			})
			return reconcile.Result{}, err
		})))
	startManager(t, mgr)
	admin := adminClient(t)
	state := func() string { return fmt.Sprintf("reconciles %v, %v", &reconciles, &log) }
	cmData := func() map[string]string {
		var cm corev1.ConfigMap
		if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web-cm"}, &cm); err != nil {
			return nil
		}
		return cm.Data
	}
	require.NoError(t, admin.Create(ctx, newDeployment(ns, "web")))
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return cmData()["replicas"] == "1" }, state)
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return log.has("create web-cm *v1.PartialObjectMetadata map[owner:web]") }, state)

	// Changes by someone else reach the owner, whatever informer now serves the watch.
	for i := range 3 {
		var cm corev1.ConfigMap
		require.NoError(t, admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web-cm"}, &cm))
		cm.Data["replicas"] = "tampered"
		cm.Labels["round"] = fmt.Sprint(i)
		require.NoError(t, admin.Update(ctx, &cm))
		testenv.EventuallyWith(t, 30*time.Second, func() bool {
			return log.has(fmt.Sprintf("update web-cm *v1.PartialObjectMetadata map[owner:web]->map[owner:web round:%d]", i)) ||
				log.has(fmt.Sprintf("update web-cm *v1.PartialObjectMetadata map[owner:web round:%d]->map[owner:web round:%d]", i-1, i))
		}, state)
		testenv.EventuallyWith(t, 30*time.Second, func() bool { return cmData()["replicas"] == "1" }, state)
	}
	require.NoError(t, admin.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-cm"}}))
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return log.has("delete web-cm *v1.PartialObjectMetadata map[owner:web round:2]") }, state)
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return cmData()["replicas"] == "1" }, state)
	log.mu.Lock()
	defer log.mu.Unlock()
	assert.Empty(t, log.faults)
	return fmt.Sprint(cmData())
}

// TestMetadataOwnsReadTyped: crcache only. controller-runtime's cache fails this scenario at
// times: its typed ConfigMap informer is another informer than the metadata one that sends
// the event, and the reconcile it causes may read the typed object before that informer has
// the change, and so leave it undone.
func TestMetadataOwnsReadTyped(t *testing.T) {
	assert.Equal(t, "map[replicas:1]", metadataScenario(t, crcache.New))
}

// selectorScenario: a ConfigMap controller over a cache that holds the ConfigMaps with a
// label only, with a resync period: an object that leaves the selection is a delete, one that
// enters it a create, and resyncs reach the controller without a predicate and not through
// ResourceVersionChangedPredicate.
func selectorScenario(t *testing.T, newCache cache.NewCacheFunc) string {
	ns := cp.Namespace(t)
	ctx := t.Context()
	sync := time.Second
	sel, err := labels.Parse("app=x")
	require.NoError(t, err)
	mgr, err := manager.New(cp.AdminConfig(), manager.Options{
		NewCache: newCache,
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			ByObject:          map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Label: sel}},
			SyncPeriod:        &sync,
		},
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	require.NoError(t, err)
	c := mgr.GetClient()
	var log eventLog
	var all, changed counter
	for _, ctl := range []struct {
		count *counter
		preds []predicate.Predicate
	}{{&all, []predicate.Predicate{log.predicate()}}, {&changed, []predicate.Predicate{predicate.ResourceVersionChangedPredicate{}}}} {
		require.NoError(t, builder.ControllerManagedBy(mgr).
			Named(strings.ReplaceAll(testenv.UniqueName(t), "-", "_")).
			For(&corev1.ConfigMap{}, builder.WithPredicates(ctl.preds...)).
			Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				var cm corev1.ConfigMap
				err := c.Get(ctx, req.NamespacedName, &cm)
				ctl.count.add(req.Name + " " + map[bool]string{true: "found", false: "gone"}[err == nil])
				return reconcile.Result{}, client.IgnoreNotFound(err)
			})))
	}
	startManager(t, mgr)
	admin := adminClient(t)
	state := func() string { return fmt.Sprintf("all %v, changed %v, %v", &all, &changed, &log) }
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m", Labels: map[string]string{"app": "x"}}}
	require.NoError(t, admin.Create(ctx, cm))
	require.NoError(t, admin.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other", Labels: map[string]string{"app": "y"}}}))
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return all.get("m found") >= 3 }, state)
	assert.Equal(t, 1, changed.get("m found"), "resyncs passed ResourceVersionChangedPredicate: %s", state())

	cm.Labels["app"] = "z"
	require.NoError(t, admin.Update(ctx, cm))
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return all.get("m gone") > 0 && changed.get("m gone") > 0 }, state)
	cm.Labels["app"] = "x"
	require.NoError(t, admin.Update(ctx, cm))
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return changed.get("m found") == 2 && len(log.events) >= 3
	}, state)
	log.mu.Lock()
	defer log.mu.Unlock()
	assert.Empty(t, log.faults)
	return fmt.Sprint(log.events, all.get("other found"), changed.get("other found"))
}

func TestSelectedControllerLikeControllerRuntime(t *testing.T) {
	var cr, kx string
	t.Run("controller-runtime", func(t *testing.T) { cr = selectorScenario(t, cache.New) })
	t.Run("crcache", func(t *testing.T) { kx = selectorScenario(t, crcache.New) })
	assert.Equal(t, cr, kx)
}

// stopScenario: a manager stopped while its reconciler is in a read and a write stops
// without error, and leaves no goroutine of the cache behind.
func stopScenario(t *testing.T, newCache cache.NewCacheFunc) {
	ns := cp.Namespace(t)
	admin := adminClient(t)
	for i := range 20 {
		require.NoError(t, admin.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("c%02d", i)}}))
	}
	ignore := goleak.IgnoreCurrent()
	func() {
		mgr, err := manager.New(cp.AdminConfig(), manager.Options{
			NewCache: newCache,
			Cache:    cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
			Metrics:  metricsserver.Options{BindAddress: "0"},
			Controller: ctrlconfig.Controller{
				SkipNameValidation: ptr(true),
				// controller-runtime's priority queue leaves a goroutine behind (its logState).
				UsePriorityQueue: ptr(false),
			},
		})
		require.NoError(t, err)
		c := mgr.GetClient()
		started := make(chan struct{}, 100)
		require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
			Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				select {
				case started <- struct{}{}:
				default:
				}
				for ctx.Err() == nil {
					var cms corev1.ConfigMapList
					if err := c.List(ctx, &cms, client.InNamespace(req.Namespace)); err != nil {
						return reconcile.Result{}, err
					}
					var sa corev1.ServiceAccountList
					_ = c.List(ctx, &sa, client.InNamespace(req.Namespace))
					var cm corev1.ConfigMap
					if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
						return reconcile.Result{}, err
					}
					if cm.Annotations == nil {
						cm.Annotations = map[string]string{}
					}
					cm.Annotations["n"] += "x"
					if len(cm.Annotations["n"]) > 50 {
						cm.Annotations["n"] = ""
					}
					_ = c.Update(ctx, &cm)
				}
				return reconcile.Result{}, ctx.Err()
			})))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- mgr.Start(ctx) }()
		for range 4 {
			select {
			case <-started:
			case <-time.After(30 * time.Second):
				t.Fatal("no reconcile started")
			}
		}
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("manager did not stop")
		}
	}()
	goleak.VerifyNone(t, ignore,
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
}

func TestStopWhileReconciling(t *testing.T) {
	t.Run("controller-runtime", func(t *testing.T) { stopScenario(t, cache.New) })
	t.Run("crcache", func(t *testing.T) { stopScenario(t, crcache.New) })
}

// finalizerScenario: a cache over two namespaces; a controller of Namespaces (cluster-scoped,
// selected by a label) that owns a ConfigMap in each and counts the items of every cached
// namespace, and a controller of the items that adds a finalizer and removes it once the
// item is being deleted.
func finalizerScenario(t *testing.T, newCache cache.NewCacheFunc) string {
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	ctx := t.Context()
	admin := adminClient(t)
	id := testenv.UniqueName(t)
	mine := labels.SelectorFromSet(labels.Set{"audit": id})
	mgr, err := manager.New(cp.AdminConfig(), manager.Options{
		NewCache: newCache,
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {}},
			ByObject:          map[client.Object]cache.ByObject{&corev1.Namespace{}: {Label: mine}},
		},
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr(true)},
	})
	require.NoError(t, err)
	c := mgr.GetClient()
	var log eventLog
	var nsReconciles counter
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.Namespace{}).
		Owns(&corev1.ConfigMap{}).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
		})).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			nsReconciles.add(req.Name)
			var n corev1.Namespace
			if err := c.Get(ctx, req.NamespacedName, &n); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			var items corev1.ConfigMapList
			if err := c.List(ctx, &items, client.MatchingLabels{"kind": "item"}); err != nil {
				return reconcile.Result{}, err
			}
			var mineHere, deleting int
			for _, it := range items.Items {
				if it.Namespace == n.Name {
					mineHere++
				}
				if it.DeletionTimestamp != nil {
					deleting++
				}
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: n.Name, Name: "info"}}
			_, err := controllerutil.CreateOrUpdate(ctx, c, cm, func() error {
				cm.Data = map[string]string{"all": fmt.Sprint(len(items.Items)), "here": fmt.Sprint(mineHere), "deleting": fmt.Sprint(deleting)}
				return controllerutil.SetControllerReference(&n, cm, scheme.Scheme)
			})
			return reconcile.Result{}, err
		})))
	const finalizer = "audit.crcache.test/cleanup"
	isItem := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()["kind"] == "item" })
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}, builder.WithPredicates(isItem, log.predicate())).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var cm corev1.ConfigMap
			if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			if cm.DeletionTimestamp.IsZero() {
				if controllerutil.AddFinalizer(&cm, finalizer) {
					return reconcile.Result{}, c.Update(ctx, &cm)
				}
				return reconcile.Result{}, nil
			}
			if controllerutil.RemoveFinalizer(&cm, finalizer) {
				return reconcile.Result{}, c.Update(ctx, &cm)
			}
			return reconcile.Result{}, nil
		})))
	startManager(t, mgr)
	for _, ns := range []string{ns1, ns2} {
		require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var n corev1.Namespace
			if err := admin.Get(ctx, types.NamespacedName{Name: ns}, &n); err != nil {
				return err
			}
			n.Labels["audit"] = id
			return admin.Update(ctx, &n)
		}))
	}
	info := func(ns string) map[string]string {
		var cm corev1.ConfigMap
		if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "info"}, &cm); err != nil {
			return nil
		}
		return cm.Data
	}
	state := func() string {
		return fmt.Sprintf("info %v %v, reconciles %v, %v", info(ns1), info(ns2), &nsReconciles, &log)
	}
	item := func(ns, name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"kind": "item"}}}
	}
	require.NoError(t, admin.Create(ctx, item(ns1, "a")))
	require.NoError(t, admin.Create(ctx, item(ns1, "b")))
	require.NoError(t, admin.Create(ctx, item(ns2, "c")))
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		return info(ns1)["all"] == "3" && info(ns1)["here"] == "2" && info(ns2)["here"] == "1" && info(ns2)["all"] == "3"
	}, state)
	hasFinalizer := func(ns, name string) bool {
		var cm corev1.ConfigMap
		return admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &cm) == nil && controllerutil.ContainsFinalizer(&cm, finalizer)
	}
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return hasFinalizer(ns1, "a") && hasFinalizer(ns2, "c") }, state)

	require.NoError(t, admin.Delete(ctx, item(ns2, "c")))
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		return info(ns2)["all"] == "2" && info(ns2)["here"] == "0" && info(ns2)["deleting"] == "0"
	}, state)
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return log.has("delete c *v1.ConfigMap map[kind:item]") }, state)
	var gone corev1.ConfigMap
	assert.True(t, apierrors.IsNotFound(admin.Get(ctx, types.NamespacedName{Namespace: ns2, Name: "c"}, &gone)))
	log.mu.Lock()
	defer log.mu.Unlock()
	assert.Empty(t, log.faults)
	var evs []string
	for _, e := range log.events {
		if strings.Contains(e, " c ") {
			evs = append(evs, e)
		}
	}
	return fmt.Sprint(info(ns1), info(ns2), len(evs) > 0)
}

func TestFinalizersOverNamespacesLikeControllerRuntime(t *testing.T) {
	var cr, kx string
	t.Run("controller-runtime", func(t *testing.T) { cr = finalizerScenario(t, cache.New) })
	t.Run("crcache", func(t *testing.T) { kx = finalizerScenario(t, crcache.New) })
	assert.Equal(t, cr, kx)
}

// Sprocket is a custom resource with a status subresource.
type Sprocket struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SprocketSpec   `json:"spec,omitempty"`
	Status            SprocketStatus `json:"status,omitempty"`
}

type SprocketSpec struct {
	Size    int64             `json:"size"`
	Weights []float64         `json:"weights,omitempty"`
	Extra   map[string]any    `json:"extra,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
}

type SprocketStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Parts              []string           `json:"parts,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

type SprocketList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Sprocket `json:"items"`
}

func (s *Sprocket) DeepCopyObject() runtime.Object     { return deepCopyValue(s).(*Sprocket) }
func (l *SprocketList) DeepCopyObject() runtime.Object { return deepCopyValue(l).(*SprocketList) }

// statusScenario: a typed custom resource with a status subresource owning unstructured
// custom resources made with CreateOrUpdate and CreateOrPatch; its status is written with
// Status().Update and read back by the next reconcile. Once converged, a reconcile writes
// nothing: a read that differed from what the server holds would make every reconcile write.
func statusScenario(t *testing.T, newCache cache.NewCacheFunc) string {
	group := testenv.UniqueName(t) + ".crcache.test"
	sprockets := testenv.NewCRD(group, "Sprocket", "sprockets")
	sprockets.Spec.Versions[0].Subresources = &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}}
	cp.InstallCRD(t, sprockets)
	cp.InstallCRD(t, testenv.NewCRD(group, "Part", "parts"))
	gv := schema.GroupVersion{Group: group, Version: "v1"}
	sch := schemeWith(t, gv, &Sprocket{}, &SprocketList{})
	ns := cp.Namespace(t)
	ctx := t.Context()
	// The writes the server applied: a write of a reconcile that read a stale object fails
	// with a conflict, and is not counted.
	var writesMu sync.Mutex
	var writes []string
	cfg := rest.CopyConfig(cp.AdminConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && r.Method != http.MethodGet && resp.StatusCode < 300 {
				writesMu.Lock()
				writes = append(writes, r.Method+" "+r.URL.Path)
				writesMu.Unlock()
			}
			return resp, err
		})
	})
	applied := func() []string {
		writesMu.Lock()
		defer writesMu.Unlock()
		return slices.Clone(writes)
	}
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:     sch,
		NewCache:   newCache,
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr(true)},
	})
	require.NoError(t, err)
	c := mgr.GetClient()
	part := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gv.WithKind("Part"))
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	var reconciles counter
	var seen []int64 // the observedGeneration each reconcile read
	var seenMu sync.Mutex
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&Sprocket{}).Owns(part("")).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			reconciles.add(req.Name)
			var s Sprocket
			if err := c.Get(ctx, req.NamespacedName, &s); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			seenMu.Lock()
			seen = append(seen, s.Status.ObservedGeneration)
			seenMu.Unlock()
			p := part(s.Name + "-a")
			if _, err := controllerutil.CreateOrUpdate(ctx, c, p, func() error {
				if err := unstructured.SetNestedField(p.Object, s.Spec.Size, "spec", "size"); err != nil {
					return err
				}
				if err := unstructured.SetNestedField(p.Object, map[string]any{"weights": []any{int64(1), 2.5, "x", nil, true}, "empty": map[string]any{}, "list": []any{}}, "spec", "nested"); err != nil {
					return err
				}
				return controllerutil.SetControllerReference(&s, p, sch)
			}); err != nil {
				return reconcile.Result{}, err
			}
			q := part(s.Name + "-b")
			if _, err := controllerutil.CreateOrPatch(ctx, c, q, func() error {
				q.SetLabels(map[string]string{"size": fmt.Sprint(s.Spec.Size)})
				if err := unstructured.SetNestedField(q.Object, s.Spec.Size*2, "spec", "double"); err != nil {
					return err
				}
				return controllerutil.SetOwnerReference(&s, q, sch)
			}); err != nil {
				return reconcile.Result{}, err
			}
			want := SprocketStatus{ObservedGeneration: s.Generation, Parts: []string{p.GetName(), q.GetName()}}
			meta.SetStatusCondition(&want.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Parts", ObservedGeneration: s.Generation})
			for i := range want.Conditions {
				if old := meta.FindStatusCondition(s.Status.Conditions, want.Conditions[i].Type); old != nil && old.Status == want.Conditions[i].Status {
					want.Conditions[i].LastTransitionTime = old.LastTransitionTime
				}
			}
			if !equality.Semantic.DeepEqual(s.Status, want) {
				s.Status = want
				return reconcile.Result{}, c.Status().Update(ctx, &s)
			}
			return reconcile.Result{}, nil
		})))
	startManager(t, mgr)
	admin, err := client.New(cp.AdminConfig(), client.Options{Scheme: sch})
	require.NoError(t, err)
	get := func() *Sprocket {
		var s Sprocket
		require.NoError(t, admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "s"}, &s))
		return &s
	}
	partSize := func() any {
		u := part("s-a")
		if admin.Get(ctx, client.ObjectKeyFromObject(u), u) != nil {
			return nil
		}
		v, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "size")
		return v
	}
	state := func() string {
		seenMu.Lock()
		defer seenMu.Unlock()
		return fmt.Sprintf("status %+v, part size %v, reconciles %v, seen %v", get().Status, partSize(), &reconciles, seen)
	}
	require.NoError(t, admin.Create(ctx, &Sprocket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"},
		Spec: SprocketSpec{Size: 2, Weights: []float64{1, 2.5}, Extra: map[string]any{"a": int64(1), "b": []any{}}}}))
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		s := get()
		return s.Status.ObservedGeneration == s.Generation && len(s.Status.Conditions) == 1 && partSize() == int64(2)
	}, state)
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := get()
		s.Spec.Size = 5
		return admin.Update(ctx, s)
	}))
	testenv.EventuallyWith(t, 30*time.Second, func() bool {
		s := get()
		return s.Generation == 2 && s.Status.ObservedGeneration == 2 && partSize() == int64(5)
	}, state)

	// Converged: reconciles caused by changes that need nothing written write nothing.
	before := applied()
	for i := range 3 {
		n := reconciles.get("s")
		require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s := get()
			if s.Annotations == nil {
				s.Annotations = map[string]string{}
			}
			s.Annotations["touch"] = fmt.Sprint(i)
			return admin.Update(ctx, s)
		}))
		testenv.EventuallyWith(t, 30*time.Second, func() bool { return reconciles.get("s") > n }, state)
	}
	assert.Equal(t, before, applied(), "converged reconciles wrote")
	s := get()
	return fmt.Sprintf("%+v %v %v", s.Status.Parts, s.Status.ObservedGeneration == s.Generation, partSize())
}

func TestStatusSubresourceLikeControllerRuntime(t *testing.T) {
	var cr, kx string
	t.Run("controller-runtime", func(t *testing.T) { cr = statusScenario(t, cache.New) })
	t.Run("crcache", func(t *testing.T) { kx = statusScenario(t, crcache.New) })
	assert.Equal(t, cr, kx)
}

// lateCRDScenario: a controller of a custom resource whose CRD is installed only after the
// manager started, as happens when an operator and its CRDs are deployed together: the
// controller starts once the CRD is served, and reconciles.
func lateCRDScenario(t *testing.T, newCache cache.NewCacheFunc) {
	group := testenv.UniqueName(t) + ".crcache.test"
	gv := schema.GroupVersion{Group: group, Version: "v1"}
	sch := schemeWith(t, gv, &Gizmo{}, &GizmoList{})
	ns := cp.Namespace(t)
	ctx := t.Context()
	mgr, err := manager.New(cp.AdminConfig(), manager.Options{
		Scheme:     sch,
		NewCache:   newCache,
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr(true)},
	})
	require.NoError(t, err)
	c := mgr.GetClient()
	var typed, cms counter
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			cms.add(req.Name)
			return reconcile.Result{}, nil
		})))
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&Gizmo{}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var g Gizmo
			if err := c.Get(ctx, req.NamespacedName, &g); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			typed.add(req.Name)
			return reconcile.Result{}, nil
		})))
	startManager(t, mgr)
	admin, err := client.New(cp.AdminConfig(), client.Options{Scheme: sch})
	require.NoError(t, err)
	// The manager is running (its ConfigMap controller reconciles) before the CRD exists.
	require.NoError(t, admin.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "before"}}))
	testenv.Eventually(t, 30*time.Second, func() bool { return cms.get("before") > 0 }, "the ConfigMap controller did not start")
	cp.InstallCRD(t, testenv.NewCRD(group, "Gizmo", "gizmos"))
	require.NoError(t, admin.Create(ctx, &Gizmo{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"}, Spec: GizmoSpec{Size: 1}}))
	testenv.EventuallyWith(t, 60*time.Second, func() bool { return typed.get("g") > 0 }, func() string { return fmt.Sprintf("typed %v", &typed) })
}

func TestCRDInstalledAfterStartLikeControllerRuntime(t *testing.T) {
	t.Run("controller-runtime", func(t *testing.T) { lateCRDScenario(t, cache.New) })
	t.Run("crcache", func(t *testing.T) { lateCRDScenario(t, crcache.New) })
}

// lateGrantScenario: a manager whose user may not yet list Secrets, as when an operator
// starts before its RBAC is applied: its ConfigMap controller works meanwhile, and its
// Secret controller starts once the grant arrives.
func lateGrantScenario(t *testing.T, newCache cache.NewCacheFunc) {
	ns := cp.Namespace(t)
	ctx := t.Context()
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	var requests requestCounter
	cfg = requests.wrap(cfg)
	cp.Grant(t, user, ns, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}})
	mgr, err := manager.New(cfg, manager.Options{
		NewCache:   newCache,
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr(true)},
	})
	require.NoError(t, err)
	c := mgr.GetClient()
	var cms, secrets counter
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var cm corev1.ConfigMap
			if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			cms.add(req.Name)
			return reconcile.Result{}, nil
		})))
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.Secret{}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var s corev1.Secret
			if err := c.Get(ctx, req.NamespacedName, &s); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			secrets.add(req.Name)
			return reconcile.Result{}, nil
		})))
	startManager(t, mgr)
	admin := adminClient(t)
	require.NoError(t, admin.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"}}))
	require.NoError(t, admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"}}))
	// The grant arrives once the Secrets have been refused, well within the controllers'
	// CacheSyncTimeout (2 minutes).
	testenv.Eventually(t, 30*time.Second, func() bool { return requests.count("/secrets") > 0 }, "no request for Secrets")
	cp.Grant(t, user, ns, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}})
	testenv.Eventually(t, 60*time.Second, func() bool { return cms.get("c") > 0 }, "the ConfigMap controller did not reconcile")
	testenv.Eventually(t, 60*time.Second, func() bool { return secrets.get("s") > 0 }, "the Secret controller did not reconcile after the grant")
}

func TestGrantAfterStartLikeControllerRuntime(t *testing.T) {
	t.Run("controller-runtime", func(t *testing.T) { lateGrantScenario(t, cache.New) })
	t.Run("crcache", func(t *testing.T) { lateGrantScenario(t, crcache.New) })
}
