package refs_test

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/refs"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { testenv.Main(m, &cp, testenv.Options{}) }

// fixture creates objects from JSON with placeholders: {ns} is the test's namespace, {c} a
// suffix that makes cluster-scoped names unique to the test.
type fixture struct {
	t       *testing.T
	ns, c   string
	objects []refs.ObjectRef
	repl    *strings.Replacer
}

func newFixture(t *testing.T) *fixture {
	ns := cp.Namespace(t)
	c := ns[strings.LastIndexByte(ns, '-')+1:]
	return &fixture{t: t, ns: ns, c: c, repl: strings.NewReplacer("{ns}", ns, "{c}", c)}
}

func (f *fixture) expand(s string) string { return f.repl.Replace(s) }

// create creates the object js (with placeholders) of resource gvr and remembers it.
func (f *fixture) create(gvr schema.GroupVersionResource, js string) *unstructured.Unstructured {
	f.t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(f.t, json.Unmarshal([]byte(f.expand(js)), &u.Object), js)
	ns := u.GetNamespace()
	res := cp.Dynamic(f.t).Resource(gvr)
	var err error
	var got *unstructured.Unstructured
	if ns != "" {
		got, err = res.Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{})
	} else {
		got, err = res.Create(context.Background(), u, metav1.CreateOptions{})
		f.t.Cleanup(func() { _ = res.Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}) })
	}
	require.NoError(f.t, err, "create %s %s", gvr.Resource, u.GetName())
	f.objects = append(f.objects, refs.ObjectRef{Group: gvr.Group, Resource: gvr.Resource, Namespace: ns, Name: u.GetName()})
	return got
}

func (f *fixture) update(gvr schema.GroupVersionResource, ns, name string, mutate func(u *unstructured.Unstructured)) {
	f.t.Helper()
	updateObject(f.t, gvr, ns, name, mutate)
}

// updateObject reads the object, mutates it and writes it back.
func updateObject(t *testing.T, gvr schema.GroupVersionResource, ns, name string, mutate func(u *unstructured.Unstructured)) {
	t.Helper()
	res := cp.Dynamic(t).Resource(gvr).Namespace(ns)
	u, err := res.Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	mutate(u)
	_, err = res.Update(context.Background(), u, metav1.UpdateOptions{})
	require.NoError(t, err)
}

func (f *fixture) delete(gvr schema.GroupVersionResource, ns, name string) {
	f.t.Helper()
	require.NoError(f.t, cp.Dynamic(f.t).Resource(gvr).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}))
}

// edges returns every edge from the fixture's objects, rendered, sorted.
func (f *fixture) edges(g *refs.Graph) []string {
	var out []string
	for _, o := range f.objects {
		for _, e := range uses(f.t, g, o, 1) {
			out = append(out, e.String())
		}
	}
	sort.Strings(out)
	return out
}

// want expands a hand-written list of edges, one per line.
func (f *fixture) want(s string) []string {
	var out []string
	for _, l := range strings.Split(f.expand(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// eventually waits until got() equals want, then checks it (for a readable diff).
func eventually(t *testing.T, want []string, got func() []string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if equal(want, got()) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.Equal(t, want, got())
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// startGraph starts a graph as the admin and waits for it to sync.
func startGraph(t *testing.T, opts refs.Options) *refs.Graph {
	t.Helper()
	g := startGraphAs(t, cp.AdminConfig(), opts)
	wctx, wcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer wcancel()
	require.NoError(t, g.WaitForSync(wctx))
	return g
}

// startGraphAs starts a graph with cfg; it stops when the test ends.
func startGraphAs(t *testing.T, cfg *rest.Config, opts refs.Options) *refs.Graph {
	t.Helper()
	g, err := refs.New(cfg, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		g.Shutdown()
	})
	require.NoError(t, g.Start(ctx))
	return g
}

// uses and usedBy are the graph's References and Referrers for tests that look at the
// edges: an *IncompleteError is not a failure, any other error is.
func uses(t *testing.T, g *refs.Graph, obj refs.ObjectRef, depth int) []refs.Edge {
	t.Helper()
	edges, err := g.References(obj, depth)
	if err != nil && !errors.Is(err, refs.ErrIncomplete) {
		t.Fatalf("References(%s): %v", obj, err)
	}
	return edges
}

func usedBy(t *testing.T, g *refs.Graph, obj refs.ObjectRef, depth int) []refs.Edge {
	t.Helper()
	edges, err := g.Referrers(obj, depth)
	if err != nil && !errors.Is(err, refs.ErrIncomplete) {
		t.Fatalf("Referrers(%s): %v", obj, err)
	}
	return edges
}

// render renders edges, sorted.
func render(edges []refs.Edge) []string {
	out := make([]string, 0, len(edges))
	for _, e := range edges {
		out = append(out, e.String())
	}
	sort.Strings(out)
	return out
}

func sortStrings(s []string) { sort.Strings(s) }

// inNamespace renders the objects of namespace ns.
func inNamespace(objs []refs.ObjectRef, ns string) []string {
	var out []string
	for _, o := range objs {
		if o.Namespace == ns {
			out = append(out, o.String())
		}
	}
	return out
}

// inNS keeps the edges from namespace ns to resource res.
func inNS(edges []refs.Edge, ns, res string) []refs.Edge {
	var out []refs.Edge
	for _, e := range edges {
		if e.From.Namespace == ns && e.To.Resource == res {
			out = append(out, e)
		}
	}
	return out
}
