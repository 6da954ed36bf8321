package typedjson

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"github.com/kindex/kindex/internal/testsupport/podgen"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"
)

// Whole Kubernetes objects, compared with sigs.k8s.io/json: the realistic Pods of
// podgen_test.go, and objects of many kinds filled at random (random strings are
// arbitrary Unicode, so json.Marshal escapes some of their characters), each decoded into
// its own type, into PartialObjectMetadata and into map[string]any.

var objectKinds = []struct {
	name string
	new  func() any
}{
	{"Pod", func() any { return new(corev1.Pod) }},
	{"Service", func() any { return new(corev1.Service) }},
	{"ConfigMap", func() any { return new(corev1.ConfigMap) }},
	{"Secret", func() any { return new(corev1.Secret) }},
	{"Node", func() any { return new(corev1.Node) }},
	{"Deployment", func() any { return new(appsv1.Deployment) }},
	{"StatefulSet", func() any { return new(appsv1.StatefulSet) }},
	{"DaemonSet", func() any { return new(appsv1.DaemonSet) }},
	{"Job", func() any { return new(batchv1.Job) }},
	{"CronJob", func() any { return new(batchv1.CronJob) }},
	{"Ingress", func() any { return new(networkingv1.Ingress) }},
	{"RoleBinding", func() any { return new(rbacv1.RoleBinding) }},
	{"CustomResourceDefinition", func() any { return new(apiextensionsv1.CustomResourceDefinition) }},
	{"PartialObjectMetadata", func() any { return new(metav1.PartialObjectMetadata) }},
	{"PodList", func() any { return new(corev1.PodList) }},
}

var alsoInto = []func() any{
	func() any { return new(metav1.PartialObjectMetadata) },
	func() any { return new(map[string]any) },
	func() any { return new(any) },
}

var quantities = []string{"0", "1", "100m", "250m", "1.5", "64Mi", "1Gi", "2Ti", "1e3", "1k", "0.5Gi", "12345678901234567890", "-1"}

// filler fills objects at random, with valid values for the types whose JSON form the
// random filler cannot produce on its own.
func filler(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0.25).NumElements(0, 3).MaxDepth(12).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = resource.MustParse(quantities[c.Intn(len(quantities))])
		},
		func(t *metav1.Time, c randfill.Continue) {
			*t = metav1.Unix(c.Int63n(4e9), 0)
		},
		func(t *metav1.MicroTime, c randfill.Continue) {
			*t = metav1.NewMicroTime(metav1.Unix(c.Int63n(4e9), c.Int63n(1e9)).Time)
		},
		func(x *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*x = intstr.FromInt32(c.Int31() - c.Int31())
			} else {
				*x = intstr.FromString(c.String(12))
			}
		},
		func(r *runtime.RawExtension, c randfill.Continue) {
			if c.Bool() {
				r.Raw = []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"K","n":%d,"s":%q}`, c.Int63(), c.String(8)))
			}
		},
		func(j *apiextensionsv1.JSON, c randfill.Continue) {
			j.Raw = []byte(fmt.Sprintf(`{"a":[%d,%v,null,"%d"],"b":{"c":%g}}`, c.Int63(), c.Bool(), c.Int(), c.Float64()))
		},
		func(f *metav1.FieldsV1, c randfill.Continue) {
			f.SetRawString(`{"f:metadata":{"f:labels":{".":{}}}}`)
		},
		func(p *apiextensionsv1.JSONSchemaPropsOrBool, c randfill.Continue) {
			if p.Allows = c.Bool(); p.Allows && c.Intn(4) == 0 {
				p.Schema = &apiextensionsv1.JSONSchemaProps{Type: "string", Format: c.String(5)}
			}
		},
	)
}

// randomObjects returns n objects of the kind of newV filled at random, as JSON.
func randomObjects(t testing.TB, newV func() any, seed int64, n int) [][]byte {
	var out [][]byte
	f := filler(seed)
	for range n {
		v := newV()
		f.Fill(v)
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		out = append(out, b)
	}
	return out
}

func TestRandomObjects(t *testing.T) {
	n := 25
	if testing.Short() {
		n = 5
	}
	for k, kind := range objectKinds {
		t.Run(kind.name, func(t *testing.T) {
			for _, b := range randomObjects(t, kind.new, int64(k), n) {
				requireSame(t, b, kind.new)
				for _, newV := range alsoInto {
					requireSame(t, b, newV)
				}
			}
		})
	}
}

func TestRealisticPods(t *testing.T) {
	for i := range 50 {
		full := podgen.GenPodJSON(i)
		p := podgen.GenPod(i)
		p.ManagedFields = nil
		stored, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		indented, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range [][]byte{full, stored, indented} {
			requireSame(t, b, func() any { return new(corev1.Pod) })
			for _, newV := range alsoInto {
				requireSame(t, b, newV)
			}
		}
	}
}

// Objects cut short, or with a byte changed, fail or succeed as with sigs.k8s.io/json.
func TestDamagedObjects(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	b := podgen.GenPodJSON(3)
	for i := range 400 {
		var d []byte
		switch i % 3 {
		case 0:
			d = b[:r.Intn(len(b))]
		case 1:
			d = append([]byte(nil), b...)
			chars := "{}[]\":,0-e.\\ntx"
			d[r.Intn(len(d))] = chars[r.Intn(len(chars))]
		default:
			d = append([]byte(nil), b...)
			j := r.Intn(len(d))
			d = append(d[:j], d[j+1:]...)
		}
		requireSame(t, d, func() any { return new(corev1.Pod) })
		requireSame(t, d, func() any { return new(any) })
	}
}
