package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// s55Watch is one run of the command in the background, until stopped.
type s55Watch struct {
	stdout, stderr testsupport.Buffer
	cancel         context.CancelFunc
	done           chan int
	once           sync.Once
	code           int
}

// s55StartWatch runs the command with args in the background; it is stopped when the test
// ends, if the test has not stopped it.
func s55StartWatch(t *testing.T, kc string, args ...string) *s55Watch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &s55Watch{cancel: cancel, done: make(chan int, 1)}
	go func() { r.done <- run(ctx, append([]string{"--kubeconfig", kc}, args...), &r.stdout, &r.stderr) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels the run (Ctrl-C) and returns its exit code.
func (r *s55Watch) stop(t *testing.T) int {
	r.once.Do(func() {
		r.cancel()
		select {
		case r.code = <-r.done:
		case <-time.After(30 * time.Second):
			t.Error("the command did not stop on cancel")
			r.code = -1
		}
	})
	return r.code
}

// lines is what the run printed on stdout so far, line by line.
func (r *s55Watch) lines() []string {
	s := strings.TrimSuffix(r.stdout.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// waitLines waits until the run printed n lines.
func (r *s55Watch) waitLines(t *testing.T, n int) []string {
	t.Helper()
	testenv.EventuallyWith(t, 30*time.Second, func() bool { return len(r.lines()) >= n }, func() string {
		return "stdout:\n" + r.stdout.String() + "\nstderr:\n" + r.stderr.String()
	})
	return r.lines()
}

// With --output-watch-events, kubectl evaluates jsonpath, go-template and custom-columns on
// the WatchEvent, {"type":"ADDED","object":{...}}: {.type} is the event, {.object...} the
// object. kquery evaluated them on the object, where {.type} is nothing.
func TestS55WatchEventsInTemplates(t *testing.T) {
	for _, tc := range []struct {
		name   string
		output string
		want   []string
		stages [2]int // lines printed after the ADDED, after the MODIFIED
	}{
		{"jsonpath", `jsonpath={.type} {.object.metadata.name} {.object.data.a}{"\n"}`,
			[]string{"ADDED foo 1", "MODIFIED foo 2", "DELETED foo 2"}, [2]int{1, 2}},
		{"jsonpath-as-json", `jsonpath-as-json={.type}`,
			[]string{"[", `    "ADDED"`, "]", "[", `    "MODIFIED"`, "]", "[", `    "DELETED"`, "]"}, [2]int{3, 6}},
		{"go-template", `go-template={{.type}} {{.object.metadata.name}} {{.object.data.a}}{{"\n"}}`,
			[]string{"ADDED foo 1", "MODIFIED foo 2", "DELETED foo 2"}, [2]int{1, 2}},
		{"custom-columns", `custom-columns=EVENT:.type,NAME:.object.metadata.name,A:.object.data.a`,
			[]string{"EVENT NAME A", "ADDED foo 1", "MODIFIED foo 2", "DELETED foo 2"}, [2]int{2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := cp.Namespace(t)
			kc := writeKubeconfig(t, cp.AdminConfig(), ns)
			cs := cp.Clientset(t)
			ctx := context.Background()
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap("foo"), metav1.CreateOptions{})
			require.NoError(t, err)

			r := s55StartWatch(t, kc, "cm", "-w", "--output-watch-events", "-o", tc.output)
			r.waitLines(t, tc.stages[0])
			_, err = cs.CoreV1().ConfigMaps(ns).Patch(ctx, "foo", types.MergePatchType, []byte(`{"data":{"a":"2"}}`), metav1.PatchOptions{})
			require.NoError(t, err)
			r.waitLines(t, tc.stages[1])
			require.NoError(t, cs.CoreV1().ConfigMaps(ns).Delete(ctx, "foo", metav1.DeleteOptions{}))
			got := r.waitLines(t, len(tc.want))
			assert.Equal(t, 0, r.stop(t))
			if tc.name == "custom-columns" {
				for i, l := range got {
					got[i] = strings.Join(strings.Fields(l), " ")
				}
			}
			assert.Equal(t, tc.want, got, r.stdout.String())
			assert.Empty(t, r.stderr.String())
		})
	}
}

// -w -o custom-columns prints its header once, at the start, and the columns of every event
// line up, as kubectl's one tab writer (which remembers column widths) flushed per event
// lines them up. kquery printed no header and sized each event's columns on its own row.
func TestS55WatchCustomColumnsHeaderOnceAligned(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	cs := cp.Clientset(t)
	ctx := context.Background()
	for _, n := range []string{"a-rather-long-name", "b"} {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap(n), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	r := s55StartWatch(t, kc, "cm", "-w", "-o", "custom-columns=NAME:.metadata.name,A:.data.a")
	r.waitLines(t, 3)
	_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap("c"), metav1.CreateOptions{})
	require.NoError(t, err)
	r.waitLines(t, 4)
	_, err = cs.CoreV1().ConfigMaps(ns).Patch(ctx, "b", types.MergePatchType, []byte(`{"data":{"a":"22"}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	lines := r.waitLines(t, 5)
	assert.Equal(t, 0, r.stop(t))
	require.Len(t, r.lines(), 5, r.stdout.String())

	var fields [][]string
	for _, l := range lines {
		fields = append(fields, strings.Fields(l))
	}
	assert.Equal(t, [][]string{{"NAME", "A"}, {"a-rather-long-name", "1"}, {"b", "1"}, {"c", "1"}, {"b", "22"}}, fields)
	col := strings.LastIndex(lines[0], " ") + 1
	assert.Equal(t, len("a-rather-long-name")+3, col, "the header is aligned with the first rows")
	for _, l := range lines[1:] {
		assert.Equal(t, col, strings.LastIndex(l, " ")+1, "every event's second column starts under the header's: %q", l)
	}

	// --no-headers: no header, even once.
	r = s55StartWatch(t, kc, "cm", "-w", "--no-headers", "-o", "custom-columns=NAME:.metadata.name")
	r.waitLines(t, 3)
	assert.Equal(t, 0, r.stop(t))
	assert.Equal(t, []string{"a-rather-long-name", "b", "c"}, r.lines())
}

// An object deleted and created again under its name between two looks of --watch is
// another object: its deletion prints, then the new one as added, as kubectl's watch shows
// the two events. kquery printed the new object as a change (MODIFIED) of the old one.
func TestS55WatchRecreatedObject(t *testing.T) {
	cases := []struct {
		name string
		args []string
		// want returns the lines expected from the old and the new object's UIDs.
		want func(oldUID, newUID, sentinelUID string) []string
	}{
		{"jsonpath", []string{"-o", `jsonpath={.metadata.name} {.metadata.uid}{"\n"}`},
			func(o, n, s string) []string { return []string{"foo " + o, "foo " + o, "foo " + n, "zz " + s} }},
		{"table with events", []string{"--output-watch-events"},
			func(o, n, s string) []string {
				return []string{"EVENT NAME DATA", "ADDED foo 1", "DELETED foo 1", "ADDED foo 1", "ADDED zz 1"}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := cp.Namespace(t)
			kc := writeKubeconfig(t, cp.AdminConfig(), ns)
			cs := cp.Clientset(t)
			ctx := context.Background()
			old, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap("foo"), metav1.CreateOptions{})
			require.NoError(t, err)

			// The first time --watch looks at foo again (after the label below), foo is
			// deleted and created again, and the cache holds the new one before --watch goes
			// on: the two events come between two looks.
			var once sync.Once
			var armed atomic.Bool
			var newUID types.UID
			t.Cleanup(func() { watchTestHook = nil }) // after the run stops (cleanups run last first)
			watchTestHook = func(w *watcher, k key) {
				if k.name != "foo" || !armed.Load() {
					return
				}
				once.Do(func() {
					if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "foo", metav1.DeleteOptions{}); err != nil {
						t.Errorf("delete: %v", err)
						return
					}
					created, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap("foo"), metav1.CreateOptions{})
					if err != nil {
						t.Errorf("create: %v", err)
						return
					}
					newUID = created.UID
					deadline := time.Now().Add(30 * time.Second)
					for time.Now().Before(deadline) {
						if cur, err := w.s.inf.Get(ns, "foo"); err == nil && cur.GetUID() == created.UID {
							return
						}
						time.Sleep(20 * time.Millisecond)
					}
					t.Errorf("the cache did not see the new foo")
				})
			}
			r := s55StartWatch(t, kc, append([]string{"cm", "-w"}, tc.args...)...)
			n := len(tc.want("", "", "")) - 4 // lines before foo's
			r.waitLines(t, n+1)
			armed.Store(true)
			_, err = cs.CoreV1().ConfigMaps(ns).Patch(ctx, "foo", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
			require.NoError(t, err)
			r.waitLines(t, n+3)
			// A last object: once it is printed, every event about foo has been looked at.
			zz, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap("zz"), metav1.CreateOptions{})
			require.NoError(t, err)
			r.waitLines(t, n+4)
			assert.Equal(t, 0, r.stop(t))
			require.NotEmpty(t, newUID)
			var got []string
			for _, l := range r.lines() {
				f := strings.Fields(l)
				if tc.name != "jsonpath" {
					f = f[:len(f)-1] // AGE
				}
				got = append(got, strings.Join(f, " "))
			}
			assert.Equal(t, tc.want(string(old.UID), string(newUID), string(zz.UID)), got, r.stdout.String())
		})
	}
}

// Ctrl-C during --watch ends it with exit status 0, no message and nothing more printed,
// also when it comes while --watch is looking at a change: evaluating a --where JSONPath on
// it (kquery exited 130 when the cancelled evaluation failed), or asking the server for its
// row (kquery took the cancelled request for a server without Tables and printed a NAME and
// AGE row). The cancel races with the informer's shutdown (after which looking at the change
// stops early, without an error): each case runs a few times.
func TestS55CancelWhileLookingAtAChange(t *testing.T) {
	holder := "a"
	for _, tc := range []struct {
		name   string
		args   []string
		create func(t *testing.T, ns string) (resourceVersion string)
		change func(t *testing.T, ns string)
	}{
		{"where", []string{"cm", "--where", "{.data.a}=1"},
			func(t *testing.T, ns string) string {
				o, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), configMap("foo"), metav1.CreateOptions{})
				require.NoError(t, err)
				return o.ResourceVersion
			},
			func(t *testing.T, ns string) {
				_, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Patch(context.Background(), "foo", types.MergePatchType,
					[]byte(`{"data":{"b":"2"}}`), metav1.PatchOptions{})
				require.NoError(t, err)
			}},
		{"server columns", []string{"leases"},
			func(t *testing.T, ns string) string {
				o, err := cp.Clientset(t).CoordinationV1().Leases(ns).Create(context.Background(), &coordinationv1.Lease{
					ObjectMeta: metav1.ObjectMeta{Name: "lock"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}, metav1.CreateOptions{})
				require.NoError(t, err)
				return o.ResourceVersion
			},
			func(t *testing.T, ns string) {
				_, err := cp.Clientset(t).CoordinationV1().Leases(ns).Patch(context.Background(), "lock", types.MergePatchType,
					[]byte(`{"spec":{"holderIdentity":"b"}}`), metav1.PatchOptions{})
				require.NoError(t, err)
			}},
	} {
		for i := range 6 {
			t.Run(fmt.Sprintf("%s/%d", tc.name, i), func(t *testing.T) {
				ns := cp.Namespace(t)
				kc := writeKubeconfig(t, cp.AdminConfig(), ns)
				rv := tc.create(t, ns)

				var r *s55Watch
				ready := make(chan struct{})
				t.Cleanup(func() { watchTestHook = nil })
				watchTestHook = func(w *watcher, k key) {
					<-ready
					if cur, err := w.s.inf.Get(k.namespace, k.name); err == nil && cur.GetResourceVersion() != rv {
						r.cancel() // Ctrl-C, just before the change is looked at
					}
				}
				r = s55StartWatch(t, kc, append(tc.args, "-w")...)
				close(ready)
				r.waitLines(t, 2)
				tc.change(t, ns)
				assert.Equal(t, 0, r.stop(t))
				assert.Empty(t, r.stderr.String())
				assert.Len(t, r.lines(), 2, r.stdout.String())
			})
		}
	}
}

// A CRD column whose JSONPath the apiserver cannot parse (the CRD's validation lets it
// through) ends the columns, on the server: the columns before it print, not it nor the
// ones after it. kquery printed NAME and AGE only.
func TestS55CRDColumnThatDoesNotParse(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	crd := testenv.NewCRD("s55.kquery.test", "Dial", "dials")
	crd.Spec.Versions[0].AdditionalPrinterColumns = []apiextv1.CustomResourceColumnDefinition{
		{Name: "First", Type: "string", JSONPath: ".spec.a"},
		{Name: "Bad", Type: "string", JSONPath: ".spec.x["},
		{Name: "Third", Type: "string", JSONPath: ".spec.c"},
	}
	cp.InstallCRD(t, crd)
	gvr := schema.GroupVersionResource{Group: "s55.kquery.test", Version: "v1", Resource: "dials"}
	_, err := cp.Dynamic(t).Resource(gvr).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "s55.kquery.test/v1", "kind": "Dial", "metadata": map[string]any{"name": "d1"},
		"spec": map[string]any{"a": "one", "x": []any{"two"}, "c": "three"},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)

	cf, err := newColumnFinder(cp.AdminConfig(), t.Logf)
	require.NoError(t, err)
	server := s52ServerTable(t, cf, gvr, ns, true)
	var names []string
	for _, c := range server.ColumnDefinitions {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"Name", "First"}, names, "the server's columns")

	testenv.Eventually(t, 30*time.Second, func() bool { return kquery(t, kc, "dials").code == 0 }, "dials in discovery")
	r := kquery(t, kc, "dials")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^NAME +FIRST\nd1 +one\n$`, r.stdout)
	assert.Empty(t, r.stderr)

	r = kquery(t, kc, "dials", "-v", "1")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^NAME +FIRST\nd1 +one\n$`, r.stdout)
	assert.Equal(t, 1, strings.Count(r.stderr, `JSONPath ".spec.x[" does not parse`), r.stderr)

	// The first column bad: NAME alone, as the server prints it.
	c, err := crdColumns("dials.s55.kquery.test", "v1", []apiextv1.CustomResourceColumnDefinition{
		{Name: "Bad", Type: "string", JSONPath: ".spec.x["}, {Name: "Third", Type: "string", JSONPath: ".spec.c"},
	})
	require.NoError(t, err)
	require.Len(t, c.columns, 1)
	cells, err := c.cells(map[string]any{"metadata": map[string]any{"name": "d1"}}, time.Now())
	require.NoError(t, err)
	assert.Equal(t, []any{"d1"}, cells)
}

// -w --ignore-not-found with a name not found ends at once, exit status 0, nothing printed,
// as kubectl (whose builder fails before the watch starts). kquery kept watching.
func TestS55WatchIgnoreNotFound(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr testsupport.Buffer
	code := run(ctx, []string{"--kubeconfig", kc, "cm", "nope", "-w", "--ignore-not-found"}, &stdout, &stderr)
	assert.NoError(t, ctx.Err(), "it ends at once")
	assert.Equal(t, 0, code, stderr.String())
	assert.Empty(t, stdout.String())
	assert.Empty(t, stderr.String())
	r := kquery(t, kc, "cm", "nope", "-w")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `configmaps "nope" not found`)
}

// --sort-by with --watch orders the first listing and warns, on stderr, that the events
// that follow are not sorted, in kubectl's words; with --watch-only, that it is ignored.
func TestS55WatchSortByWarns(t *testing.T) {
	ns := cp.Namespace(t)
	kc := writeKubeconfig(t, cp.AdminConfig(), ns)
	cs := cp.Clientset(t)
	ctx := context.Background()
	for _, n := range []string{"b", "c", "a"} {
		cm := configMap(n)
		cm.Data["a"] = map[string]string{"a": "3", "b": "1", "c": "2"}[n]
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	r := s55StartWatch(t, kc, "cm", "-w", "--sort-by", "{.data.a}", "-o", "name")
	assert.Equal(t, []string{"configmap/b", "configmap/c", "configmap/a"}, r.waitLines(t, 3), "the first listing is sorted")
	assert.Equal(t, 0, r.stop(t))
	assert.Equal(t, "warning: --watch requested, --sort-by will be ignored for watch events received\n", r.stderr.String())

	r = s55StartWatch(t, kc, "cm", "--watch-only", "--sort-by", "{.data.a}", "-o", "name")
	// Objects created until the watch prints one: those created before it synced are its
	// first listing, which --watch-only does not print.
	polls := 0
	testenv.Eventually(t, 30*time.Second, func() bool {
		if polls%10 == 0 { // one object per 200 ms
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap(fmt.Sprint("d", polls)), metav1.CreateOptions{})
			require.NoError(t, err)
		}
		polls++
		return len(r.lines()) > 0
	}, "an event printed")
	assert.Equal(t, 0, r.stop(t))
	for _, l := range r.lines() {
		assert.True(t, strings.HasPrefix(l, "configmap/d"), "only events: %q", l)
	}
	assert.Equal(t, "warning: --watch-only requested, --sort-by will be ignored\n", r.stderr.String())
}

// -A -w on a cluster-scoped resource prints as kubectl get -A -w does: no NAMESPACE
// column (the resource has none), the first listing, then each change of a shown cell
// (a namespace deleted turns Terminating: no controller here removes it).
func TestS55WatchAllNamespacesClusterScoped(t *testing.T) {
	kc := writeKubeconfig(t, cp.AdminConfig(), "default")
	cs := cp.Clientset(t)
	ctx := context.Background()
	id := fmt.Sprintf("w%d", time.Now().UnixNano())
	mk := func(name string) {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: map[string]string{"kquery-watch": id}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	mk(id + "-a")
	r := s55StartWatch(t, kc, "namespaces", "-A", "-w", "-l", "kquery-watch="+id)
	lines := r.waitLines(t, 2)
	assert.Equal(t, []string{"NAME", "STATUS", "AGE"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{id + "-a", "Active"}, strings.Fields(lines[1])[:2])

	mk(id + "-b")
	lines = r.waitLines(t, 3)
	assert.Equal(t, []string{id + "-b", "Active"}, strings.Fields(lines[2])[:2])
	require.NoError(t, cs.CoreV1().Namespaces().Delete(ctx, id+"-a", metav1.DeleteOptions{}))
	lines = r.waitLines(t, 4)
	assert.Equal(t, []string{id + "-a", "Terminating"}, strings.Fields(lines[3])[:2])
	assert.Equal(t, 0, r.stop(t))
	assert.Len(t, r.lines(), 4, "no other row: %s", r.stdout.String())
	assert.Empty(t, r.stderr.String())
}
