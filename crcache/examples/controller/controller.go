package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kindex/kindex/crcache"
)

// ownerField indexes Pods by the name of the Widget that controls them: the usual
// controller-runtime field index, answered by kindex.
const ownerField = ".metadata.controller"

// widgetLabel marks the Pods the controller makes.
const widgetLabel = "demo.kindex.io/widget"

// options configure the controller.
type options struct {
	// namespace limits the controller (and its cache) to one namespace; "" watches all.
	namespace string
	// report, if positive, prints a summary of the cache every report interval to out.
	report time.Duration
	out    io.Writer
}

// run runs the Widget controller until ctx ends: a manager whose cache is crcache (the one
// line that differs from any controller-runtime program), a controller built with the
// builder that reconciles Widgets and the Pods they own through its workqueue, and an
// optional report.
func run(ctx context.Context, cfg *rest.Config, o options) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := AddToScheme(scheme); err != nil {
		return err
	}
	mopts := manager.Options{
		Scheme:   scheme,
		NewCache: crcache.New, // kindex's cache instead of controller-runtime's
		Metrics:  metricsserver.Options{BindAddress: "0"},
	}
	if o.namespace != "" {
		mopts.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{o.namespace: {}}}
	}
	mgr, err := ctrl.NewManager(cfg, mopts)
	if err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, ownerField, func(obj client.Object) []string {
		owner := metav1.GetControllerOf(obj)
		if owner == nil || owner.APIVersion != GroupVersion.String() || owner.Kind != "Widget" {
			return nil
		}
		return []string{owner.Name}
	}); err != nil {
		return err
	}
	r := &reconciler{Client: mgr.GetClient(), scheme: scheme}
	if err := ctrl.NewControllerManagedBy(mgr).
		For(&Widget{}).
		Owns(&corev1.Pod{}).
		Complete(r); err != nil {
		return err
	}
	if o.report > 0 {
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			return report(ctx, mgr.GetClient(), o)
		})); err != nil {
			return err
		}
	}
	return mgr.Start(ctx)
}

// reconciler makes each Widget own exactly spec.size Pods, named <widget>-<i>, and writes
// how many it has in status.pods.
type reconciler struct {
	client.Client
	scheme *runtime.Scheme
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	var w Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		// Deleted: its Pods go with it (owner references, the garbage collector).
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(w.Namespace), client.MatchingFields{ownerField: w.Name}); err != nil {
		return ctrl.Result{}, err
	}
	have := map[int]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		n, err := strconv.Atoi(strings.TrimPrefix(p.Name, w.Name+"-"))
		if err != nil || n < 0 || p.DeletionTimestamp != nil {
			continue
		}
		have[n] = p
	}
	size := int(w.Spec.Size)
	for n, p := range have {
		if n >= size {
			if err := r.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, err
			}
			log.Info("deleted pod", "pod", p.Name)
			delete(have, n)
		}
	}
	for n := range size {
		if have[n] != nil {
			continue
		}
		p := podFor(&w, n)
		if err := controllerutil.SetControllerReference(&w, p, r.scheme); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Create(ctx, p); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, err
		}
		log.Info("created pod", "pod", p.Name)
		have[n] = p
	}
	count := int32(len(have))
	if w.Status.Pods == nil || *w.Status.Pods != count {
		orig := w.DeepCopy()
		w.Status.Pods = &count
		// The demo CRD has no status subresource: status is written with the object.
		if err := r.Patch(ctx, &w, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	return ctrl.Result{}, nil
}

func podFor(w *Widget, n int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: w.Namespace,
			Name:      fmt.Sprintf("%s-%d", w.Name, n),
			Labels:    map[string]string{widgetLabel: w.Name, "app.kubernetes.io/managed-by": "widget-controller"},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "app",
			Image: "registry.k8s.io/pause:3.10",
			Env:   []corev1.EnvVar{{Name: "COLOR", Value: w.Spec.Color}},
		}}},
	}
}

// report prints, every o.report, what the cache holds, with two reads controller-runtime's
// cache cannot answer: a numeric range on a field (spec.size>=8, indexed on first use from
// the stored JSON) and a paged list (Limit and Continue).
func report(ctx context.Context, cl client.Client, o options) error {
	tick := time.NewTicker(o.report)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		var widgets, big WidgetList
		if err := cl.List(ctx, &widgets, client.InNamespace(o.namespace)); err != nil {
			return err
		}
		if err := cl.List(ctx, &big, client.InNamespace(o.namespace), crcache.MustParseFields("spec.size>=8")); err != nil {
			return err
		}
		pods, pages := 0, 0
		for token := ""; ; pages++ {
			var page corev1.PodList
			if err := cl.List(ctx, &page, client.InNamespace(o.namespace), client.HasLabels{widgetLabel},
				client.Limit(100), client.Continue(token)); err != nil {
				return err
			}
			pods += len(page.Items)
			if token = page.Continue; token == "" {
				pages++
				break
			}
		}
		fmt.Fprintf(o.out, "report: %d widgets (%d with spec.size>=8), %d pods they own (read in %d pages of 100)\n",
			len(widgets.Items), len(big.Items), pods, pages)
	}
}
