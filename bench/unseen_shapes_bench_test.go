package bench

// BenchmarkUnseenShapes measures reads on object shapes other than the Pods of
// reads_bench_test.go and query_bench_test.go, against client-go on the same objects in the
// same run: Deployments with large pod templates, ConfigMaps of 50 data keys and a custom
// resource with a 200-element status list. Sub-benchmarks are named shape/operation/subject,
// so that each kindex row has its client-go row beside it.

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgodynamic "k8s.io/client-go/dynamic"
	clientgoinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
	"github.com/kindex/kindex/query"
)

// usShape is one object shape: how to make its objects and what to index on them. Every
// shape has the same four indexes: "eq" (a label, about ten objects per value), "flag" (a
// label about ten objects have), "deep" (a deep or array-valued path, about ten objects per
// looked-up value) and "num" (a number, for a range of ten).
type usShape struct {
	name      string
	gvr       schema.GroupVersionResource
	n         int
	crd       bool
	make      func(i int) *unstructured.Unstructured
	groups    int    // objects i with the same i%groups share eq's and deep's values
	deepExpr  string // the deep index
	deepValue func(g int) string
	numExpr   string
	// client-go's index functions for deep and num, written by hand as a client-go user would.
	cgDeep func(u *unstructured.Unstructured) []string
	cgNum  func(u *unstructured.Unstructured) (float64, bool)
	typed  func() any // a typed object for DecodeInto, nil for none
}

const (
	usNamespaces = 10
	usLo, usHi   = 100, 110 // the range query: usLo <= num < usHi
)

func usNS(i int) string { return fmt.Sprintf("unseen-%02d", i%usNamespaces) }

func usLabels(i, groups int, prefix string) map[string]string {
	l := map[string]string{"app": fmt.Sprintf("%s-%03d", prefix, i%groups), "tier": []string{"web", "api", "worker"}[i%3],
		"team.example.com/owner": fmt.Sprint("team-", i%7)}
	if i%groups == 7 {
		l["canary"] = "true"
	}
	return l
}

func usUnstructured(tb testing.TB, obj any) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		tb.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// usDeployment is a Deployment with a large pod template: an init container and four
// containers, each with twenty environment variables, resources, probes and mounts.
func usDeployment(tb testing.TB, i int) *unstructured.Unstructured {
	const groups = 300
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
	port := int32(8000)
	container := func(name, image string) corev1.Container {
		port += 2
		env := make([]corev1.EnvVar, 0, 20)
		for k := range 18 {
			env = append(env, corev1.EnvVar{Name: fmt.Sprintf("%s_SETTING_%02d", strings.ToUpper(strings.ReplaceAll(name, "-", "_")), k), Value: fmt.Sprintf("value-%d-%d", i, k)})
		}
		env = append(env,
			corev1.EnvVar{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			corev1.EnvVar{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}})
		return corev1.Container{
			Name: name, Image: image, ImagePullPolicy: corev1.PullIfNotPresent, Env: env, Resources: res,
			Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: port, Protocol: corev1.ProtocolTCP}, {Name: "metrics", ContainerPort: port + 1, Protocol: corev1.ProtocolTCP}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}}, PeriodSeconds: 5},
			LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/livez", Port: intstr.FromString("http")}}, InitialDelaySeconds: 10},
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/" + name, ReadOnly: true},
				{Name: "data", MountPath: "/var/lib/" + name}, {Name: "tmp", MountPath: "/tmp"}},
		}
	}
	initContainer := container("migrate", fmt.Sprintf("ghcr.io/acme/migrate:2.%d", i%4))
	initContainer.ReadinessProbe, initContainer.LivenessProbe = nil, nil
	labels := usLabels(i, groups, "app")
	replicas := int32(i)
	d := &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%04d", i), Namespace: usNS(i), Labels: labels,
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "3", "kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 600)}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": labels["app"]}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"prometheus.io/scrape": "true"}},
				Spec: corev1.PodSpec{
					ServiceAccountName: "web",
					InitContainers:     []corev1.Container{initContainer},
					Containers: []corev1.Container{
						container("app", fmt.Sprintf("ghcr.io/acme/svc-%03d:1.0", i%groups)),
						container("envoy", "envoyproxy/envoy:v1.31.2"),
						container("log-shipper", "fluent/fluent-bit:3.1.9"),
						container("otel", "otel/opentelemetry-collector:0.110.0"),
					},
					Volumes: []corev1.Volume{
						{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}},
						{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
						Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
							LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": labels["app"]}}}}}}},
					Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule}},
				},
			},
		},
	}
	return usUnstructured(tb, d)
}

// usConfigMap is a ConfigMap of 50 data keys: 47 short random values, a 1.5 KB file, a
// number and, last in key order, the indexed value.
func usConfigMap(tb testing.TB, i int) *unstructured.Unstructured {
	const groups = 300
	data := testsupport.BigConfigMapData(uint64(i), 47)
	data["config.yaml"] = strings.Repeat(fmt.Sprintf("setting-%d: enabled\n", i), 80)
	data["size-hint"] = strconv.Itoa(i)
	data["zz.bucket"] = fmt.Sprintf("bucket-%03d", i%groups)
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("settings-%04d", i), Namespace: usNS(i), Labels: usLabels(i, groups, "cfg")},
		Data:       data,
	}
	return usUnstructured(tb, cm)
}

// usFleet is a custom resource with nested spec and a 200-element status list, the last
// member in a zone of its own.
func usFleet(i int) *unstructured.Unstructured {
	const groups = 200
	members := make([]any, 200)
	for j := range members {
		zone := fmt.Sprintf("zone-%c", 'a'+j%3)
		if j == len(members)-1 {
			zone = fmt.Sprintf("rack-%03d", i%groups)
		}
		members[j] = map[string]any{"name": fmt.Sprintf("member-%03d", j), "zone": zone, "state": "Ready",
			"address": fmt.Sprintf("10.%d.%d.%d", i/250%256, i%250, j), "load": int64(j % 17)}
	}
	labels := map[string]any{}
	for k, v := range usLabels(i, groups, "fleet") {
		labels[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "unseen.kindex.io/v1", "kind": "Fleet",
		"metadata": map[string]any{"name": fmt.Sprintf("fleet-%04d", i), "namespace": usNS(i), "labels": labels},
		"spec": map[string]any{
			"size": int64(i),
			"placement": map[string]any{"policy": map[string]any{
				"class": fmt.Sprintf("class-%d", i%5),
				"spread": map[string]any{"zones": []any{"zone-a", "zone-b", "zone-c"}, "maxSkew": int64(1),
					"constraints": []any{map[string]any{"key": "topology.kubernetes.io/zone", "operator": "In", "values": []any{"a", "b"}}}},
			}},
			"template": map[string]any{"image": "ghcr.io/acme/member:3.2", "resources": map[string]any{"cpu": "500m", "memory": "1Gi"}},
		},
		"status": map[string]any{"observedGeneration": int64(1), "phase": "Ready", "members": members},
	}}
}

func usShapes(tb testing.TB) []usShape {
	nested := func(path ...string) func(u *unstructured.Unstructured) (float64, bool) {
		return func(u *unstructured.Unstructured) (float64, bool) {
			v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
			if !ok {
				return 0, false
			}
			switch x := v.(type) {
			case int64:
				return float64(x), true
			case float64:
				return x, true
			case string:
				f, err := strconv.ParseFloat(x, 64)
				return f, err == nil
			}
			return 0, false
		}
	}
	return []usShape{
		{
			name: "deployments", gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, n: 3000, groups: 300,
			make:      func(i int) *unstructured.Unstructured { return usDeployment(tb, i) },
			deepExpr:  "{.spec.template.spec.containers[*].image}",
			deepValue: func(g int) string { return fmt.Sprintf("ghcr.io/acme/svc-%03d:1.0", g) },
			numExpr:   "{.spec.replicas}",
			cgDeep: func(u *unstructured.Unstructured) []string {
				cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
				out := make([]string, 0, len(cs))
				for _, c := range cs {
					if img, ok := c.(map[string]any)["image"].(string); ok {
						out = append(out, img)
					}
				}
				return out
			},
			cgNum: nested("spec", "replicas"),
			typed: func() any { return &appsv1.Deployment{} },
		},
		{
			name: "configmaps", gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, n: 3000, groups: 300,
			make:      func(i int) *unstructured.Unstructured { return usConfigMap(tb, i) },
			deepExpr:  "{.data['zz.bucket']}",
			deepValue: func(g int) string { return fmt.Sprintf("bucket-%03d", g) },
			numExpr:   "{.data['size-hint']}",
			cgDeep: func(u *unstructured.Unstructured) []string {
				if v, ok, _ := unstructured.NestedString(u.Object, "data", "zz.bucket"); ok {
					return []string{v}
				}
				return nil
			},
			cgNum: nested("data", "size-hint"),
			typed: func() any { return &corev1.ConfigMap{} },
		},
		{
			name: "fleets", gvr: schema.GroupVersionResource{Group: "unseen.kindex.io", Version: "v1", Resource: "fleets"}, n: 2000, groups: 200, crd: true,
			make:      usFleet,
			deepExpr:  "{.status.members[*].zone}",
			deepValue: func(g int) string { return fmt.Sprintf("rack-%03d", g) },
			numExpr:   "{.spec.size}",
			cgDeep: func(u *unstructured.Unstructured) []string {
				ms, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "members")
				l, _ := ms.([]any)
				out := make([]string, 0, len(l))
				for _, m := range l {
					if z, ok := m.(map[string]any)["zone"].(string); ok {
						out = append(out, z)
					}
				}
				return out
			},
			cgNum: nested("spec", "size"),
		},
	}
}

// usHeap is the heap in use after a full collection.
func usHeap() uint64 {
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

func labelIndex(key string) cache.IndexFunc {
	return func(o any) ([]string, error) {
		m, err := meta.Accessor(o)
		if err != nil {
			return nil, err
		}
		if v, ok := m.GetLabels()[key]; ok {
			return []string{v}, nil
		}
		return nil, nil
	}
}

// usDynamicLabel reads a label of an unstructured object without copying the labels.
func usDynamicLabel(key string) cache.IndexFunc {
	return func(o any) ([]string, error) {
		if v, ok, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "metadata", "labels", key); ok {
			return []string{v}, nil
		}
		return nil, nil
	}
}

// usRun runs a client-go informer until the benchmark ends and waits for its sync.
func usRun(b *testing.B, inf cache.SharedIndexInformer) {
	stop := make(chan struct{})
	b.Cleanup(func() { close(stop) })
	go inf.Run(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		b.Fatal("client-go informer did not sync")
	}
}

// usFixture is what one shape's benchmarks read: client-go's informers and the expected
// answers, from client-go.
type usFixture struct {
	shape   usShape
	cg      cache.Indexer // dynamic informer
	cgMeta  cache.Indexer // metadata informer
	keys    [][2]string   // namespace, name of objects to Get
	eq      string        // a value of eq with about ten objects
	deep    string        // a value of deep with about ten objects
	ns      string        // a namespace to list
	nAll    int
	nNS     int
	nEq     int
	nDeep   int
	nFlag   int
	nRange  int
	eqRaw   [][]byte // the JSON of eq's matches (for client-go's decode)
	heap    map[string]float64
	heapRef uint64
}

func usCountRange(f *usFixture) func() int {
	return func() int {
		c := 0
		for _, o := range f.cg.List() {
			if v, ok := f.shape.cgNum(o.(*unstructured.Unstructured)); ok && v >= usLo && v < usHi {
				c++
			}
		}
		return c
	}
}

// BenchmarkUnseenShapes: `make controlplane` first;
// `go test -run '^$' -bench UnseenShapes -benchtime 2000x -count 3 ./bench/`.
func BenchmarkUnseenShapes(b *testing.B) {
	cp, err := testenv.Start(testenv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer cp.Stop()
	cs := cp.Clientset(b)
	ctx := context.Background()
	for k := range usNamespaces {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: usNS(k)}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	dyn := cp.Dynamic(b)
	for _, shape := range usShapes(b) {
		b.Run(shape.name, func(b *testing.B) {
			if shape.crd {
				crd := testenv.NewCRD(shape.gvr.Group, "Fleet", shape.gvr.Resource)
				cp.InstallCRD(b, crd)
			}
			ri := dyn.Resource(shape.gvr)
			testsupport.CreateN(b, shape.n, func(i int) error {
				_, err := ri.Namespace(usNS(i)).Create(ctx, shape.make(i), metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
				return err
			})
			usBench(b, cp, shape)
		})
	}
}

func usBench(b *testing.B, cp *testenv.ControlPlane, shape usShape) {
	ctx := context.Background()
	f := &usFixture{shape: shape, heap: map[string]float64{}}
	g := 7
	f.ns = usNS(3)

	// client-go's dynamic informer, with the namespace index and the same four indexes.
	before := usHeap()
	dyn, err := clientgodynamic.NewForConfig(cp.AdminConfig())
	if err != nil {
		b.Fatal(err)
	}
	cgi := clientgoinformer.NewDynamicSharedInformerFactory(dyn, 0).ForResource(shape.gvr).Informer()
	if err := cgi.AddIndexers(cache.Indexers{
		"eq":   usDynamicLabel("app"),
		"flag": usDynamicLabel("canary"),
		"deep": func(o any) ([]string, error) { return shape.cgDeep(o.(*unstructured.Unstructured)), nil },
	}); err != nil {
		b.Fatal(err)
	}
	usRun(b, cgi)
	f.cg = cgi.GetIndexer()
	f.heap["client-go"] = float64(usHeap()-before) / float64(len(f.cg.List()))

	// client-go's metadata informer, with the two label indexes.
	before = usHeap()
	mc, err := metadata.NewForConfig(cp.AdminConfig())
	if err != nil {
		b.Fatal(err)
	}
	mi := metadatainformer.NewSharedInformerFactory(mc, 0).ForResource(shape.gvr).Informer()
	if err := mi.AddIndexers(cache.Indexers{"eq": labelIndex("app"), "flag": labelIndex("canary")}); err != nil {
		b.Fatal(err)
	}
	usRun(b, mi)
	f.cgMeta = mi.GetIndexer()
	f.heap["client-go-meta"] = float64(usHeap()-before) / float64(len(f.cgMeta.List()))

	// The expected answers.
	prefix := map[string]string{"deployments": "app", "configmaps": "cfg", "fleets": "fleet"}[shape.name]
	f.eq = fmt.Sprintf("%s-%03d", prefix, g)
	f.deep = shape.deepValue(g)
	f.nAll = len(f.cg.List())
	ns, _ := f.cg.ByIndex(cache.NamespaceIndex, f.ns)
	f.nNS = len(ns)
	eq, _ := f.cg.ByIndex("eq", f.eq)
	f.nEq = len(eq)
	deep, _ := f.cg.ByIndex("deep", f.deep)
	f.nDeep = len(deep)
	flag, _ := f.cg.ByIndex("flag", "true")
	f.nFlag = len(flag)
	f.nRange = usCountRange(f)()
	for _, o := range eq {
		raw, err := o.(*unstructured.Unstructured).MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		f.eqRaw = append(f.eqRaw, raw)
	}
	for i := 0; i < shape.n; i += shape.n / 64 {
		f.keys = append(f.keys, [2]string{usNS(i), shape.make(i).GetName()})
	}
	jsonBytes := 0
	for _, raw := range f.eqRaw {
		jsonBytes += len(raw)
	}
	b.Logf("%s: %d objects, %d in %s, eq %d, deep %d, flag %d, range %d; %d bytes of JSON per object (managedFields included)",
		shape.name, f.nAll, f.nNS, f.ns, f.nEq, f.nDeep, f.nFlag, f.nRange, jsonBytes/max(len(f.eqRaw), 1))
	if f.nEq == 0 || f.nDeep == 0 || f.nFlag == 0 || f.nRange == 0 {
		b.Fatal("a lookup has no matches")
	}

	// kindex, each mode with the same indexes (metadata-only: the two labels).
	full := map[string]string{"eq": "{.metadata.labels.app}", "flag": "{.metadata.labels.canary}", "deep": shape.deepExpr, "num": shape.numExpr}
	labelsOnly := map[string]string{"eq": "{.metadata.labels.app}", "flag": "{.metadata.labels.canary}"}
	start := func(name string, fact interface {
		Start(context.Context) error
		Shutdown()
	}, err error) {
		if err != nil {
			b.Fatal(err)
		}
		fctx, cancel := context.WithCancel(ctx)
		b.Cleanup(func() { cancel(); fact.Shutdown() })
		if err := fact.Start(fctx); err != nil {
			b.Fatal(err)
		}
	}
	sync := func(name string, wait func(context.Context) error, count func() int) {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := wait(wctx); err != nil {
			b.Fatal(name, err)
		}
		if got := count(); got != f.nAll {
			b.Fatalf("%s: %d objects, want %d", name, got, f.nAll)
		}
	}

	type dynSubject struct {
		name string
		inf  *dynamicinformer.Informer
	}
	var dynSubjects []dynSubject
	for _, m := range []struct {
		name string
		new  func() (*dynamicinformer.Factory, error)
	}{
		{"unstructured", func() (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewFactory(cp.AdminConfig(), dynamicinformer.Options{Indexes: full})
		}},
		{"compact", func() (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{Indexes: full}, dynamicinformer.CompactOptions{})
		}},
	} {
		before := usHeap()
		fact, err := m.new()
		start(m.name, fact, err)
		inf, err := fact.InformerForGVR(ctx, shape.gvr)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(inf.Release)
		sync(m.name, inf.WaitForSync, func() int { return inf.Status().Objects })
		f.heap[m.name] = float64(usHeap()-before) / float64(f.nAll)
		dynSubjects = append(dynSubjects, dynSubject{m.name, inf})
	}
	// The compact mode compressed, for its heap only.
	{
		before := usHeap()
		fact, err := dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{Indexes: full}, dynamicinformer.CompactOptions{Compress: true})
		if err != nil {
			b.Fatal(err)
		}
		fctx, cancel := context.WithCancel(ctx)
		if err := fact.Start(fctx); err != nil {
			b.Fatal(err)
		}
		inf, err := fact.InformerForGVR(ctx, shape.gvr)
		if err != nil {
			b.Fatal(err)
		}
		sync("compact-compressed", inf.WaitForSync, func() int { return inf.Status().Objects })
		f.heap["compact-compressed"] = float64(usHeap()-before) / float64(f.nAll)
		inf.Release()
		cancel()
		fact.Shutdown()
	}
	before = usHeap()
	mf, err := metadataonly.NewFactory(cp.AdminConfig(), metadataonly.Options{Indexes: labelsOnly})
	start("metadata", mf, err)
	minf, err := mf.InformerForGVR(ctx, shape.gvr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(minf.Release)
	sync("metadata", minf.WaitForSync, func() int { return minf.Status().Objects })
	f.heap["metadata"] = float64(usHeap()-before) / float64(f.nAll)

	for _, subj := range []string{"client-go", "client-go-meta", "unstructured", "compact", "compact-compressed", "metadata"} {
		b.Run("heap/"+subj, func(b *testing.B) {
			for b.Loop() {
			}
			b.ReportMetric(f.heap[subj], "heap-B/object")
			b.ReportMetric(f.heap[subj]/f.heap["client-go"], "x-client-go")
		})
	}

	// The operations, each first for client-go, then for every kindex mode.
	op := func(name string) string { return name + "/" }
	run := func(name string, fn func(b *testing.B)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			fn(b)
		})
	}
	check := func(b *testing.B, got, want int, err error) {
		if err != nil || got != want {
			b.Fatalf("%v: %d results, want %d", err, got, want)
		}
	}
	ctxb := context.Background()
	eqQ := query.Query{Conditions: []query.Condition{query.Eq("eq", f.eq)}}
	deepQ := query.Query{Conditions: []query.Condition{query.Eq("deep", f.deep)}}
	flagQ := query.Query{Conditions: []query.Condition{query.Has("flag")}}
	rangeQ := query.Query{Conditions: []query.Condition{query.Ge("num", strconv.Itoa(usLo)), query.Lt("num", strconv.Itoa(usHi))}}

	// Get by key.
	run(op("Get")+"client-go", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			k := f.keys[i%len(f.keys)]
			if _, ok, err := f.cg.GetByKey(k[0] + "/" + k[1]); !ok || err != nil {
				b.Fatal(k, err)
			}
		}
	})
	run(op("Get")+"client-go-meta", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			k := f.keys[i%len(f.keys)]
			if _, ok, err := f.cgMeta.GetByKey(k[0] + "/" + k[1]); !ok || err != nil {
				b.Fatal(k, err)
			}
		}
	})
	for _, s := range dynSubjects {
		run(op("Get")+s.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				k := f.keys[i%len(f.keys)]
				if _, err := s.inf.Get(k[0], k[1]); err != nil {
					b.Fatal(err)
				}
			}
		})
		run(op("Get")+s.name+"-item", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				k := f.keys[i%len(f.keys)]
				if _, err := s.inf.GetItem(k[0], k[1]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run(op("Get")+"metadata", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			k := f.keys[i%len(f.keys)]
			if _, err := minf.Get(k[0], k[1]); err != nil {
				b.Fatal(err)
			}
		}
	})

	// List all, and one namespace.
	run(op("ListAll")+"client-go", func(b *testing.B) {
		for b.Loop() {
			check(b, len(f.cg.List()), f.nAll, nil)
		}
	})
	run(op("ListAll")+"client-go-meta", func(b *testing.B) {
		for b.Loop() {
			check(b, len(f.cgMeta.List()), f.nAll, nil)
		}
	})
	run(op("ListNS")+"client-go", func(b *testing.B) {
		for b.Loop() {
			got, err := f.cg.ByIndex(cache.NamespaceIndex, f.ns)
			check(b, len(got), f.nNS, err)
		}
	})
	run(op("ListNS")+"client-go-meta", func(b *testing.B) {
		for b.Loop() {
			got, err := f.cgMeta.ByIndex(cache.NamespaceIndex, f.ns)
			check(b, len(got), f.nNS, err)
		}
	})
	for _, s := range dynSubjects {
		if s.name != "compact" { // the compact mode's List decodes every object
			run(op("ListAll")+s.name, func(b *testing.B) {
				for b.Loop() {
					got, err := s.inf.List(nil)
					check(b, len(got), f.nAll, err)
				}
			})
			run(op("ListNS")+s.name, func(b *testing.B) {
				for b.Loop() {
					got, err := s.inf.Namespace(f.ns).List(nil)
					check(b, len(got), f.nNS, err)
				}
			})
		}
		run(op("ListAll")+s.name+"-items", func(b *testing.B) {
			for b.Loop() {
				got, err := s.inf.ListItems("")
				check(b, len(got), f.nAll, err)
			}
		})
		run(op("ListNS")+s.name+"-items", func(b *testing.B) {
			for b.Loop() {
				got, err := s.inf.ListItems(f.ns)
				check(b, len(got), f.nNS, err)
			}
		})
	}
	run(op("ListAll")+"metadata", func(b *testing.B) {
		for b.Loop() {
			got, err := minf.List(nil)
			check(b, len(got), f.nAll, err)
		}
	})
	run(op("ListNS")+"metadata", func(b *testing.B) {
		for b.Loop() {
			got, err := minf.Namespace(f.ns).List(nil)
			check(b, len(got), f.nNS, err)
		}
	})

	// Index lookups: an equality on a label, on the deep index, an exists and a range.
	byIndex := func(name string, ix cache.Indexer, index, value string, want int) {
		run(name, func(b *testing.B) {
			for b.Loop() {
				got, err := ix.ByIndex(index, value)
				check(b, len(got), want, err)
			}
		})
	}
	byIndex(op("Eq")+"client-go", f.cg, "eq", f.eq, f.nEq)
	byIndex(op("Eq")+"client-go-meta", f.cgMeta, "eq", f.eq, f.nEq)
	byIndex(op("Deep")+"client-go", f.cg, "deep", f.deep, f.nDeep)
	byIndex(op("Exists")+"client-go", f.cg, "flag", "true", f.nFlag)
	byIndex(op("Exists")+"client-go-meta", f.cgMeta, "flag", "true", f.nFlag)
	// An exists in client-go: every value of the index, then ByIndex of each.
	run(op("Exists")+"client-go-allvalues", func(b *testing.B) {
		for b.Loop() {
			var got []any
			for _, v := range f.cg.ListIndexFuncValues("flag") {
				objs, err := f.cg.ByIndex("flag", v)
				if err != nil {
					b.Fatal(err)
				}
				got = append(got, objs...)
			}
			check(b, len(got), f.nFlag, nil)
		}
	})
	run(op("Range")+"client-go-list-filter", func(b *testing.B) {
		count := usCountRange(f)
		for b.Loop() {
			check(b, count(), f.nRange, nil)
		}
	})
	run(op("Count")+"client-go", func(b *testing.B) {
		for b.Loop() {
			got, err := f.cg.IndexKeys("eq", f.eq)
			check(b, len(got), f.nEq, err)
		}
	})
	run(op("CountBy")+"client-go", func(b *testing.B) {
		for b.Loop() {
			by := map[string]int{}
			for _, v := range f.cg.ListIndexFuncValues("eq") {
				keys, _ := f.cg.IndexKeys("eq", v)
				by[v] = len(keys)
			}
			check(b, by[f.eq], f.nEq, nil)
		}
	})
	type lookup struct {
		name string
		q    query.Query
		want int
	}
	lookups := []lookup{{"Eq", eqQ, f.nEq}, {"Deep", deepQ, f.nDeep}, {"Exists", flagQ, f.nFlag}, {"Range", rangeQ, f.nRange}}
	for _, s := range dynSubjects {
		for _, l := range lookups {
			run(op(l.name)+s.name, func(b *testing.B) {
				for b.Loop() {
					res, err := s.inf.Query(ctxb, l.q)
					check(b, len(res.Items), l.want, err)
				}
			})
			run(op(l.name)+s.name+"-items", func(b *testing.B) {
				for b.Loop() {
					res, err := s.inf.QueryItems(ctxb, l.q)
					check(b, len(res.Items), l.want, err)
				}
			})
		}
		run(op("Count")+s.name, func(b *testing.B) {
			for b.Loop() {
				n, err := s.inf.Count(ctxb, eqQ)
				check(b, n, f.nEq, err)
			}
		})
		run(op("CountBy")+s.name, func(b *testing.B) {
			for b.Loop() {
				by, err := s.inf.CountBy(ctxb, query.Query{}, "eq")
				check(b, by[f.eq], f.nEq, err)
			}
		})
	}
	for _, l := range []lookup{{"Eq", eqQ, f.nEq}, {"Exists", flagQ, f.nFlag}} {
		run(op(l.name)+"metadata", func(b *testing.B) {
			for b.Loop() {
				res, err := minf.Query(ctxb, l.q)
				check(b, len(res.Items), l.want, err)
			}
		})
	}
	run(op("Count")+"metadata", func(b *testing.B) {
		for b.Loop() {
			n, err := minf.Count(ctxb, eqQ)
			check(b, n, f.nEq, err)
		}
	})
	run(op("CountBy")+"metadata", func(b *testing.B) {
		for b.Loop() {
			by, err := minf.CountBy(ctxb, query.Query{}, "eq")
			check(b, by[f.eq], f.nEq, err)
		}
	})

	// Decoding eq's results: to unstructured (client-go's decoder on the same JSON against
	// the compact mode's Item.Object), and to the typed object (client-go's converter from
	// its cached map against Item.DecodeInto).
	var compact *dynamicinformer.Informer
	for _, s := range dynSubjects {
		if s.name == "compact" {
			compact = s.inf
		}
	}
	res, err := compact.QueryItems(ctxb, eqQ)
	check(b, len(res.Items), f.nEq, err)
	its := res.Items
	perResult := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*f.nEq), "ns/result")
	}
	run(op("DecodeUnstructured")+"client-go", func(b *testing.B) {
		for b.Loop() {
			for _, raw := range f.eqRaw {
				if _, _, err := unstructured.UnstructuredJSONScheme.Decode(raw, nil, &unstructured.Unstructured{}); err != nil {
					b.Fatal(err)
				}
			}
		}
		perResult(b)
	})
	run(op("DecodeUnstructured")+"compact", func(b *testing.B) {
		for b.Loop() {
			for _, it := range its {
				if _, err := it.Object(); err != nil {
					b.Fatal(err)
				}
			}
		}
		perResult(b)
	})
	if shape.typed != nil {
		cgEq, _ := f.cg.ByIndex("eq", f.eq)
		run(op("DecodeTyped")+"client-go", func(b *testing.B) {
			for b.Loop() {
				for _, o := range cgEq {
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.(*unstructured.Unstructured).Object, shape.typed()); err != nil {
						b.Fatal(err)
					}
				}
			}
			perResult(b)
		})
		for _, s := range dynSubjects {
			res, err := s.inf.QueryItems(ctxb, eqQ)
			check(b, len(res.Items), f.nEq, err)
			run(op("DecodeTyped")+s.name, func(b *testing.B) {
				for b.Loop() {
					for _, it := range res.Items {
						if err := it.DecodeInto(shape.typed()); err != nil {
							b.Fatal(err)
						}
					}
				}
				perResult(b)
			})
		}
	}
}
