package crcache_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/internal/testenv"
)

// Custom resources with Go types as operators write them (kubebuilder's layout), read
// through crcache, controller-runtime's cache and the API server, which must agree.

type WidgetPhase string

// widgetLevel lower-cases its text (UnmarshalText, pointer receiver).
type widgetLevel string

func (l *widgetLevel) UnmarshalText(b []byte) error {
	*l = widgetLevel(strings.ToLower(string(b)))
	return nil
}

// widgetRaw keeps its JSON (UnmarshalJSON and MarshalJSON, pointer receivers); widgetCheck
// only checks it (value receiver).
type widgetRaw struct{ Text string }

func (r *widgetRaw) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	r.Text = string(b)
	return nil
}

func (r *widgetRaw) MarshalJSON() ([]byte, error) {
	if r.Text == "" {
		return []byte("null"), nil
	}
	return []byte(r.Text), nil
}

type widgetCheck struct{}

func (widgetCheck) UnmarshalJSON(b []byte) error {
	if len(b) == 0 {
		return errors.New("empty")
	}
	return nil
}

type WidgetCommon struct {
	Owner string      `json:"owner,omitempty"`
	Phase WidgetPhase `json:"phase,omitempty"`
}

type WidgetExtra struct {
	Note string `json:"note,omitempty"`
}

type widgetTarget struct {
	Name     string                `json:"name"`
	Port     intstr.IntOrString    `json:"port,omitempty"`
	Weight   *int32                `json:"weight,omitempty"`
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

type WidgetSpec struct {
	WidgetCommon `json:",inline"`
	*WidgetExtra `json:",inline"`
	Replicas     *int32                        `json:"replicas,omitempty"`
	MaxSurge     *intstr.IntOrString           `json:"maxSurge,omitempty"`
	Paused       *bool                         `json:"paused,omitempty"`
	Enabled      bool                          `json:"enabled"`
	Small        int32                         `json:"small,omitempty"`
	Big          int64                         `json:"big,omitempty"`
	UBig         uint64                        `json:"ubig,omitempty"`
	Ratio        json.Number                   `json:"ratio,omitempty"`
	Score        float64                       `json:"score,omitempty"`
	PScore       *float64                      `json:"pscore,omitempty"`
	Phases       []WidgetPhase                 `json:"phases,omitempty"`
	Interval     metav1.Duration               `json:"interval,omitempty"`
	Deadline     *metav1.Time                  `json:"deadline,omitempty"`
	Raw          runtime.RawExtension          `json:"raw,omitempty"`
	JSON         *apiextv1.JSON                `json:"json,omitempty"`
	Size         resource.Quantity             `json:"size,omitempty"`
	Resources    corev1.ResourceRequirements   `json:"resources,omitempty"`
	Labels       map[string]string             `json:"labels,omitempty"`
	Secrets      []corev1.LocalObjectReference `json:"secrets,omitempty"`
	Targets      []widgetTarget                `json:"targets,omitempty"`
	PTargets     []*widgetTarget               `json:"ptargets,omitempty"`
	Data         []byte                        `json:"data,omitempty"`
	Triple       [3]int                        `json:"triple,omitempty"`
	Any          interface{}                   `json:"any,omitempty"`
	Config       map[string]interface{}        `json:"config,omitempty"`
	Level        widgetLevel                   `json:"level,omitempty"`
	Levels       map[widgetLevel]int64         `json:"levels,omitempty"`
	Custom       widgetRaw                     `json:"custom,omitempty"`
	PCustom      *widgetRaw                    `json:"pcustom,omitempty"`
	Check        widgetCheck                   `json:"check,omitempty"`
	Env          []corev1.EnvVar               `json:"env,omitempty"`
}

type WidgetStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	Ready              *bool              `json:"ready,omitempty"`
	LastRun            *metav1.MicroTime  `json:"lastRun,omitempty"`
}

type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec    `json:"spec,omitempty"`
	Status            *WidgetStatus `json:"status,omitempty"`
}

type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// Blob is a custom resource whose spec is x-kubernetes-preserve-unknown-fields.
type Blob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              map[string]interface{} `json:"spec,omitempty"`
	Status            *apiextv1.JSON         `json:"status,omitempty"`
}

type BlobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Blob `json:"items"`
}

func (w *Widget) DeepCopyObject() runtime.Object     { return deepCopyValue(w).(*Widget) }
func (l *WidgetList) DeepCopyObject() runtime.Object { return deepCopyValue(l).(*WidgetList) }
func (b *Blob) DeepCopyObject() runtime.Object       { return deepCopyValue(b).(*Blob) }
func (l *BlobList) DeepCopyObject() runtime.Object   { return deepCopyValue(l).(*BlobList) }

// deepCopyValue copies v (a pointer) deeply: pointers, maps, slices and interfaces are
// copied, nil kept nil and empty kept empty; structs with unexported fields (times,
// quantities) are copied as values.
func deepCopyValue(v any) any {
	return deepCopyReflect(reflect.ValueOf(v)).Interface()
}

func deepCopyReflect(v reflect.Value) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			p := reflect.New(v.Type().Elem())
			p.Elem().Set(deepCopyReflect(v.Elem()))
			out.Set(p)
		}
	case reflect.Interface:
		if !v.IsNil() {
			out.Set(deepCopyReflect(v.Elem()))
		}
	case reflect.Map:
		if !v.IsNil() {
			m := reflect.MakeMapWithSize(v.Type(), v.Len())
			for it := v.MapRange(); it.Next(); {
				m.SetMapIndex(it.Key(), deepCopyReflect(it.Value()))
			}
			out.Set(m)
		}
	case reflect.Slice:
		if !v.IsNil() {
			s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			for i := range v.Len() {
				s.Index(i).Set(deepCopyReflect(v.Index(i)))
			}
			out.Set(s)
		}
	case reflect.Struct:
		out.Set(v)
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out.Field(i).Set(deepCopyReflect(v.Field(i)))
			}
		}
	default:
		out.Set(v)
	}
	return out
}

// widgetCRD is a structural schema: typed properties where the Go type has them, spec and
// status otherwise x-kubernetes-preserve-unknown-fields so that odd values and fields the
// Go type does not know are kept.
func widgetCRD(group string) *apiextv1.CustomResourceDefinition {
	yes := true
	str := apiextv1.JSONSchemaProps{Type: "string"}
	crd := testenv.NewCRD(group, "Widget", "widgets")
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema = &apiextv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextv1.JSONSchemaProps{
			"spec": {Type: "object", XPreserveUnknownFields: &yes, Properties: map[string]apiextv1.JSONSchemaProps{
				"replicas": {Type: "integer", Format: "int32", Nullable: true},
				"maxSurge": {XIntOrString: true, AnyOf: []apiextv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}},
				"paused":   {Type: "boolean", Nullable: true},
				"enabled":  {Type: "boolean"},
				"big":      {Type: "integer", Format: "int64"},
				"ratio":    {Type: "number"},
				"score":    {Type: "number"},
				"phases":   {Type: "array", Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "string", Enum: []apiextv1.JSON{{Raw: []byte(`"Ready"`)}, {Raw: []byte(`"Done"`)}}}}},
				"interval": str,
				"deadline": {Type: "string", Format: "date-time", Nullable: true},
				"raw":      {Type: "object", XEmbeddedResource: true, XPreserveUnknownFields: &yes},
				"json":     {XPreserveUnknownFields: &yes},
				"size":     {XIntOrString: true, AnyOf: []apiextv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}},
				"labels":   {Type: "object", AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Schema: &str}},
				"secrets": {Type: "array", Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{
					Type: "object", XMapType: nil, Properties: map[string]apiextv1.JSONSchemaProps{"name": str}}}},
				"config": {Type: "object", XPreserveUnknownFields: &yes},
			}},
			"status": {Type: "object", XPreserveUnknownFields: &yes},
		},
	}
	return crd
}

// widgetSpecs are the specs of the Widgets created, as JSON sent to the server.
var widgetSpecs = []string{
	`{}`,
	`{"owner":"me","phase":"Ready","note":"n","unknownToGo":{"a":[1,{"b":null}]},"Owner":"case"}`,
	`{"replicas":0,"paused":false,"maxSurge":"25%","enabled":true,"small":2147483647,"big":9223372036854775807,"ubig":9223372036854775807}`,
	`{"replicas":null,"paused":null,"deadline":null,"big":-9223372036854775808,"maxSurge":7}`,
	`{"ratio":1.5e-300,"score":1.7976931348623157e308,"pscore":-0.0,"phases":["Ready","Done"]}`,
	`{"ratio":1e21,"score":123456789012345678,"pscore":1E-7}`,
	`{"interval":"1m30s","deadline":"2026-11-30T12:00:00Z","size":"1.5Gi","resources":{"limits":{"cpu":"500m","memory":"1e3"},"requests":{"nvidia.com/gpu":"1"}}}`,
	`{"size":100,"deadline":"2026-11-30T13:00:00+02:00"}`,
	`{"raw":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"\u00e9\u003c"}},"json":[1,"a",null,{},[]]}`,
	`{"json":12345678901234567890,"raw":{"apiVersion":"x/v1","kind":"Y","spec":[1e300]}}`,
	`{"labels":{"a":"b","":"","\u00e9":"\ud83d\ude00","l\u0074":"\u0000"},"secrets":[{"name":"s"},{}]}`,
	`{"labels":{},"secrets":[],"phases":[],"targets":[]}`,
	`{"targets":[{"name":"t","port":8080,"weight":5,"selector":{"matchLabels":{"x":"y"}}},{"name":"u","port":"http"}],"ptargets":[null,{"name":"p","port":0}]}`,
	`{"data":"aGVsbG8=","triple":[1,2]}`, `{"data":"","triple":[]}`,
	`{"any":9223372036854775807,"config":{"n":9223372036854775808,"f":1.0,"e":1e2,"neg":-0,"s":"\u2028","l":[],"o":{},"z":null}}`,
	`{"any":[1,2.5,"x",true,null,{"k":-9223372036854775808}],"config":{}}`, `{"any":{},"config":null}`,
	`{"level":"LOUD","levels":{"HIGH":1,"low":-2},"custom":{"x":1},"pcustom":[true],"check":"anything"}`,
	`{"custom":null,"pcustom":null,"check":null}`,
	`{"env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]}`,
}

var widgetStatuses = []string{
	`{"observedGeneration":9223372036854775807,"conditions":[{"type":"Ready","status":"True","observedGeneration":3,"lastTransitionTime":"2026-11-30T12:00:00Z","reason":"R","message":"m\n\"q\""}],"ready":true,"lastRun":"2026-11-30T12:00:00.123456Z"}`,
	`{"conditions":[],"ready":null,"extra":{"a":1}}`,
}

var blobSpecs = []string{
	`{}`, `{"a":null,"b":[],"c":{},"d":1e3,"e":-1.5e-10,"f":9223372036854775807,"g":18446744073709551615,"h":"\u00e9\ud83d\ude00"}`,
	`{"deep":{"deeper":[[[{"x":[null,true,false,0]}]]]}}`,
}

func TestCustomResourceTypesLikeControllerRuntime(t *testing.T) {
	group := testenv.UniqueName(t) + ".crcache.test"
	cp.InstallCRD(t, widgetCRD(group))
	cp.InstallCRD(t, testenv.NewCRD(group, "Blob", "blobs"))
	gv := schema.GroupVersion{Group: group, Version: "v1"}
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	scheme.AddKnownTypes(gv, &Widget{}, &WidgetList{}, &Blob{}, &BlobList{})
	metav1.AddToGroupVersion(scheme, gv)
	ns := cp.Namespace(t)
	// A cache whose informer cannot decode an object never syncs: its reads would block.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cl, err := client.New(cp.AdminConfig(), client.Options{Scheme: scheme})
	require.NoError(t, err)

	create := func(kind, name, body string) {
		t.Helper()
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON([]byte(fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q,"namespace":%q,"labels":{"set":"x"},"annotations":{"a":"\u003cb\u003e \u00e9"}},%s}`,
			gv.String(), kind, name, ns, body))))
		require.NoError(t, cl.Create(ctx, u), "%s %s: %s", kind, name, body)
	}
	for i, spec := range widgetSpecs {
		create("Widget", fmt.Sprintf("w%02d", i), `"spec":`+spec)
	}
	for i, status := range widgetStatuses {
		create("Widget", fmt.Sprintf("s%02d", i), `"spec":{"enabled":true},"status":`+status)
	}
	for i, spec := range blobSpecs {
		create("Blob", fmt.Sprintf("b%02d", i), `"spec":`+spec+`,"status":`+spec)
	}

	opts := cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}}
	start := func(c cache.Cache) {
		run(t, c)
		require.True(t, c.WaitForCacheSync(ctx))
	}
	cr, err := cache.New(cp.AdminConfig(), opts)
	require.NoError(t, err)
	start(cr)
	kx, err := crcache.New(cp.AdminConfig(), opts)
	require.NoError(t, err)
	start(kx)
	// With a transform, each cache hands it the typed object (the unstructured one for
	// unstructured reads in controller-runtime, which has an informer for each).
	var inputsMu sync.Mutex
	inputs := map[string]map[string]bool{} // what each cache's transform was given
	transform := func(cacheName string) toolscache.TransformFunc {
		return func(in any) (any, error) {
			inputsMu.Lock()
			if inputs[cacheName] == nil {
				inputs[cacheName] = map[string]bool{}
			}
			if o, ok := in.(runtime.Object); ok {
				inputs[cacheName][fmt.Sprintf("%T %v", in, o.GetObjectKind().GroupVersionKind())] = true
			}
			inputsMu.Unlock()
			if o, ok := in.(metav1.Object); ok {
				a := map[string]string{"transformed": "yes"}
				for k, v := range o.GetAnnotations() {
					a[k] = v
				}
				o.SetAnnotations(a)
			}
			return in, nil
		}
	}
	opts.DefaultTransform = transform("controller-runtime")
	crT, err := cache.New(cp.AdminConfig(), opts)
	require.NoError(t, err)
	start(crT)
	opts.DefaultTransform = transform("crcache")
	kxT, err := crcache.New(cp.AdminConfig(), opts)
	require.NoError(t, err)
	start(kxT)
	readers := []struct {
		name string
		r    client.Reader
	}{{"server", cl}, {"controller-runtime", cr}, {"crcache", kx}, {"controller-runtime with a transform", crT}, {"crcache with a transform", kxT}}

	// same compares the server's answer with the caches' without a transform, value for
	// value, and the answers of the caches with the transform with each other. Those are
	// compared as JSON: a transformed typed object is kept encoded again, and encoding/json
	// leaves out empty maps and lists of omitempty fields, so that crcache cannot tell an
	// empty one from nil as controller-runtime, which keeps the object, does.
	//
	// Unstructured reads of the caches with the transform are not compared: crcache's
	// unstructured and typed reads of a kind share their objects, which its transform is
	// given typed (the scheme knows the kind), and kept encoded from the Go type, with its
	// fields that are not omitempty; controller-runtime's unstructured informer transforms
	// the unstructured object.
	same := func(what string, got []any) {
		t.Helper()
		for i := 1; i < len(got); i++ {
			ref := 0
			if i >= 3 {
				ref = 3
			}
			if i == ref || ref != 0 && strings.Contains(what, "unstructured") {
				continue
			}
			a, _ := json.Marshal(got[ref])
			b, _ := json.Marshal(got[i])
			if ref == 0 && !reflect.DeepEqual(got[ref], got[i]) || ref != 0 && string(a) != string(b) {
				t.Errorf("%s: %s and %s differ\n%s: %#v\n%s: %#v\n%s\n%s", what, readers[ref].name, readers[i].name,
					readers[ref].name, got[ref], readers[i].name, got[i], a, b)
			}
		}
	}
	// synced waits until both caches hold what the server lists, at its resourceVersions.
	synced := func() {
		t.Helper()
		for _, kind := range []string{"Widget", "Blob"} {
			versions := func(r client.Reader) map[string]string {
				l := &metav1.PartialObjectMetadataList{}
				l.SetGroupVersionKind(gv.WithKind(kind + "List"))
				if err := r.List(ctx, l, client.InNamespace(ns)); err != nil {
					return nil
				}
				out := map[string]string{}
				for _, m := range l.Items {
					out[m.Name] = m.ResourceVersion
				}
				return out
			}
			want := versions(cl)
			testenv.Eventually(t, 10*time.Second, func() bool {
				for _, rd := range readers[1:] {
					if !reflect.DeepEqual(versions(rd.r), want) {
						return false
					}
				}
				return true
			}, "%s: caches do not hold %v", kind, want)
		}
	}
	synced()

	newObj := map[string]map[string]func() client.Object{
		"Widget": {
			"typed": func() client.Object { return &Widget{} },
			"unstructured": func() client.Object {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(gv.WithKind("Widget"))
				return u
			},
			"metadata": func() client.Object {
				m := &metav1.PartialObjectMetadata{}
				m.SetGroupVersionKind(gv.WithKind("Widget"))
				return m
			},
		},
		"Blob": {
			"typed": func() client.Object { return &Blob{} },
			"unstructured": func() client.Object {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(gv.WithKind("Blob"))
				return u
			},
			"metadata": func() client.Object {
				m := &metav1.PartialObjectMetadata{}
				m.SetGroupVersionKind(gv.WithKind("Blob"))
				return m
			},
		},
	}
	newList := map[string]map[string]func() client.ObjectList{
		"Widget": {
			"typed": func() client.ObjectList { return &WidgetList{} },
			"unstructured": func() client.ObjectList {
				u := &unstructured.UnstructuredList{}
				u.SetGroupVersionKind(gv.WithKind("WidgetList"))
				return u
			},
			"metadata": func() client.ObjectList {
				m := &metav1.PartialObjectMetadataList{}
				m.SetGroupVersionKind(gv.WithKind("WidgetList"))
				return m
			},
		},
		"Blob": {
			"typed": func() client.ObjectList { return &BlobList{} },
			"unstructured": func() client.ObjectList {
				u := &unstructured.UnstructuredList{}
				u.SetGroupVersionKind(gv.WithKind("BlobList"))
				return u
			},
			"metadata": func() client.ObjectList {
				m := &metav1.PartialObjectMetadataList{}
				m.SetGroupVersionKind(gv.WithKind("BlobList"))
				return m
			},
		},
	}
	compareAll := func() {
		t.Helper()
		for _, kind := range []string{"Widget", "Blob"} {
			for _, form := range []string{"typed", "unstructured", "metadata"} {
				all := newList[kind]["metadata"]().(*metav1.PartialObjectMetadataList)
				require.NoError(t, cl.List(ctx, all, client.InNamespace(ns)))
				for _, item := range all.Items {
					name := item.Name
					var got []any
					for _, rd := range readers {
						o := newObj[kind][form]()
						require.NoError(t, rd.r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, o), "%s %s %s %s", rd.name, form, kind, name)
						if rd.name == "server" && form == "typed" {
							// controller-runtime's client leaves a typed object's kind empty; its cache sets it.
							o.GetObjectKind().SetGroupVersionKind(gv.WithKind(kind))
						}
						got = append(got, o)
					}
					same(fmt.Sprintf("Get %s %s %s", form, kind, name), got)
					// crcache's shared objects are the same values.
					for i, c := range []cache.Cache{kx, kxT} {
						o := newObj[kind][form]()
						require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, o, client.UnsafeDisableDeepCopy))
						if want := got[[]int{2, 4}[i]]; !reflect.DeepEqual(want, o) {
							t.Errorf("Get %s %s %s with UnsafeDisableDeepCopy from %s differs:\n%#v\n%#v", form, kind, name, readers[[]int{2, 4}[i]].name, want, o)
						}
					}
				}
				for _, opt := range [][]client.ListOption{nil, {client.InNamespace(ns), client.MatchingLabels{"set": "x"}}} {
					var got []any
					for _, rd := range readers {
						l := newList[kind][form]()
						require.NoError(t, rd.r.List(ctx, l, opt...), "%s %s %s", rd.name, form, kind)
						got = append(got, listItems(t, l))
					}
					same(fmt.Sprintf("List %s %s %v", form, kind, opt), got)
				}
			}
		}
	}
	compareAll()

	// Handlers of the typed informers get the same objects (adds, and updates after).
	handlerEvents := map[string]map[string]*events{}
	for _, rd := range readers[1:] {
		handlerEvents[rd.name] = map[string]*events{}
		for kind, obj := range map[string]client.Object{"Widget": &Widget{}, "Blob": &Blob{}} {
			inf, err := rd.r.(cache.Cache).GetInformer(ctx, obj)
			require.NoError(t, err)
			ev := newEvents()
			reg, err := inf.AddEventHandler(ev.handler())
			require.NoError(t, err)
			testenv.Eventually(t, 10*time.Second, reg.HasSynced, "%s handler of %s not synced", rd.name, kind)
			handlerEvents[rd.name][kind] = ev
		}
	}
	compareAdds := func() {
		t.Helper()
		for _, kind := range []string{"Widget", "Blob"} {
			all := newList[kind]["metadata"]().(*metav1.PartialObjectMetadataList)
			require.NoError(t, cl.List(ctx, all, client.InNamespace(ns)))
			for _, item := range all.Items {
				key := ns + "/" + item.Name
				var got []any
				got = append(got, nil) // the server's place in same: controller-runtime's object, below
				for _, rd := range readers[1:] {
					ev := handlerEvents[rd.name][kind]
					testenv.Eventually(t, 10*time.Second, func() bool {
						o, ok := latestEvent(ev, key).(client.Object)
						return ok && o.GetResourceVersion() == item.ResourceVersion
					}, "%s handler: no event of %s %s at %s", rd.name, kind, key, item.ResourceVersion)
					got = append(got, latestEvent(ev, key))
				}
				got[0] = got[1]
				same(fmt.Sprintf("handler event typed %s %s", kind, item.Name), got)
			}
		}
	}
	compareAdds()

	// Objects that reach the caches by their watch: new ones, and changed ones.
	for i, spec := range widgetSpecs[len(widgetSpecs)-6:] {
		create("Widget", fmt.Sprintf("late%02d", i), `"spec":`+spec)
	}
	create("Blob", "late", `"spec":`+blobSpecs[1])
	for i, patch := range []string{
		`{"spec":{"big":-1,"labels":{"a":null,"new":"\u00ff"},"any":{"x":1.5e300},"config":{"n":null,"m":[1e-5]}}}`,
		`{"spec":{"replicas":null,"targets":[{"name":"only","port":"p"}],"deadline":"2026-11-30T23:59:59Z"}}`,
		`{"status":{"conditions":null,"ready":false}}`,
	} {
		w := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: []string{"w15", "w12", "s00"}[i]}}
		require.NoError(t, cl.Patch(ctx, w, client.RawPatch(types.MergePatchType, []byte(patch))), patch)
	}
	b := &Blob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b01"}}
	require.NoError(t, cl.Patch(ctx, b, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"a":{"b":[]},"d":null}}`))))
	synced()
	compareAll()
	compareAdds()
	inputsMu.Lock()
	defer inputsMu.Unlock()
	// controller-runtime's unstructured informers give their transform unstructured
	// objects; crcache's unstructured reads share the typed informer's objects.
	for k := range inputs["controller-runtime"] {
		if strings.HasPrefix(k, "*unstructured.") {
			delete(inputs["controller-runtime"], k)
		}
	}
	require.Equal(t, inputs["controller-runtime"], inputs["crcache"], "transform inputs")
}

// latestEvent returns the object of the last update of key that ev saw, else of its add.
func latestEvent(ev *events, key string) any {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for i := len(ev.updates) - 1; i >= 0; i-- {
		if keyOf(ev.updates[i]) == key {
			return ev.updates[i]
		}
	}
	return ev.adds[key]
}

// listItems returns the items of l sorted by name, each as an any of its own type.
func listItems(t *testing.T, l client.ObjectList) []any {
	items := reflect.ValueOf(l).Elem().FieldByName("Items")
	require.True(t, items.IsValid(), "%T", l)
	var out []any
	for i := range items.Len() {
		out = append(out, items.Index(i).Addr().Interface())
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].(metav1.Object).GetName() < out[j].(metav1.Object).GetName()
	})
	return out
}
