package bench

// BenchmarkAuditS53 re-measures the compact mode's claims on a Pod shape the other
// benchmarks do not use: small specs (one container) under 40 labels and a 6 KB
// last-applied-configuration annotation, spread over 10 namespaces, with index expressions
// the other benchmarks do not evaluate (an annotation key that sorts after the large
// annotation, a filter on the containers' names, a label with 400 values and one with 4).
// Against client-go's dynamic informer in the same process, on the same objects:
// heap held per object, the peak RSS of the compact sync against the heap it holds, an
// equality across namespaces (QueryItems against ByIndex), a sorted page of 100 (against
// client-go's List, filter and sort), Count and CountBy on 4 and 400 values, and Item.Eval
// of the new expressions on the compact bytes.
// `go test -run '^$' -bench AuditS53 -benchtime 2000x ./bench/` (KINDEX_AUDIT_PODS sets the
// number of Pods, 4,000 by default).

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgodynamic "k8s.io/client-go/dynamic"
	clientgoinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

const (
	a53Namespaces = 10
	a53Tenants    = 400 // values of the tenant label: n/400 Pods each
	a53Zones      = 4
)

func a53NS(i int) string { return fmt.Sprintf("audit-s53-%02d", i%a53Namespaces) }

// a53Pod is a Pod with a small spec and large metadata.
func a53Pod(i int) *corev1.Pod {
	labels := map[string]string{
		"tenant.example.com/id": fmt.Sprintf("tenant-%03d", (i*7)%a53Tenants),
		"zone":                  fmt.Sprintf("zone-%c", 'a'+i%a53Zones),
	}
	for k := range 38 {
		labels[fmt.Sprintf("label-%02d.example.com/key", k)] = fmt.Sprintf("value-%d-%d", k, i%(k+3))
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big-meta-%05d", i), Namespace: a53NS(i), Labels: labels,
			Annotations: map[string]string{
				"audit.example.com/owner":                          fmt.Sprint("owner-", i%50),
				"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat(fmt.Sprintf(`{"k%d":"v"},`, i%10), 6*1024/8),
				"zz.example.com/cost-center":                       fmt.Sprint("cc-", i%25),
			}},
		Spec: corev1.PodSpec{
			NodeName: fmt.Sprintf("node-%03d", i%100),
			Containers: []corev1.Container{
				{Name: "sidecar", Image: "busybox:1.36", Ports: []corev1.ContainerPort{{ContainerPort: 9000}}},
				{Name: "app", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: int32(1000 + i%5000)}}},
			},
		},
	}
}

// a53VmHWM and a53VmRSS read the process's peak and current resident set.
func a53Status(tb testing.TB, field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		tb.Skip("no /proc/self/status")
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb << 10
		}
	}
	tb.Fatalf("no %s in /proc/self/status", field)
	return 0
}

func BenchmarkAuditS53(b *testing.B) {
	n := 4000
	if v := os.Getenv("KINDEX_AUDIT_PODS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < a53Tenants {
			b.Fatalf("KINDEX_AUDIT_PODS=%q", v)
		}
	}
	cp, err := testenv.Start(testenv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer cp.Stop()
	ctx := context.Background()
	cs := cp.Clientset(b)
	for k := range a53Namespaces {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a53NS(k)}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	testsupport.CreateN(b, n, func(i int) error {
		_, err := cs.CoreV1().Pods(a53NS(i)).Create(ctx, a53Pod(i), metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
		return err
	})
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	indexes := map[string]string{
		"tenant": "{.metadata.labels['tenant.example.com/id']}",
		"zone":   "{.metadata.labels.zone}",
		"cost":   "{.metadata.annotations['zz.example.com/cost-center']}",
		"port":   `{.spec.containers[?(@.name=="app")].ports[*].containerPort}`,
	}

	// kindex's compact mode first, in a process that has held nothing yet: the peak of its
	// sync is the resident set's high-water mark, reset just before it starts.
	debug.FreeOSMemory()
	before := usHeap()
	rssBefore := a53Status(b, "VmRSS")
	hwmReset := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	start := time.Now()
	fact, err := dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{Indexes: indexes}, dynamicinformer.CompactOptions{})
	if err != nil {
		b.Fatal(err)
	}
	fctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); fact.Shutdown() }()
	if err := fact.Start(fctx); err != nil {
		b.Fatal(err)
	}
	inf, err := fact.InformerForGVR(ctx, gvr)
	if err != nil {
		b.Fatal(err)
	}
	defer inf.Release()
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
	if err := inf.WaitForSync(wctx); err != nil {
		b.Fatal(err)
	}
	wcancel()
	syncTime := time.Since(start)
	hwm := a53Status(b, "VmHWM")
	compactHeap := float64(usHeap() - before)
	if got := inf.Status().Objects; got != n {
		b.Fatalf("compact: %d objects, want %d", got, n)
	}

	// client-go's dynamic informer, with the same indexes written by hand.
	before = usHeap()
	start = time.Now()
	dyn, err := clientgodynamic.NewForConfig(cp.AdminConfig())
	if err != nil {
		b.Fatal(err)
	}
	cgi := clientgoinformer.NewDynamicSharedInformerFactory(dyn, 0).ForResource(gvr).Informer()
	appPorts := func(o any) ([]string, error) {
		cs, _, _ := unstructured.NestedSlice(o.(*unstructured.Unstructured).Object, "spec", "containers")
		var out []string
		for _, c := range cs {
			c := c.(map[string]any)
			if c["name"] != "app" {
				continue
			}
			ps, _ := c["ports"].([]any)
			for _, p := range ps {
				out = append(out, fmt.Sprint(p.(map[string]any)["containerPort"]))
			}
		}
		return out, nil
	}
	if err := cgi.AddIndexers(cache.Indexers{
		"tenant": usDynamicLabel("tenant.example.com/id"),
		"zone":   usDynamicLabel("zone"),
		"port":   appPorts,
	}); err != nil {
		b.Fatal(err)
	}
	usRun(b, cgi)
	cgSync := time.Since(start)
	cg := cgi.GetIndexer()
	cgHeap := float64(usHeap() - before)
	if len(cg.List()) != n {
		b.Fatalf("client-go: %d objects", len(cg.List()))
	}
	var raw []byte
	if its, err := inf.ListItems(a53NS(0)); err == nil && len(its) > 0 {
		raw = its[0].Raw()
	}
	b.Logf("%d Pods, %d bytes of JSON as stored (managedFields cut); compact sync %v, client-go sync %v", n, len(raw), syncTime, cgSync)
	b.Logf("heap per object: compact %.0f B, client-go %.0f B, ratio %.3f", compactHeap/float64(n), cgHeap/float64(n), compactHeap/cgHeap)
	if hwmReset {
		b.Logf("compact sync: RSS before %d MB, peak %d MB, heap held %.0f MB: (peak-before)/heap %.2f",
			rssBefore>>20, hwm>>20, compactHeap/(1<<20), float64(hwm-rssBefore)/compactHeap)
	}
	b.Run("heap", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(compactHeap/float64(n), "compact-B/object")
		b.ReportMetric(cgHeap/float64(n), "client-go-B/object")
		b.ReportMetric(compactHeap/cgHeap, "x-client-go")
		if hwmReset {
			b.ReportMetric(float64(hwm-rssBefore)/compactHeap, "peak/heap")
		}
	})

	tenant := "tenant-007"
	want, _ := cg.ByIndex("tenant", tenant)
	if len(want) == 0 {
		b.Fatal("no Pods of", tenant)
	}
	eq := query.Query{Conditions: []query.Condition{query.Eq("tenant", tenant)}}
	b.Run("Eq/client-go-ByIndex", func(b *testing.B) {
		for b.Loop() {
			if got, _ := cg.ByIndex("tenant", tenant); len(got) != len(want) {
				b.Fatal(len(got))
			}
		}
	})
	b.Run("Eq/compact-QueryItems", func(b *testing.B) {
		for b.Loop() {
			if res, err := inf.QueryItems(ctx, eq); err != nil || len(res.Items) != len(want) {
				b.Fatal(err, len(res.Items))
			}
		}
	})
	// A page of 100 Pods of one zone, sorted by the app container's port (descending).
	zone := "zone-b"
	page := query.Query{Conditions: []query.Condition{query.Eq("zone", zone)}, SortBy: "port", Descending: true, Limit: 100}
	port := func(o any) int {
		ps, _ := appPorts(o)
		p, _ := strconv.Atoi(ps[0])
		return p
	}
	var cgFirst int
	b.Run("Page/client-go-ByIndex-sort", func(b *testing.B) {
		for b.Loop() {
			objs, _ := cg.ByIndex("zone", zone)
			type kv struct {
				p int
				o any
			}
			sorted := make([]kv, len(objs))
			for i, o := range objs {
				sorted[i] = kv{port(o), o}
			}
			slices.SortFunc(sorted, func(x, y kv) int { return y.p - x.p })
			cgFirst = sorted[0].p
			_ = sorted[:100]
		}
	})
	portPath := jsonpath.MustCompile(indexes["port"])
	b.Run("Page/compact-QueryItems", func(b *testing.B) {
		for b.Loop() {
			res, err := inf.QueryItems(ctx, page)
			if err != nil || len(res.Items) != 100 || res.Continue == "" {
				b.Fatal(err, len(res.Items))
			}
			vs, err := res.Items[0].Eval(portPath)
			if err != nil || len(vs) != 1 || vs[0].String() != strconv.Itoa(cgFirst) {
				b.Fatalf("first of the page: %v %v, client-go's %d", vs, err, cgFirst)
			}
		}
	})
	b.Run("Count/client-go-IndexKeys", func(b *testing.B) {
		for b.Loop() {
			if keys, _ := cg.IndexKeys("tenant", tenant); len(keys) != len(want) {
				b.Fatal(len(keys))
			}
		}
	})
	b.Run("Count/compact", func(b *testing.B) {
		for b.Loop() {
			if c, err := inf.Count(ctx, eq); err != nil || c != len(want) {
				b.Fatal(err, c)
			}
		}
	})
	for _, idx := range []string{"zone", "tenant"} {
		b.Run("CountBy-"+idx+"/client-go", func(b *testing.B) {
			for b.Loop() {
				by := map[string]int{}
				for _, v := range cg.ListIndexFuncValues(idx) {
					keys, _ := cg.IndexKeys(idx, v)
					by[v] = len(keys)
				}
				if len(by) == 0 {
					b.Fatal("no values")
				}
			}
		})
		b.Run("CountBy-"+idx+"/compact", func(b *testing.B) {
			var values int
			for b.Loop() {
				by, err := inf.CountBy(ctx, query.Query{}, idx)
				if err != nil {
					b.Fatal(err)
				}
				values = len(by)
			}
			b.ReportMetric(float64(values), "values")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*values), "ns/value")
		})
	}
	res, err := inf.QueryItems(ctx, eq)
	if err != nil {
		b.Fatal(err)
	}
	for name, expr := range map[string]string{
		"nodeName":   "{.spec.nodeName}",
		"costCenter": indexes["cost"],
		"appPort":    indexes["port"],
		"owner":      "{.metadata.annotations['audit.example.com/owner']}",
	} {
		p := jsonpath.MustCompile(expr)
		b.Run("Eval/"+name, func(b *testing.B) {
			for b.Loop() {
				for _, it := range res.Items {
					if vs, err := it.Eval(p); err != nil || len(vs) != 1 {
						b.Fatal(err, vs)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(res.Items)), "ns/result")
		})
	}
}
