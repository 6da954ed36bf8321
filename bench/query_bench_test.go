package bench

// Benchmarks of kindex's indexes and queries (results: README.md, "Indexes and queries"):
//
//   - BenchmarkQueryLookup: lookup latency on 100,000 realistic unstructured Pods in kindex's
//     store with five JSONPath indexes (indexfuncs), against client-go's Indexer with the
//     same index functions: equality, and an AND of two indexes, namespaced and not.
//   - BenchmarkQuerySyncIndexCost: the cost of keeping five JSONPath indexes while 20,000
//     Pods go through what an informer does per object on its initial sync (decode the JSON,
//     strip managedFields, add to the store), with and without the indexes.
//   - BenchmarkQueryInformerSync: the same question end to end: a real dynamic informer
//     against a test apiserver (2,000 Pods), runs with and without five indexes registered
//     before start, alternating, median of several.
//   - BenchmarkQueryOwnerIndexMemory: the heap cost of the owner index (uid and owner-uid) on
//     100,000 metadata-only objects.

import (
	"context"
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"slices"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/internal/store"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/query"
)

// qbIndexes are five indexes a CRD-agnostic tool typically registers on Pods.
var qbIndexes = []struct{ name, expr string }{
	{"node", "{.spec.nodeName}"},
	{"app", "{.metadata.labels['app.kubernetes.io/name']}"},
	{"phase", "{.status.phase}"},
	{"image", "{.spec.containers[*].image}"},
	{"ready", `{.status.conditions[?(@.type=="Ready")].status}`},
}

var qbApps = []string{"checkout", "cart", "catalog", "payments", "search", "frontend", "auth", "shipping", "reviews", "ads"}

const (
	qbNamespaces = 100
	qbNodes      = 500
)

// qbPod returns the i-th generated Pod: a ReplicaSet-owned application container and a
// sidecar with env, ports, resources, probes and mounts, labels with dotted keys, a
// kubelet-like status and managedFields from two managers, as an apiserver returns it.
func qbPod(i int) *corev1.Pod {
	// Namespace, node and app are independent: a splitmix64 hash of i picks each.
	r := uint64(i) + 0x9e3779b97f4a7c15
	r = (r ^ r>>30) * 0xbf58476d1ce4e5b9
	r = (r ^ r>>27) * 0x94d049bb133111eb
	r ^= r >> 31
	a := int(r % uint64(len(qbApps)))
	app := qbApps[a]
	hash := fmt.Sprintf("%08x", 0x5d8b1e3f^a)
	ns := fmt.Sprintf("team-%02d", r>>8%qbNamespaces)
	node := fmt.Sprintf("worker-%03d", r>>24%qbNodes)
	start := metav1.NewTime(time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC).Add(time.Duration(i%3600) * time.Second))
	t := true
	ready := corev1.ConditionTrue
	phase := corev1.PodRunning
	if i%17 == 0 {
		ready, phase = corev1.ConditionFalse, corev1.PodPending
	}
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
	}
	mount := corev1.VolumeMount{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}
	fields := func(s string) *metav1.FieldsV1 { return metav1.NewFieldsV1(s) }
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%s-%06d", app, hash, i), GenerateName: app + "-" + hash + "-", Namespace: ns,
			UID: types.UID(fmt.Sprintf("0f8e3c2a-6b1d-4e7f-9a2c-%012d", i)), ResourceVersion: fmt.Sprint(1000 + i),
			CreationTimestamp: start,
			Labels: map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/instance": app + "-prod",
				"pod-template-hash": hash, "team.example.com/owner": fmt.Sprint("team-", i%7)},
			Annotations: map[string]string{"kubectl.kubernetes.io/default-container": "app"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-" + hash,
				UID: types.UID(fmt.Sprintf("a1b2c3d4-e5f6-4a7b-8c9d-%012d", i%1000)), Controller: &t, BlockOwnerDeletion: &t}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &start, FieldsType: "FieldsV1",
					FieldsV1: fields(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/name":{},"f:pod-template-hash":{},"f:team.example.com/owner":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"x\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{},"f:readinessProbe":{},"f:resources":{},"f:volumeMounts":{}},"k:{\"name\":\"log-shipper\"}":{".":{},"f:image":{},"f:name":{},"f:resources":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:serviceAccountName":{},"f:volumes":{}}}`)},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &start, FieldsType: "FieldsV1", Subresource: "status",
					FieldsV1: fields(`{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{},"f:startTime":{}}}`)},
			},
		},
		Spec: corev1.PodSpec{
			NodeName:           node,
			ServiceAccountName: app,
			Containers: []corev1.Container{{
				Name: "app", Image: fmt.Sprintf("ghcr.io/acme/%s:v1.%d.%d", app, i%9, i%4), ImagePullPolicy: corev1.PullIfNotPresent,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"},
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}},
				Resources:      res,
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}}, PeriodSeconds: 5},
				VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/" + app, ReadOnly: true}, mount},
			}, {
				Name: "log-shipper", Image: "fluent/fluent-bit:3.1.9", Resources: res, VolumeMounts: []corev1.VolumeMount{mount},
			}},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}},
				{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}},
			},
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
		},
		Status: corev1.PodStatus{
			Phase: phase,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.PodReady, Status: ready, LastTransitionTime: start},
				{Type: corev1.ContainersReady, Status: ready, LastTransitionTime: start},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: start},
			},
			HostIP: "10.0.0." + node[len(node)-3:], PodIP: fmt.Sprintf("10.244.%d.%d", i/250%256, i%250+2),
			StartTime: &start, QOSClass: corev1.PodQOSBurstable,
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", Ready: ready == corev1.ConditionTrue, Image: fmt.Sprintf("ghcr.io/acme/%s:v1.%d.%d", app, i%9, i%4),
					ImageID: "ghcr.io/acme/" + app + "@sha256:4c1e997385b8fb4ad4d1d3c7e5af7ff3f882e04d87e8b1e2d0d2e0e0c8a9b1f2", Started: &t,
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}},
				{Name: "log-shipper", Ready: true, Image: "fluent/fluent-bit:3.1.9", Started: &t,
					ImageID: "fluent/fluent-bit@sha256:8d3b5f9c2a1e4f6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
					State:   corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}},
			},
		},
	}
}

var qbJSON struct {
	once sync.Once
	pods [][]byte // compact JSON of qbPod(i), as an apiserver sends it
}

// qbPodJSON returns the JSON of the first n generated Pods (at most 100,000).
func qbPodJSON(tb testing.TB, n int) [][]byte {
	qbJSON.once.Do(func() {
		qbJSON.pods = make([][]byte, 100_000)
		for i := range qbJSON.pods {
			b, err := json.Marshal(qbPod(i))
			if err != nil {
				panic(err)
			}
			qbJSON.pods[i] = b
		}
	})
	return qbJSON.pods[:n]
}

func qbIndexFuncs(tb testing.TB) map[string]cache.IndexFunc {
	out := map[string]cache.IndexFunc{}
	for _, ix := range qbIndexes {
		fn, err := indexfuncs.JSONPath(ix.expr)
		if err != nil {
			tb.Fatal(err)
		}
		out[ix.name] = fn
	}
	return out
}

var qbLookup struct {
	once    sync.Once
	kindex  *store.Store
	clientg cache.Indexer
}

// BenchmarkQueryLookup: 100,000 Pods; 200 per node, 1,000 per namespace, 10,000 per app.
func BenchmarkQueryLookup(b *testing.B) {
	qbLookup.once.Do(func() {
		pods := make([]*unstructured.Unstructured, 100_000)
		for i := range pods {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(qbPod(i))
			if err != nil {
				b.Fatal(err)
			}
			pods[i] = &unstructured.Unstructured{Object: m}
			pods[i].SetManagedFields(nil)
		}
		fns := qbIndexFuncs(b)
		s := store.New(store.Options{})
		ci := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		for name, fn := range fns {
			if err := s.AddIndex(name, store.IndexFunc(fn)); err != nil {
				b.Fatal(err)
			}
		}
		if err := ci.AddIndexers(fns); err != nil {
			b.Fatal(err)
		}
		for _, p := range pods {
			_ = s.Add(p)
			_ = ci.Add(p)
		}
		qbLookup.kindex, qbLookup.clientg = s, ci
	})
	s, ci := qbLookup.kindex, qbLookup.clientg
	const node, app, ns = "worker-007", "cart", "team-07"
	inNS := func(objs []any) []any {
		out := objs[:0:0]
		for _, o := range objs {
			if o.(*unstructured.Unstructured).GetNamespace() == ns {
				out = append(out, o)
			}
		}
		return out
	}
	matchApp := func(objs []any) []any {
		out := objs[:0:0]
		for _, o := range objs {
			// A map read, not GetLabels, which copies the labels.
			if v, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "metadata", "labels", "app.kubernetes.io/name"); v == app {
				out = append(out, o)
			}
		}
		return out
	}
	cases := []struct {
		name     string
		q        query.Query
		clientgo func() []any // the same answer from client-go's Indexer: one index, then filter
	}{
		{"eq", query.Query{Conditions: []query.Condition{query.Eq("node", node)}},
			func() []any { r, _ := ci.ByIndex("node", node); return r }},
		{"eq-namespaced", query.Query{Namespace: ns, Conditions: []query.Condition{query.Eq("node", node)}},
			func() []any { r, _ := ci.ByIndex("node", node); return inNS(r) }},
		{"and", query.Query{Conditions: []query.Condition{query.Eq("app", app), query.Eq("node", node)}},
			func() []any { r, _ := ci.ByIndex("node", node); return matchApp(r) }},
		{"and-namespaced", query.Query{Namespace: ns, Conditions: []query.Condition{query.Eq("app", app), query.Eq("phase", "Running")}},
			func() []any {
				r, _ := ci.ByIndex(cache.NamespaceIndex, ns)
				return qbFilterPhase(matchApp(r), "Running")
			}},
	}
	for _, tc := range cases {
		items, _, _, err := s.Query(context.Background(), tc.q, store.QueryOptions{})
		if err != nil || len(items) != len(tc.clientgo()) || len(items) == 0 {
			b.Fatalf("%s: kindex %d results (%v), client-go %d", tc.name, len(items), err, len(tc.clientgo()))
		}
		b.Run(tc.name+"/kindex", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if items, _, _, err := s.Query(context.Background(), tc.q, store.QueryOptions{}); err != nil || len(items) == 0 {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/client-go", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(tc.clientgo()) == 0 {
					b.Fatal("no results")
				}
			}
		})
	}
}

func qbFilterPhase(objs []any, phase string) []any {
	out := objs[:0:0]
	for _, o := range objs {
		if p, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "status", "phase"); p == phase {
			out = append(out, o)
		}
	}
	return out
}

func qbFilterNode(objs []any, node string) []any {
	out := objs[:0:0]
	for _, o := range objs {
		if n, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "spec", "nodeName"); n == node {
			out = append(out, o)
		}
	}
	return out
}

// BenchmarkQuerySyncIndexCost feeds 20,000 Pods through an informer's per-object work on
// initial sync (decode, strip managedFields, store Get and Add) into kindex's store, with
// no index and with the five JSONPath indexes, alternating, and reports indexed/plain of the
// medians, in CPU time of the process (stable on a shared machine, and the work is all
// CPU) and in wall time.
func BenchmarkQuerySyncIndexCost(b *testing.B) {
	const n = 20_000
	raw := qbPodJSON(b, n)
	fns := qbIndexFuncs(b)
	feed := func(indexed bool) (cpu, wall time.Duration) {
		s := store.New(store.Options{})
		if indexed {
			for name, fn := range fns {
				_ = s.AddIndex(name, store.IndexFunc(fn))
			}
		}
		goruntime.GC()
		cpu0, begin := qbCPU(), time.Now()
		for _, b := range raw {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(b); err != nil {
				panic(err)
			}
			u.SetManagedFields(nil)
			if _, exists, _ := s.Get(u); !exists {
				_ = s.Add(u)
			}
		}
		return qbCPU() - cpu0, time.Since(begin)
	}
	var plain, indexed, plainWall, indexedWall []time.Duration
	for i := 0; b.Loop(); i++ {
		for _, ix := range []bool{i%2 == 1, i%2 == 0} {
			cpu, wall := feed(ix)
			if ix {
				indexed, indexedWall = append(indexed, cpu), append(indexedWall, wall)
			} else {
				plain, plainWall = append(plain, cpu), append(plainWall, wall)
			}
		}
	}
	qbReport(b, plain, indexed, plainWall, indexedWall)
}

// qbReport reports the medians of CPU and wall times and their ratios.
func qbReport(b *testing.B, plain, indexed, plainWall, indexedWall []time.Duration) {
	p, x := qbMedian(plain), qbMedian(indexed)
	pw, xw := qbMedian(plainWall), qbMedian(indexedWall)
	b.Logf("medians of %d: CPU plain %v indexed %v (x%.3f); wall plain %v indexed %v (x%.3f)",
		len(plain), p, x, float64(x)/float64(p), pw, xw, float64(xw)/float64(pw))
	b.ReportMetric(float64(p.Milliseconds()), "plain-cpu-ms")
	b.ReportMetric(float64(x.Milliseconds()), "indexed-cpu-ms")
	b.ReportMetric(float64(x)/float64(p), "indexed/plain-cpu")
	b.ReportMetric(float64(xw)/float64(pw), "indexed/plain-wall")
}

// qbCPU is the CPU time (user and system) the process has used.
func qbCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkQueryInformerSync measures a real dynamic informer's initial sync of 2,000 Pods
// from a test apiserver (started by the benchmark; `make controlplane` first), alternating
// runs without and with the five indexes registered before start; each b.N iteration is one
// pair. It reports the medians and their ratios (wall time, and the CPU time of this process,
// which excludes the apiserver) and fails when the wall-time ratio exceeds 1.10.
func BenchmarkQueryInformerSync(b *testing.B) {
	const n = 2000
	cp, err := testenv.Start(testenv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer cp.Stop()
	ctx := context.Background()
	ns := cp.Namespace(b)
	qbSeedPods(b, cp, ns, n)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	// One discovery client for every run, so that no run times API discovery.
	disc, err := discovery.New(cp.AdminConfig(), discovery.Options{})
	if err != nil {
		b.Fatal(err)
	}
	dctx, dcancel := context.WithCancel(ctx)
	defer func() { dcancel(); disc.Wait() }()
	if err := disc.Start(dctx); err != nil {
		b.Fatal(err)
	}
	if _, err := disc.ResolveGVR(ctx, gvr); err != nil {
		b.Fatal(err)
	}
	syncOnce := func(indexed bool) (cpu, wall time.Duration) {
		goruntime.GC()
		f, err := dynamicinformer.NewFactory(cp.AdminConfig(), dynamicinformer.Options{Namespace: ns, Discovery: disc})
		if err != nil {
			b.Fatal(err)
		}
		fctx, cancel := context.WithCancel(ctx)
		defer func() { cancel(); f.Shutdown() }()
		if err := f.Start(fctx); err != nil {
			b.Fatal(err)
		}
		cpu0, begin := qbCPU(), time.Now()
		inf, err := f.InformerForGVR(ctx, gvr)
		if err != nil {
			b.Fatal(err)
		}
		defer inf.Release()
		if indexed {
			for _, ix := range qbIndexes {
				if err := inf.AddIndex(ix.name, ix.expr); err != nil {
					b.Fatal(err)
				}
			}
		}
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
		defer wcancel()
		if err := inf.WaitForSync(wctx); err != nil {
			b.Fatal(err)
		}
		cpu, wall = qbCPU()-cpu0, time.Since(begin)
		if got := len(testsupport.Must(inf.List(nil))); got != n {
			b.Fatalf("synced %d pods, want %d", got, n)
		}
		if indexed {
			res, err := inf.Query(ctx, query.Query{Conditions: []query.Condition{query.Eq("node", "worker-007")}})
			want := qbFilterNode(qbAny(testsupport.Must(inf.List(nil))), "worker-007")
			if err != nil || len(res.Items) != len(want) {
				b.Fatalf("query: %v, %d items, want %d", err, len(res.Items), len(want))
			}
		}
		return cpu, wall
	}
	syncOnce(false) // warm up: discovery, connections, the apiserver's watch cache
	var plain, indexed, plainWall, indexedWall []time.Duration
	for i := 0; b.Loop(); i++ {
		for _, ix := range []bool{i%2 == 1, i%2 == 0} {
			cpu, wall := syncOnce(ix)
			if ix {
				indexed, indexedWall = append(indexed, cpu), append(indexedWall, wall)
			} else {
				plain, plainWall = append(plain, cpu), append(plainWall, wall)
			}
		}
	}
	qbReport(b, plain, indexed, plainWall, indexedWall)
	if ratio := float64(qbMedian(indexedWall)) / float64(qbMedian(plainWall)); len(plain) >= 3 && ratio > 1.10 {
		b.Errorf("five indexes add %.1f%% to the sync time, more than 10%%", (ratio-1)*100)
	}
}

// qbSeedPods creates n generated Pods in ns, with their status (testsupport.CreateN).
func qbSeedPods(b *testing.B, cp *testenv.ControlPlane, ns string, n int) {
	cs := cp.Clientset(b)
	ctx := context.Background()
	testsupport.CreateN(b, n, func(i int) error {
		p := qbPod(i)
		p.Namespace, p.ResourceVersion, p.UID, p.ManagedFields, p.OwnerReferences[0].UID = ns, "", "", nil, types.UID(fmt.Sprintf("a1b2c3d4-e5f6-4a7b-8c9d-%012d", i%1000))
		status := p.Status
		created, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{FieldManager: "kube-controller-manager"})
		if err != nil {
			return err
		}
		created.Status = status
		_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: "kubelet"})
		return err
	})
}

// BenchmarkQueryOwnerIndexMemory reports the heap the owner index (uid and owner-uid) adds
// per object, on 100,000 metadata-only Pods with one owner reference each (100 per owner).
func BenchmarkQueryOwnerIndexMemory(b *testing.B) {
	const n = 100_000
	objs := make([]*metav1.PartialObjectMetadata, n)
	for i := range objs {
		p := qbPod(i)
		objs[i] = &metav1.PartialObjectMetadata{TypeMeta: p.TypeMeta, ObjectMeta: p.ObjectMeta}
		objs[i].ManagedFields = nil
	}
	heap := func() uint64 {
		goruntime.GC()
		var m goruntime.MemStats
		goruntime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	owner, _ := indexfuncs.Builtin(indexfuncs.IndexOwnerUID)
	uid, _ := indexfuncs.Builtin(indexfuncs.IndexUID)
	var plain, indexed []float64
	for b.Loop() {
		for _, withIndex := range []bool{false, true} {
			before := heap()
			s := store.New(store.Options{})
			if withIndex {
				_ = s.AddIndex("owner-uid", store.IndexFunc(owner))
				_ = s.AddIndex("uid", store.IndexFunc(uid))
			}
			for _, o := range objs {
				_ = s.Add(o)
			}
			per := float64(heap()-before) / n
			goruntime.KeepAlive(s)
			if withIndex {
				indexed = append(indexed, per)
			} else {
				plain = append(plain, per)
			}
		}
	}
	sort.Float64s(plain)
	sort.Float64s(indexed)
	b.ReportMetric(indexed[len(indexed)/2]-plain[len(plain)/2], "owner-index-B/object")
	b.ReportMetric(plain[len(plain)/2], "store-B/object")
}

func qbAny(objs []*unstructured.Unstructured) []any {
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

func qbMedian(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
