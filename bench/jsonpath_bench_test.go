package bench

// Benchmarks of kindex's jsonpath package against client-go's
// util/jsonpath on the same decoded Pod. Results: README.jsonpath.md.

import (
	"bytes"
	"testing"
	"time"

	"github.com/kindex/kindex/jsonpath"
	"k8s.io/apimachinery/pkg/util/json"
	k8sjsonpath "k8s.io/client-go/util/jsonpath"
)

// jsonpathPodJSON is a realistic Pod as an API server returns it (compact, about
// 7 KB): managedFields from two managers, three containers, five
// conditions, labels with dotted keys.
const jsonpathPodJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-frontend-7d9c6b8f5d-x4k2p","generateName":"web-frontend-7d9c6b8f5d-","namespace":"shop","uid":"0f8e3c2a-6b1d-4e7f-9a2c-5d8b1e3f7a90","resourceVersion":"48213577","creationTimestamp":"2026-03-14T09:26:53Z","labels":{"app.kubernetes.io/name":"web-frontend","app.kubernetes.io/instance":"web-frontend-prod","app.kubernetes.io/component":"frontend","pod-template-hash":"7d9c6b8f5d","tier":"web"},"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-03-14T09:20:00Z","prometheus.io/scrape":"true","prometheus.io/port":"9090"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-frontend-7d9c6b8f5d","uid":"a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d","controller":true,"blockOwnerDeletion":true}],"managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2026-03-14T09:26:53Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/component":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/name":{},"f:pod-template-hash":{},"f:tier":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:env":{".":{},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"POD_NAME\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:readinessProbe":{".":{},"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}},"f:periodSeconds":{}},"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}},"k:{\"name\":\"metrics\"}":{".":{},"f:image":{},"f:name":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}},{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-03-14T09:26:53Z","fieldsType":"FieldsV1","subresource":"status","fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.244.3.17\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}}]},"spec":{"containers":[{"name":"web","image":"registry.example.com/shop/web-frontend:v2.14.3","imagePullPolicy":"IfNotPresent","ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],"env":[{"name":"LOG_LEVEL","value":"info"},{"name":"POD_NAME","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}}],"resources":{"limits":{"cpu":"500m","memory":"256Mi"},"requests":{"cpu":"100m","memory":"128Mi"}},"readinessProbe":{"httpGet":{"path":"/healthz","port":8080,"scheme":"HTTP"},"periodSeconds":10,"timeoutSeconds":1,"successThreshold":1,"failureThreshold":3},"volumeMounts":[{"name":"kube-api-access-7x2kq","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"},{"name":"metrics","image":"quay.io/prometheus/statsd-exporter:v0.26.1","imagePullPolicy":"IfNotPresent","ports":[{"name":"http","containerPort":9102,"protocol":"TCP"}],"env":[{"name":"LOG_LEVEL","value":"info"},{"name":"POD_NAME","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}}],"resources":{"limits":{"cpu":"500m","memory":"256Mi"},"requests":{"cpu":"100m","memory":"128Mi"}},"readinessProbe":{"httpGet":{"path":"/healthz","port":9102,"scheme":"HTTP"},"periodSeconds":10,"timeoutSeconds":1,"successThreshold":1,"failureThreshold":3},"volumeMounts":[{"name":"kube-api-access-7x2kq","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"},{"name":"envoy","image":"docker.io/envoyproxy/envoy:v1.31.2","ports":[{"containerPort":15001,"protocol":"TCP"}],"resources":{"requests":{"cpu":"50m","memory":"64Mi"}}}],"volumes":[{"name":"kube-api-access-7x2kq","projected":{"defaultMode":420,"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}}]}}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"web-frontend","nodeName":"worker-pool-a-3","securityContext":{},"schedulerName":"default-scheduler","tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},"status":{"phase":"Running","conditions":[{"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-03-14T09:26:53Z"},{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-03-14T09:26:53Z"},{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-03-14T09:26:53Z"},{"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-03-14T09:26:53Z"},{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-03-14T09:26:53Z"}],"hostIP":"10.0.12.41","hostIPs":[{"ip":"10.0.12.41"}],"podIP":"10.244.3.17","podIPs":[{"ip":"10.244.3.17"}],"startTime":"2026-03-14T09:26:53Z","qosClass":"Burstable","containerStatuses":[{"name":"web","image":"registry.example.com/shop/web-frontend:v2.14.3","imageID":"registry.example.com/shop/web-frontend@sha256:4c1e997385b8fb4ad4d1d3c7e5af7ff3f882e04d87e8b1e2d0d2e0e0c8a9b1f2","containerID":"containerd://8d3b5f9c2a1e4f6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b","ready":true,"restartCount":0,"started":true,"state":{"running":{"startedAt":"2026-03-14T09:26:53Z"}},"lastState":{}},{"name":"metrics","image":"quay.io/prometheus/statsd-exporter:v0.26.1","imageID":"quay.io/prometheus/statsd-exporter@sha256:4c1e997385b8fb4ad4d1d3c7e5af7ff3f882e04d87e8b1e2d0d2e0e0c8a9b1f2","containerID":"containerd://8d3b5f9c2a1e4f6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b","ready":true,"restartCount":1,"started":true,"state":{"running":{"startedAt":"2026-03-14T09:26:53Z"}},"lastState":{}},{"name":"envoy","image":"docker.io/envoyproxy/envoy:v1.31.2","ready":false,"restartCount":4,"started":false,"state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{}}]}}`

// jsonpathCases are the expressions an index typically uses. client-go
// splits a quoted key at dots (['a.b'] reads a, then b), so its spelling
// of the dotted label key escapes the dots instead; both select the same
// value.
var jsonpathCases = []struct {
	name, kindex, clientgo, want string
}{
	{"nodeName", "{.spec.nodeName}", "{.spec.nodeName}", "worker-pool-a-3"},
	{"images", "{.spec.containers[*].image}", "{.spec.containers[*].image}",
		"registry.example.com/shop/web-frontend:v2.14.3 quay.io/prometheus/statsd-exporter:v0.26.1 docker.io/envoyproxy/envoy:v1.31.2"},
	{"readyFilter", `{.status.conditions[?(@.type=="Ready")].status}`, `{.status.conditions[?(@.type=="Ready")].status}`, "True"},
	{"dottedLabel", "{.metadata.labels['app.kubernetes.io/name']}", `{.metadata.labels.app\.kubernetes\.io/name}`, "web-frontend"},
}

// jsonpathDecodePod decodes jsonpathPodJSON the way unstructured.Unstructured does.
func jsonpathDecodePod(tb testing.TB) map[string]any {
	var obj map[string]any
	if err := json.Unmarshal([]byte(jsonpathPodJSON), &obj); err != nil {
		tb.Fatal(err)
	}
	return obj
}

// TestJSONPathBenchCasesAgree checks that both libraries select what the
// benchmarks claim, so that the benchmarks compare equal work.
func TestJSONPathBenchCasesAgree(t *testing.T) {
	obj := jsonpathDecodePod(t)
	for _, c := range jsonpathCases {
		t.Run(c.name, func(t *testing.T) {
			p := jsonpath.MustCompile(c.kindex)
			got, err := p.ExecuteString(obj)
			if err != nil || got != c.want {
				t.Fatalf("kindex %s = %q, %v; want %q", c.kindex, got, err, c.want)
			}
			got, err = p.ExecuteString(jsonpath.JSON(jsonpathPodJSON))
			if err != nil || got != c.want {
				t.Fatalf("kindex JSON %s = %q, %v; want %q", c.kindex, got, err, c.want)
			}
			j := k8sjsonpath.New(c.name).AllowMissingKeys(true)
			if err := j.Parse(c.clientgo); err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := j.Execute(&b, obj); err != nil || b.String() != c.want {
				t.Fatalf("client-go %s = %q, %v; want %q", c.clientgo, b.String(), err, c.want)
			}
		})
	}
}

var jsonpathSink int

// BenchmarkJSONPath compares, for each expression:
//
//   - clientgo-FindResults: client-go's util/jsonpath, parsed once, on the
//     decoded Pod (what a client-go index function does);
//   - kindex-Each: the zero-allocation API on the decoded Pod;
//   - kindex-Eval: the same, returning a new []Value;
//   - kindex-AppendEval: the same, appending to a reused []Value;
//   - clientgo-DecodeFindResults: decoding the raw JSON, then client-go
//     (what a consumer of raw JSON does without kindex);
//   - kindex-EachJSON, kindex-EvalJSON: Each and Eval on the raw JSON (a
//     jsonpath.JSON), without
//     decoding it.
func BenchmarkJSONPath(b *testing.B) {
	obj := jsonpathDecodePod(b)
	data := []byte(jsonpathPodJSON)
	var doc any = jsonpath.JSON(data) // converted once: a slice in an interface is allocated
	for _, c := range jsonpathCases {
		j := k8sjsonpath.New(c.name).AllowMissingKeys(true)
		if err := j.Parse(c.clientgo); err != nil {
			b.Fatal(err)
		}
		p := jsonpath.MustCompile(c.kindex)
		count := func(jsonpath.Value) bool { jsonpathSink++; return true }

		b.Run(c.name+"/clientgo-FindResults", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := j.FindResults(obj)
				if err != nil || len(r) != 1 || len(r[0]) == 0 {
					b.Fatal(r, err)
				}
			}
		})
		b.Run(c.name+"/kindex-Each", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Each(obj, count); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/kindex-Eval", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if vs, err := p.Eval(obj); err != nil || len(vs) == 0 {
					b.Fatal(vs, err)
				}
			}
		})
		b.Run(c.name+"/kindex-AppendEval", func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]jsonpath.Value, 0, 8)
			for b.Loop() {
				var err error
				if buf, err = p.AppendEval(buf[:0], obj); err != nil || len(buf) == 0 {
					b.Fatal(buf, err)
				}
			}
		})
		b.Run(c.name+"/clientgo-DecodeFindResults", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var o map[string]any
				if err := json.Unmarshal(data, &o); err != nil {
					b.Fatal(err)
				}
				r, err := j.FindResults(o)
				if err != nil || len(r) != 1 || len(r[0]) == 0 {
					b.Fatal(r, err)
				}
			}
		})
		b.Run(c.name+"/kindex-EachJSON", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Each(doc, count); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/kindex-EvalJSON", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if vs, err := p.Eval(doc); err != nil || len(vs) == 0 {
					b.Fatal(vs, err)
				}
			}
		})
	}
}

// BenchmarkJSONPathSpeedup measures the ratios directly: it alternates
// batches of client-go's FindResults and of kindex's Each and AppendEval
// (which do not allocate, so the garbage collections in the run are
// client-go's own) on the decoded Pod, so that both sides see the same
// machine load (the shared machines are noisy), and reports their mean
// times and the speedups as metrics.
func BenchmarkJSONPathSpeedup(b *testing.B) {
	obj := jsonpathDecodePod(b)
	const batch = 100
	for _, c := range jsonpathCases {
		j := k8sjsonpath.New(c.name).AllowMissingKeys(true)
		if err := j.Parse(c.clientgo); err != nil {
			b.Fatal(err)
		}
		p := jsonpath.MustCompile(c.kindex)
		count := func(jsonpath.Value) bool { jsonpathSink++; return true }
		buf := make([]jsonpath.Value, 0, 8)
		b.Run(c.name, func(b *testing.B) {
			var cg, each, appendEval time.Duration
			for b.Loop() {
				t0 := time.Now()
				for range batch {
					if _, err := j.FindResults(obj); err != nil {
						b.Fatal(err)
					}
				}
				t1 := time.Now()
				for range batch {
					if err := p.Each(obj, count); err != nil {
						b.Fatal(err)
					}
				}
				t2 := time.Now()
				for range batch {
					buf, _ = p.AppendEval(buf[:0], obj)
				}
				t3 := time.Now()
				cg, each, appendEval = cg+t1.Sub(t0), each+t2.Sub(t1), appendEval+t3.Sub(t2)
			}
			n := float64(b.N * batch)
			b.ReportMetric(float64(cg.Nanoseconds())/n, "clientgo-ns/op")
			b.ReportMetric(float64(each.Nanoseconds())/n, "Each-ns/op")
			b.ReportMetric(float64(appendEval.Nanoseconds())/n, "AppendEval-ns/op")
			b.ReportMetric(float64(cg)/float64(each), "Each-speedup")
			b.ReportMetric(float64(cg)/float64(appendEval), "AppendEval-speedup")
		})
	}
}

// BenchmarkJSONPathExecute compares template output (kubectl's
// -o jsonpath), the form composite index keys take.
func BenchmarkJSONPathExecute(b *testing.B) {
	obj := jsonpathDecodePod(b)
	const tmpl = "{.metadata.namespace}/{.metadata.name}"
	j := k8sjsonpath.New("key").AllowMissingKeys(true)
	if err := j.Parse(tmpl); err != nil {
		b.Fatal(err)
	}
	p := jsonpath.MustCompile(tmpl)
	b.Run("clientgo-Execute", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			if err := j.Execute(&buf, obj); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kindex-ExecuteString", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.ExecuteString(obj); err != nil {
				b.Fatal(err)
			}
		}
	})
}
