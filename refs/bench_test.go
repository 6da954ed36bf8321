package refs

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The benchmark universe: about 100,000 objects in 100 namespaces, shaped like a busy
// cluster. Per namespace: 600 Pods (owned by ReplicaSets, labelled with one of 20 apps,
// mounting two ConfigMaps and kube-root-ca.crt, reading a Secret, on one of 500 Nodes),
// 60 ReplicaSets owned by 20 Deployments (with the same template references), 20 Services
// and 10 PodDisruptionBudgets selecting apps, 10 NetworkPolicies (one selecting every Pod),
// 150 ConfigMaps, 100 Secrets, 20 ServiceAccounts; and 500 Nodes.
const (
	benchNamespaces = 100
	benchPods       = 600
	benchApps       = 20
	benchRS         = 60
	benchConfigMaps = 150
	benchSecrets    = 100
	benchNodes      = 500
)

func benchPodJSON(ns string, i int, app string, phase string) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-%d","namespace":%q,"uid":"%s-pod-%d",
	 "labels":{"app":%q,"pod-template-hash":"h%d"},
	 "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs-%d","uid":"%s-rs-%d","controller":true}]},
	 "spec":{"serviceAccountName":"sa-%d","nodeName":"node-%d","priorityClassName":"",
	  "volumes":[{"name":"a","configMap":{"name":"cm-%d"}},{"name":"b","configMap":{"name":"cm-%d"}},
	   {"name":"token","projected":{"sources":[{"serviceAccountToken":{"path":"token"}},{"configMap":{"name":"kube-root-ca.crt"}}]}}],
	  "containers":[{"name":"app","image":"registry.example.com/app:1.2.3",
	   "env":[{"name":"PASSWORD","valueFrom":{"secretKeyRef":{"name":"secret-%d","key":"p"}}},{"name":"MODE","value":"prod"}],
	   "resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}]},
	 "status":{"phase":%q,"podIP":"10.0.%d.%d"}}`,
		i, ns, ns, i, app, i%benchRS, i%benchRS, ns, i%benchRS, i%benchApps, i%benchNodes,
		i%benchConfigMaps, (i+1)%benchConfigMaps, i%benchSecrets, phase, i/250, i%250))
}

func benchObjects(emit func(res schema.GroupResource, js []byte)) {
	for n := 0; n < benchNodes; n++ {
		emit(nodes, []byte(fmt.Sprintf(`{"metadata":{"name":"node-%d","uid":"node-%d"}}`, n, n)))
	}
	for k := 0; k < benchNamespaces; k++ {
		ns := fmt.Sprintf("ns-%d", k)
		for i := 0; i < benchConfigMaps; i++ {
			emit(configMaps, []byte(fmt.Sprintf(`{"metadata":{"name":"cm-%d","namespace":%q,"uid":"%s-cm-%d"}}`, i, ns, ns, i)))
		}
		emit(configMaps, []byte(fmt.Sprintf(`{"metadata":{"name":"kube-root-ca.crt","namespace":%q}}`, ns)))
		for i := 0; i < benchSecrets; i++ {
			emit(secrets, []byte(fmt.Sprintf(`{"metadata":{"name":"secret-%d","namespace":%q}}`, i, ns)))
		}
		for i := 0; i < benchApps; i++ {
			emit(serviceAccounts, []byte(fmt.Sprintf(`{"metadata":{"name":"sa-%d","namespace":%q}}`, i, ns)))
			emit(services, []byte(fmt.Sprintf(`{"metadata":{"name":"svc-%d","namespace":%q},"spec":{"selector":{"app":"app-%d"}}}`, i, ns, i)))
			emit(gr("apps", "deployments"), []byte(fmt.Sprintf(`{"metadata":{"name":"deploy-%d","namespace":%q,"uid":"%s-deploy-%d"},
			  "spec":{"template":{"spec":{"serviceAccountName":"sa-%d","volumes":[{"name":"a","configMap":{"name":"cm-%d"}}]}}}}`, i, ns, ns, i, i, i)))
		}
		for i := 0; i < benchRS; i++ {
			emit(gr("apps", "replicasets"), []byte(fmt.Sprintf(`{"metadata":{"name":"rs-%d","namespace":%q,"uid":"%s-rs-%d",
			  "ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"deploy-%d","uid":"%s-deploy-%d","controller":true}]},
			  "spec":{"template":{"spec":{"serviceAccountName":"sa-%d","volumes":[{"name":"a","configMap":{"name":"cm-%d"}}]}}}}`,
				i, ns, ns, i, i%benchApps, ns, i%benchApps, i%benchApps, i%benchApps)))
		}
		for i := 0; i < 10; i++ {
			emit(gr("policy", "poddisruptionbudgets"), []byte(fmt.Sprintf(`{"metadata":{"name":"pdb-%d","namespace":%q},
			  "spec":{"selector":{"matchExpressions":[{"key":"app","operator":"In","values":["app-%d","app-%d"]}]}}}`, i, ns, i, i+10)))
			sel := fmt.Sprintf(`{"matchLabels":{"app":"app-%d"}}`, i)
			if i == 0 {
				sel = `{}`
			}
			emit(gr("networking.k8s.io", "networkpolicies"), []byte(fmt.Sprintf(`{"metadata":{"name":"np-%d","namespace":%q},"spec":{"podSelector":%s}}`, i, ns, sel)))
		}
		for i := 0; i < benchPods; i++ {
			emit(pods, benchPodJSON(ns, i, fmt.Sprintf("app-%d", i%benchApps), "Running"))
		}
	}
}

// rawObject is an object kept as JSON bytes with its metadata decoded, as kindex's compact
// store keeps it: rules evaluate on the bytes (RawJSON) without decoding the object.
type rawObject struct {
	metav1.ObjectMeta
	raw []byte
}

func (o *rawObject) RawJSON() []byte { return o.raw }

func newRawObject(js []byte) *rawObject {
	var m struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(js, &m); err != nil {
		panic(err)
	}
	return &rawObject{ObjectMeta: m.Metadata, raw: js}
}

// loop runs fn b.N times and reports, besides the wall time, the process's CPU time per
// operation (cpu-ns/op, GC included): on a shared machine the wall time also counts the
// time other processes hold the cores.
func loop(b *testing.B, fn func(i int)) {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	i := 0
	for b.Loop() {
		fn(i)
		i++
	}
	b.ReportMetric(float64(cpu()-start)/float64(i), "cpu-ns/op")
}

func decoded(js []byte) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		panic(err)
	}
	return u
}

var (
	benchOnce  sync.Once
	benchGraph *Graph
	benchHeap  uint64
	benchCount int
)

// benchUniverse builds the graph of the universe once for every benchmark of a run.
func benchUniverse(b *testing.B) *Graph {
	benchOnce.Do(func() {
		compiled, err := compileRules(BuiltinRules())
		if err != nil {
			b.Fatal(err)
		}
		g := &Graph{g: newGraph(compiled), cover: func(schema.GroupResource, string) (bool, string) { return true, "" }}
		for _, c := range catalog {
			g.g.learn(c.gr, c.kind, c.namespaced)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		benchObjects(func(res schema.GroupResource, js []byte) {
			g.upsert(g.g.rulesOf(res), newRawObject(js))
			benchCount++
		})
		runtime.GC()
		runtime.ReadMemStats(&after)
		benchHeap = after.HeapAlloc - before.HeapAlloc
		benchGraph = g
	})
	return benchGraph
}

// BenchmarkEvent measures the cost of one event applied to a graph of about 100,000
// objects: reading the object's references (its rules' JSONPath, on a decoded object as
// handlers receive it today, or on the JSON bytes as the compact store holds it) and
// updating the graph. Every case alternates between two states, so the graph is the same
// after an even number of events.
func BenchmarkEvent(b *testing.B) {
	g := benchUniverse(b)
	st := g.Stats()
	b.Logf("universe: %d objects, %d edges, %d selector edges, %d selectors; graph heap %.0f MB (%.0f bytes per object)",
		st.Objects, st.Edges, st.SelectorEdges, st.Selectors, float64(benchHeap)/(1<<20), float64(benchHeap)/float64(benchCount))
	podInfo, cmInfo, svcInfo := g.g.rulesOf(pods), g.g.rulesOf(configMaps), g.g.rulesOf(services)
	pod := func(app, phase string) []byte { return benchPodJSON("ns-42", 7, app, phase) }
	type form struct {
		name string
		make func([]byte) any
	}
	forms := []form{
		{"decoded", func(js []byte) any { return decoded(js) }},
		{"bytes", func(js []byte) any { return newRawObject(js) }},
	}
	for _, f := range forms {
		// A Pod update that changes no reference (its status): the common event.
		b.Run("pod-status/"+f.name, func(b *testing.B) {
			objs := []any{f.make(pod("app-7", "Running")), f.make(pod("app-7", "Succeeded"))}
			loop(b, func(i int) {
				g.upsert(podInfo, objs[i%2])
			})
		})
		// A Pod relabelled: it leaves app-7's Service, PDB and NetworkPolicy and joins
		// app-8's.
		b.Run("pod-relabel/"+f.name, func(b *testing.B) {
			objs := []any{f.make(pod("app-8", "Running")), f.make(pod("app-7", "Running"))}
			loop(b, func(i int) {
				g.upsert(podInfo, objs[i%2])
			})
		})
		// A Pod deleted and created again.
		b.Run("pod-delete-create/"+f.name, func(b *testing.B) {
			obj := f.make(pod("app-7", "Running"))
			loop(b, func(i int) {
				if i%2 == 0 {
					g.g.remove(podInfo, "ns-42", "pod-7", "")
				} else {
					g.upsert(podInfo, obj)
				}
			})
			if b.N%2 == 1 { // leave the object in place
				g.upsert(podInfo, obj)
			}
		})
	}
	// A ConfigMap used by 8 Pods, 3 ReplicaSets and a Deployment deleted (its mounts dangle) and
	// created again (they are whole).
	b.Run("configmap-delete-create", func(b *testing.B) {
		obj := newRawObject([]byte(`{"metadata":{"name":"cm-7","namespace":"ns-42","uid":"x"}}`))
		loop(b, func(i int) {
			if i%2 == 0 {
				g.g.remove(cmInfo, "ns-42", "cm-7", "")
			} else {
				g.upsert(cmInfo, obj)
			}
		})
		if b.N%2 == 1 {
			g.upsert(cmInfo, obj)
		}
	})
	// A Service's selector changed: it drops the 30 Pods of app-7 and takes app-8's 30.
	b.Run("service-selector", func(b *testing.B) {
		objs := []any{
			newRawObject([]byte(`{"metadata":{"name":"svc-7","namespace":"ns-42"},"spec":{"selector":{"app":"app-8"}}}`)),
			newRawObject([]byte(`{"metadata":{"name":"svc-7","namespace":"ns-42"},"spec":{"selector":{"app":"app-7"}}}`)),
		}
		loop(b, func(i int) {
			g.upsert(svcInfo, objs[i%2])
		})
	})
	// A namespace's ServiceAccount, used by 30 Pods, 3 ReplicaSets and a Deployment,
	// deleted and created again.
	b.Run("serviceaccount-delete-create", func(b *testing.B) {
		info := g.g.rulesOf(serviceAccounts)
		obj := newRawObject([]byte(`{"metadata":{"name":"sa-7","namespace":"ns-42"}}`))
		loop(b, func(i int) {
			if i%2 == 0 {
				g.g.remove(info, "ns-42", "sa-7", "")
			} else {
				g.upsert(info, obj)
			}
		})
		if b.N%2 == 1 {
			g.upsert(info, obj)
		}
	})
}

// BenchmarkQuery measures the queries on the same graph.
func BenchmarkQuery(b *testing.B) {
	g := benchUniverse(b)
	b.Run("references-pod-depth-0", func(b *testing.B) {
		loop(b, func(int) {
			g.References(ObjectRef{Resource: "pods", Namespace: "ns-42", Name: "pod-7"}, 0)
		})
	})
	b.Run("referrers-deployment-depth-0", func(b *testing.B) {
		loop(b, func(int) {
			g.Referrers(ObjectRef{Group: "apps", Resource: "deployments", Namespace: "ns-42", Name: "deploy-7"}, 0)
		})
	})
	b.Run("unreferenced-configmaps", func(b *testing.B) {
		loop(b, func(int) {
			_, _ = g.Unreferenced(configMaps)
		})
	})
	b.Run("dangling", func(b *testing.B) {
		loop(b, func(int) {
			g.Dangling()
		})
	})
}

// BenchmarkRead measures reading one Pod's references (every built-in rule for Pods),
// without the graph.
func BenchmarkRead(b *testing.B) {
	compiled, err := compileRules(BuiltinRules())
	if err != nil {
		b.Fatal(err)
	}
	info := newGraph(compiled).rulesOf(pods)
	js := benchPodJSON("ns-1", 7, "app-7", "Running")
	for _, c := range []struct {
		name string
		obj  any
	}{{"decoded", decoded(js)}, {"bytes", newRawObject(js)}} {
		b.Run(c.name, func(b *testing.B) {
			loop(b, func(int) {
				if _, err := read(info, c.obj); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
