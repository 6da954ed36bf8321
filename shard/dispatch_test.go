package shard

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// TestShardDispatcherUnion: the handler sees the union of a replica's informers: one add
// per object however many informers hold it, an update only for a new version, and a
// delete when the last informer holding it lets go (a handoff) or reports it deleted.
func TestShardDispatcherUnion(t *testing.T) {
	var mu sync.Mutex
	var got []string
	record := func(ev string, obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		o := obj.(*metav1.PartialObjectMetadata)
		mu.Lock()
		got = append(got, ev+" "+o.Name+"@"+o.ResourceVersion)
		mu.Unlock()
	}
	d := newDispatcher[*metav1.PartialObjectMetadata](cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { record("add", obj) },
		UpdateFunc: func(_, obj any) { record("update", obj) },
		DeleteFunc: func(obj any) { record("delete", obj) },
	})
	defer d.close()
	obj := func(name, uid, rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid), ResourceVersion: rv}}
	}
	oldRange, newRange := &piece[*metav1.PartialObjectMetadata]{}, &piece[*metav1.PartialObjectMetadata]{}
	h1, h2 := d.handler(oldRange), d.handler(newRange)
	h1.OnAdd(obj("stays", "u1", "1"), true)
	h1.OnAdd(obj("leaves", "u2", "1"), true)
	h1.OnAdd(obj("deleted", "u3", "1"), true)
	h2.OnAdd(obj("stays", "u1", "1"), true) // the new range's initial list: already held
	h2.OnAdd(obj("enters", "u4", "1"), true)
	h1.OnUpdate(obj("stays", "u1", "1"), obj("stays", "u1", "2"))
	h2.OnUpdate(obj("stays", "u1", "1"), obj("stays", "u1", "2")) // the same version twice
	h1.OnDelete(obj("deleted", "u3", "1"))
	d.remove(oldRange)                      // the handoff: "leaves" now belongs to another replica
	h1.OnAdd(obj("late", "u5", "1"), false) // an event of the released informer: ignored
	want := []string{"add stays@1", "add leaves@1", "add deleted@1", "add enters@1", "update stays@2",
		"delete deleted@1", "delete leaves@1"}
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return assert.ObjectsAreEqual(want, got)
	}, 5*time.Second, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, want, got)
}
