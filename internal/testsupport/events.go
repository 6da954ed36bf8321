package testsupport

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/informer"
)

// Events records what an event handler was told, by kind, as object names.
type Events struct {
	mu                     sync.Mutex
	adds, updates, deletes []string
}

// Handler returns the handler that records into ev.
func (ev *Events) Handler() cache.ResourceEventHandler {
	name := func(o any) string {
		key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(o)
		return key[strings.LastIndex(key, "/")+1:]
	}
	add := func(to *[]string, o any) {
		ev.mu.Lock()
		*to = append(*to, name(o))
		ev.mu.Unlock()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { add(&ev.adds, o) },
		UpdateFunc: func(_, o any) { add(&ev.updates, o) },
		DeleteFunc: func(o any) { add(&ev.deletes, o) },
	}
}

// ItemHandler returns an informer.ItemHandlerFuncs that records into ev as Handler does,
// each name as Item.Name reads it, and, in the compact mode (raw set), "no raw" for an item
// without its stored JSON and "undecodable" for one DecodeInto fails on.
func ItemHandler[T informer.Object](ev *Events, raw bool) informer.ItemHandlerFuncs[T] {
	name := func(it informer.Item[T]) string {
		if raw && it.Raw() == nil {
			return "no raw " + it.Name()
		}
		var m metav1.PartialObjectMetadata
		if err := it.DecodeInto(&m); err != nil || m.Name != it.Name() {
			return fmt.Sprint("undecodable ", it.Name(), err)
		}
		return it.Name()
	}
	add := func(to *[]string, it informer.Item[T]) {
		ev.mu.Lock()
		*to = append(*to, name(it))
		ev.mu.Unlock()
	}
	return informer.ItemHandlerFuncs[T]{
		AddFunc:    func(it informer.Item[T], _ bool) { add(&ev.adds, it) },
		UpdateFunc: func(_, it informer.Item[T]) { add(&ev.updates, it) },
		DeleteFunc: func(it informer.Item[T], _ bool) { add(&ev.deletes, it) },
	}
}

// Get returns the names recorded so far, each kind sorted.
func (ev *Events) Get() (adds, updates, deletes []string) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	s := func(in []string) []string { out := append([]string{}, in...); sort.Strings(out); return out }
	return s(ev.adds), s(ev.updates), s(ev.deletes)
}

// Churn updates the object named update (a label), deletes del and creates create (a copy
// of update), as a process that was down would have missed.
func Churn(t testing.TB, ctx context.Context, ri dynamic.ResourceInterface, create, update, del string) {
	t.Helper()
	obj, err := ri.Get(ctx, update, metav1.GetOptions{})
	require.NoError(t, err)
	obj.SetLabels(map[string]string{"updated": fmt.Sprint(time.Now().UnixNano())})
	_, err = ri.Update(ctx, obj, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, ri.Delete(ctx, del, metav1.DeleteOptions{}))
	obj.SetName(create)
	obj.SetResourceVersion("")
	obj.SetUID("")
	_, err = ri.Create(ctx, obj, metav1.CreateOptions{})
	require.NoError(t, err)
}
