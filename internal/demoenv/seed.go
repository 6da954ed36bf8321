package demoenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// The demo CRD.
const (
	Group          = "demo.kindex.io"
	WidgetResource = "widgets." + Group // what a user types
	WidgetKind     = "Widget"
	WidgetShort    = "wdg" // the CRD's short name
	FieldManager   = "kindex-demo"
)

// GVRs the seed writes.
var (
	WidgetGVR    = schema.GroupVersionResource{Group: Group, Version: "v1", Resource: "widgets"}
	ConfigMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// Phases and Colors cycle over the widgets: three in five are Running.
var (
	Phases = []string{"Running", "Running", "Running", "Pending", "Failed"}
	Colors = []string{"red", "green", "blue", "yellow"}
)

// Widget is one seeded custom resource, as the seed wrote it.
type Widget struct {
	Namespace, Name string
	Size            int    // spec.size, 1 to 10
	Color           string // spec.color
	Phase           string // status.phase
	Owner           string // the ConfigMap named in its owner reference, or ""
}

// WidgetAt returns the i-th widget of the n-th namespace ns. Every tenth widget is owned by
// a ConfigMap (config-00, config-01, ...) when the namespace has that many ConfigMaps.
func WidgetAt(ns string, n, i, configMaps int) Widget {
	w := Widget{
		Namespace: ns,
		Name:      fmt.Sprintf("widget-%03d", i),
		Size:      1 + (i*7+i/5+n*3)%10,
		Color:     Colors[(i+n)%len(Colors)],
		Phase:     Phases[i%len(Phases)],
	}
	if i%10 == 0 && i/10 < configMaps {
		w.Owner = configMapName(i / 10)
	}
	return w
}

func configMapName(i int) string { return fmt.Sprintf("config-%02d", i) }

// Options says what to seed. Zero fields take the defaults: 3 namespaces named
// kindex-demo-1..3, each with 80 widgets and 20 ConfigMaps (300 objects in all).
type Options struct {
	Prefix     string
	Namespaces int
	Widgets    int // per namespace
	ConfigMaps int // per namespace
	// Progress receives one line per hundred objects; nil is silent.
	Progress io.Writer
}

func (o *Options) defaults() {
	if o.Prefix == "" {
		o.Prefix = "kindex-demo"
	}
	if o.Namespaces <= 0 {
		o.Namespaces = 3
	}
	if o.Widgets < 0 {
		o.Widgets = 0
	} else if o.Widgets == 0 {
		o.Widgets = 80
	}
	if o.ConfigMaps < 0 {
		o.ConfigMaps = 0
	} else if o.ConfigMaps == 0 {
		o.ConfigMaps = 20
	}
}

// Seed is what Apply wrote.
type Seed struct {
	Namespaces []string
	Widgets    []Widget
	ConfigMaps int // per namespace
	// CreatedCRD is true when Apply created the CRD (it did not exist before).
	CreatedCRD bool

	dyn  dynamic.Interface
	crds apiextclient.Interface
}

// Objects is the number of namespaced objects seeded.
func (s *Seed) Objects() int { return len(s.Widgets) + s.ConfigMaps*len(s.Namespaces) }

// Apply installs the demo CRD if it is missing and applies (server-side, so running it twice
// is harmless) the namespaces, ConfigMaps and widgets that opts describe.
func Apply(ctx context.Context, cfg *rest.Config, opts Options) (*Seed, error) {
	opts.defaults()
	s := &Seed{ConfigMaps: opts.ConfigMaps}
	if cfg.QPS == 0 { // client-go's default of 5 requests a second would take a minute
		cfg = rest.CopyConfig(cfg)
		cfg.QPS, cfg.Burst = 50, 100
	}
	var err error
	if s.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if s.crds, err = apiextclient.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if s.CreatedCRD, err = InstallCRD(ctx, cfg, WidgetCRD()); err != nil {
		return nil, err
	}
	for n := range opts.Namespaces {
		ns := fmt.Sprintf("%s-%d", opts.Prefix, n+1)
		s.Namespaces = append(s.Namespaces, ns)
		nsObj := object("v1", "Namespace", "", ns)
		if _, err := s.apply(ctx, namespaceGVR, nsObj); err != nil {
			return nil, err
		}
		for i := range opts.Widgets {
			s.Widgets = append(s.Widgets, WidgetAt(ns, n, i, opts.ConfigMaps))
		}
	}

	var done atomic.Int64
	total := int64(s.Objects())
	tick := func() {
		if d := done.Add(1); opts.Progress != nil && (d%100 == 0 || d == total) {
			fmt.Fprintf(opts.Progress, "  seeded %d/%d objects\n", d, total)
		}
	}
	// ConfigMaps first: widgets refer to their UIDs.
	uids := make([]map[string]types.UID, len(s.Namespaces))
	for n, ns := range s.Namespaces {
		uids[n] = map[string]types.UID{}
		for i := range opts.ConfigMaps {
			cm := object("v1", "ConfigMap", ns, configMapName(i))
			cm.SetLabels(map[string]string{"app": "kindex-demo"})
			_ = unstructured.SetNestedStringMap(cm.Object, map[string]string{"index": fmt.Sprint(i)}, "data")
			got, err := s.apply(ctx, ConfigMapGVR, cm)
			if err != nil {
				return nil, err
			}
			uids[n][cm.GetName()] = got.GetUID()
			tick()
		}
	}
	nsIndex := map[string]int{}
	for n, ns := range s.Namespaces {
		nsIndex[ns] = n
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, w := range s.Widgets {
		g.Go(func() error {
			obj := object(Group+"/v1", WidgetKind, w.Namespace, w.Name)
			obj.SetLabels(map[string]string{"app": "kindex-demo", "color": w.Color})
			obj.Object["spec"] = map[string]any{"size": int64(w.Size), "color": w.Color}
			obj.Object["status"] = map[string]any{"phase": w.Phase}
			if w.Owner != "" {
				obj.SetOwnerReferences([]metav1.OwnerReference{{
					APIVersion: "v1", Kind: "ConfigMap", Name: w.Owner, UID: uids[nsIndex[w.Namespace]][w.Owner],
				}})
			}
			if _, err := s.apply(gctx, WidgetGVR, obj); err != nil {
				return err
			}
			tick()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return s, nil
}

func object(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func (s *Seed) apply(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var ri dynamic.ResourceInterface = s.dyn.Resource(gvr)
	if ns := obj.GetNamespace(); ns != "" {
		ri = s.dyn.Resource(gvr).Namespace(ns)
	}
	got, err := ri.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return nil, fmt.Errorf("apply %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return got, nil
}

// Cleanup deletes the seeded namespaces, and the CRD if Apply created it. A cluster's
// namespace controller then deletes their objects (the local control plane runs none; it is
// discarded as a whole).
func (s *Seed) Cleanup(ctx context.Context) error {
	var errs []error
	for _, ns := range s.Namespaces {
		err := s.dyn.Resource(namespaceGVR).Delete(ctx, ns, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if s.CreatedCRD {
		err := s.crds.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, WidgetCRD().Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// WidgetCRD is the demo CRD: namespaced widgets.demo.kindex.io, short name wdg, with an
// integer spec.size, a string spec.color and a free-form status (no status subresource, so
// that the seed can write status.phase directly).
func WidgetCRD() *apiextv1.CustomResourceDefinition {
	preserve := true
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: WidgetResource},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: Group,
			Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{
				Plural: "widgets", Singular: "widget", Kind: WidgetKind, ListKind: WidgetKind + "List",
				ShortNames: []string{WidgetShort}, Categories: []string{"kindex-demo"},
			},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
							"size":  {Type: "integer"},
							"color": {Type: "string"},
						}},
						"status": {Type: "object", XPreserveUnknownFields: &preserve},
					},
				}},
			}},
		},
	}
}

// InstallCRD creates crd unless a CRD of that name exists, then waits until it is
// Established and its resource answers a list. created says whether it created it.
func InstallCRD(ctx context.Context, cfg *rest.Config, crd *apiextv1.CustomResourceDefinition) (created bool, err error) {
	client, err := apiextclient.NewForConfig(cfg)
	if err != nil {
		return false, err
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	_, err = crds.Create(ctx, crd, metav1.CreateOptions{})
	switch {
	case err == nil:
		created = true
	case apierrors.IsAlreadyExists(err):
	default:
		return false, fmt.Errorf("create CRD %s: %w", crd.Name, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextv1.Established && c.Status == apiextv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return created, fmt.Errorf("CRD %s not established: %w", crd.Name, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return created, err
	}
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: crd.Spec.Versions[0].Name, Resource: crd.Spec.Names.Plural}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	if err != nil {
		return created, fmt.Errorf("CRD %s not served: %w", crd.Name, err)
	}
	return created, nil
}
