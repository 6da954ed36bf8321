package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/query"
)

// watch prints the answer, then, until ctx ends, the rows that change: an object that
// starts matching (ADDED), one whose printed row changes (MODIFIED), one that is deleted or
// stops matching (DELETED, its last row). A change the row does not show (a status
// heartbeat, a new resourceVersion) prints nothing, and neither does time passing: rows
// are compared as printed at the same instant, so AGE never counts as a change. Other
// output formats print the object on every change.
func (x *execution) watch(ctx context.Context, s *state) error {
	if s.err != nil {
		return reportAllButLast(x.stderr, stateErrs(s))
	}
	o := x.o
	w := &watcher{x: x, s: s, shown: map[string]*unstructured.Unstructured{}, serverRows: map[string]string{}}
	if o.format.Kind == "" {
		w.tw = printers.GetNewTabWriter(x.stdout)
		w.printer = printers.NewTablePrinter(printers.PrintOptions{
			NoHeaders: o.table.NoHeaders, WithNamespace: o.allNamespaces && s.t.Res.Namespaced,
			WithKind: x.multi, Kind: s.t.Res.GVK.GroupKind(), Wide: o.table.Wide,
			ShowLabels: o.table.ShowLabels, ColumnLabels: o.table.LabelColumns,
		})
		w.src = x.columns.source(ctx, s.t, s.scope)
	} else if o.format.Kind == "custom-columns" {
		// One tab writer for the whole watch, flushed after each event, as kubectl's: the
		// header once, columns as wide as the widest cell printed so far.
		w.tw = printers.GetNewTabWriter(x.stdout)
	}

	items, _, missing, err := x.pageOf(ctx, s, "")
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		// A name asked for is missing: as kubectl, the errors and exit 1, nothing printed of
		// the others and no watch.
		return reportAllButLast(x.stderr, missing)
	}
	if o.ignoreMissing && x.anyNameMissing(s) {
		// As kubectl: with --ignore-not-found, a name not found ends the watch before it
		// starts, with nothing printed and exit status 0.
		return nil
	}
	for _, it := range items {
		w.shown[objectKey(it)] = it
	}
	// An empty answer prints nothing, not even kubectl's "No resources found", which its
	// --watch does not print either: the rows come as objects appear.
	if !o.watchOnly && len(items) > 0 {
		if err := w.print(ctx, string(watch.Added), items); err != nil {
			return err
		}
	}

	// Parked or retrying while watching (the CRD deleted, access revoked, the server gone):
	// say so, and say when it is back; it resumes by itself.
	var mu sync.Mutex
	lastNote := ""
	unsubscribe, err := x.factory.SubscribeStatus(func(st informer.Status) {
		if st.Key != s.inf.Key() || ctx.Err() != nil { // Ctrl-C: stopping is no news
			return
		}
		mu.Lock()
		defer mu.Unlock()
		note := statusNote(qualified(s.t.Res), st)
		if note == "" && lastNote != "" && st.Phase == informer.PhaseSynced {
			note = fmt.Sprintf("kquery: %s: watching again", qualified(s.t.Res))
		}
		if note != "" && note != lastNote {
			fmt.Fprintln(x.stderr, note)
		}
		if note != "" || st.Phase == informer.PhaseSynced {
			lastNote = note
		}
	})
	if err != nil {
		return err
	}
	defer unsubscribe()

	q := newKeyQueue()
	reg, err := s.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { q.push(obj) },
		UpdateFunc: func(_, obj any) { q.push(obj) },
		DeleteFunc: func(obj any) { q.push(obj) },
	})
	if err != nil {
		return err
	}
	defer func() { _ = s.inf.RemoveEventHandler(reg) }()
	for {
		keys, ok := q.wait(ctx)
		if !ok {
			return nil // Ctrl-C
		}
		for _, k := range keys {
			if ctx.Err() != nil {
				return nil
			}
			if watchTestHook != nil {
				watchTestHook(w, k)
			}
			if err := w.update(ctx, k); err != nil {
				if ctx.Err() != nil {
					// Ctrl-C while looking at it: what failed is what was cancelled. As
					// at any other moment, exit 0 and no message.
					return nil
				}
				return err
			}
		}
	}
}

// watchTestHook, set by tests only, runs before --watch looks at a changed object again.
var watchTestHook func(w *watcher, k key)

// anyNameMissing says whether a name asked for is not in the cache of s.
func (x *execution) anyNameMissing(s *state) bool {
	for _, n := range s.t.Names {
		if _, err := s.inf.Get(s.scope.Namespace, n); apierrors.IsNotFound(err) {
			return true
		}
	}
	return false
}

// statusNote is the line --watch prints when its informer parks or retries, or "".
func statusNote(res string, st informer.Status) string {
	why := ""
	if st.LastError != nil {
		why = ": " + standardMessage(st.LastError)
	}
	switch {
	case st.Phase == informer.PhaseParked && st.Reason == informer.ReasonNotFound:
		return fmt.Sprintf("kquery: %s is no longer served (its CRD deleted?); its objects are gone; waiting for it to be served again%s", res, why)
	case st.Phase == informer.PhaseParked:
		return fmt.Sprintf("kquery: %s: stopped watching (%s); waiting for access%s", res, st.Reason, why)
	case st.Reason != informer.ReasonNone && st.Phase != informer.PhaseStopped:
		return fmt.Sprintf("kquery: %s: retrying (%s); rows may be stale%s", res, st.Reason, why)
	}
	return ""
}

type watcher struct {
	x       *execution
	s       *state
	src     columnSource
	printer printers.ResourcePrinter
	// tw is the table's or custom-columns' tab writer, shared by every event.
	tw interface {
		io.Writer
		Flush() error
	}
	headerDone bool                                  // custom-columns: its header was printed
	shown      map[string]*unstructured.Unstructured // printed and still matching, by ns/name
	// serverRows are the rows last printed from the server's Table, without time columns.
	serverRows map[string]string
}

// update looks at one object again and prints its row if what is printed changed.
func (w *watcher) update(ctx context.Context, k key) error {
	cur, err := w.s.inf.Get(k.namespace, k.name)
	if errors.Is(err, informer.ErrShutdown) || errors.Is(err, informer.ErrReleased) {
		return nil // stopping (Ctrl-C): the object is not gone, the watch is
	}
	present := err == nil
	if present {
		present, err = w.matches(ctx, cur)
		if errors.Is(err, informer.ErrShutdown) || errors.Is(err, informer.ErrReleased) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	prev, was := w.shown[k.String()]
	if present && was && prev.GetUID() != cur.GetUID() {
		// Deleted and created again under its name since it was last looked at: another
		// object. As kubectl's watch would have shown it: the old one deleted, the new one
		// added.
		delete(w.shown, k.String())
		delete(w.serverRows, k.String())
		if err := w.print(ctx, string(watch.Deleted), []*unstructured.Unstructured{prev}); err != nil {
			return err
		}
		w.shown[k.String()] = cur
		return w.print(ctx, string(watch.Added), []*unstructured.Unstructured{cur})
	}
	switch {
	case present && !was:
		w.shown[k.String()] = cur
		return w.print(ctx, string(watch.Added), []*unstructured.Unstructured{cur})
	case present && was:
		if prev.GetResourceVersion() == cur.GetResourceVersion() {
			return nil
		}
		w.shown[k.String()] = cur
		if w.printer == nil {
			return w.print(ctx, string(watch.Modified), []*unstructured.Unstructured{cur})
		}
		now := clock()
		t, err := w.src.table(ctx, []*unstructured.Unstructured{cur}, now)
		if err != nil {
			return err
		}
		same, err := w.sameRow(ctx, prev, t, now)
		if err != nil || same {
			return err
		}
		return w.printTable(string(watch.Modified), t)
	case !present && was:
		delete(w.shown, k.String())
		last := prev
		if cur != nil && err == nil && cur.GetUID() == prev.GetUID() {
			last = cur // stopped matching: its new state says why
		}
		return w.print(ctx, string(watch.Deleted), []*unstructured.Unstructured{last})
	}
	return nil
}

// matches says whether obj is in the answer: the --where conditions and the names.
func (w *watcher) matches(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	q := query.Query{Conditions: slices.Clone(w.x.conditions)}
	q.Conditions = append(q.Conditions, query.Eq(nameIndex, obj.GetName()))
	if len(w.s.t.Names) > 0 && !slices.Contains(w.s.t.Names, obj.GetName()) {
		return false, nil
	}
	if w.s.t.Res.Namespaced {
		q.Namespace = obj.GetNamespace()
	}
	n, err := w.s.inf.Count(ctx, q)
	return n > 0, err
}

// sameRow says whether the row of prev, printed at now, reads as cur's row: rows computed
// locally are compared as printed at the same instant; rows the server fills are compared
// without their time columns (AGE, dates), the server's clock being the server's.
func (w *watcher) sameRow(ctx context.Context, prev *unstructured.Unstructured, cur *metav1.Table, now time.Time) (bool, error) {
	o := w.x.o.table
	if _, server := w.src.(*serverColumns); server {
		last, ok := w.serverRows[objectKey(prev)]
		w.serverRows[objectKey(prev)] = timeless(cur)
		return ok && last == timeless(cur), nil
	}
	t, err := w.src.table(ctx, []*unstructured.Unstructured{prev}, now)
	if err != nil {
		return false, err
	}
	return rowText(t, w.s.t, o, w.x.o.allNamespaces) == rowText(cur, w.s.t, o, w.x.o.allNamespaces), nil
}

// timeless is a one-row table's cells without the columns that show time passing.
func timeless(t *metav1.Table) string {
	if len(t.Rows) == 0 {
		return ""
	}
	var b strings.Builder
	for i, c := range t.ColumnDefinitions {
		if i >= len(t.Rows[0].Cells) || c.Type == "date" || strings.EqualFold(c.Name, "age") || strings.EqualFold(c.Name, "created at") {
			continue
		}
		fmt.Fprintf(&b, "%v\t", t.Rows[0].Cells[i])
	}
	if u, ok := t.Rows[0].Object.Object.(*unstructured.Unstructured); ok {
		b.WriteString(labels.FormatLabels(u.GetLabels())) // for -L and --show-labels
	}
	return b.String()
}

// print prints objects as one event type.
func (w *watcher) print(ctx context.Context, event string, objs []*unstructured.Unstructured) error {
	if w.printer == nil {
		for _, obj := range objs {
			if err := w.printObject(event, printable(obj, w.s.t)); err != nil {
				return err
			}
		}
		return nil
	}
	t, err := w.src.table(ctx, objs, clock())
	if err != nil {
		return err
	}
	if _, server := w.src.(*serverColumns); server {
		for i, o := range objs {
			w.serverRows[objectKey(o)] = timeless(&metav1.Table{ColumnDefinitions: t.ColumnDefinitions, Rows: t.Rows[i : i+1]})
		}
	}
	return w.printTable(event, t)
}

// printObject prints one object in a format other than the table. With
// --output-watch-events, as kubectl: json and yaml print the WatchEvent, and jsonpath,
// go-template and custom-columns are evaluated on it ({.type}, {.object.metadata.name});
// name prints the object's name.
func (w *watcher) printObject(event string, p *unstructured.Unstructured) error {
	x := w.x
	f := x.o.format
	var ev *metav1.WatchEvent
	data := p.Object
	if x.o.watchEvents {
		ev = &metav1.WatchEvent{Type: event, Object: runtime.RawExtension{Object: p}}
		data = map[string]any{"type": event, "object": p.Object}
	}
	switch {
	case f.Kind == "custom-columns":
		if !w.headerDone && !x.o.table.NoHeaders {
			writeCustomColumnsHeader(w.tw, f.Columns)
		}
		w.headerDone = true
		if err := writeCustomColumnsRow(w.tw, f.Columns, data); err != nil {
			return err
		}
		return w.tw.Flush()
	case f.Kind == "jsonpath":
		return printJSONPath(x.stdout, f, data, 1)
	case ev != nil && f.Kind != "name":
		return f.Printer.PrintObj(ev, x.stdout)
	}
	return printObjects(x.stdout, f, []*unstructured.Unstructured{p}, "", true)
}

// printTable prints a table of rows as one event type.
func (w *watcher) printTable(event string, t *metav1.Table) error {
	var obj runtime.Object = cutCells(t)
	if w.x.o.watchEvents {
		obj = &metav1.WatchEvent{Type: event, Object: runtime.RawExtension{Object: obj}}
	}
	if err := w.printer.PrintObj(obj, w.tw); err != nil {
		return err
	}
	return w.tw.Flush()
}

// key names an object.
type key struct{ namespace, name string }

func (k key) String() string {
	if k.namespace == "" {
		return k.name
	}
	return k.namespace + "/" + k.name
}

// keyQueue collects the keys of changed objects from the informer's handler, which must not
// block, for the printing loop; a key queued twice is looked at once.
type keyQueue struct {
	mu     sync.Mutex
	keys   []key
	queued map[key]bool
	ready  chan struct{}
}

func newKeyQueue() *keyQueue {
	return &keyQueue{queued: map[key]bool{}, ready: make(chan struct{}, 1)}
}

func (q *keyQueue) push(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	k := key{u.GetNamespace(), u.GetName()}
	q.mu.Lock()
	if !q.queued[k] {
		q.queued[k] = true
		q.keys = append(q.keys, k)
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// wait returns the queued keys once there are some, or false when ctx ends.
func (q *keyQueue) wait(ctx context.Context) ([]key, bool) {
	for {
		q.mu.Lock()
		keys := q.keys
		q.keys = nil
		clear(q.queued)
		q.mu.Unlock()
		if len(keys) > 0 {
			return keys, true
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-q.ready:
		}
	}
}
