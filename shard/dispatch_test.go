package shard

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
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
			obj, ev = d.Obj, "tombstone"
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
	}, logr.Discard())
	defer d.close()
	obj := func(name, uid, rv string) fakeVersion {
		return fakeVersion{&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid), ResourceVersion: rv}}}
	}
	oldRange, newRange := &piece[*metav1.PartialObjectMetadata]{}, &piece[*metav1.PartialObjectMetadata]{}
	d.upsert(oldRange, obj("stays", "u1", "1"))
	d.upsert(oldRange, obj("leaves", "u2", "1"))
	d.upsert(oldRange, obj("deleted", "u3", "1"))
	d.upsert(newRange, obj("stays", "u1", "1")) // the new range's initial list: already held
	d.upsert(newRange, obj("enters", "u4", "1"))
	d.upsert(oldRange, obj("stays", "u1", "2"))
	d.upsert(newRange, obj("stays", "u1", "2")) // the same version twice
	d.deleted(oldRange, obj("deleted", "u3", "1"), false)
	d.upsert(newRange, obj("gone", "u6", "1"))
	d.deleted(newRange, obj("gone", "u6", "1"), true) // inferred: a tombstone
	d.remove(oldRange)                                // the handoff: "leaves" now belongs to another replica
	d.upsert(oldRange, obj("late", "u5", "1"))        // an event of the released informer: ignored
	d.upsert(newRange, fakeVersion{})                 // cannot be decoded: logged, skipped
	want := []string{"add stays@1", "add leaves@1", "add deleted@1", "add enters@1", "update stays@2",
		"delete deleted@1", "add gone@1", "tombstone gone@1", "delete leaves@1"}
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return assert.ObjectsAreEqual(want, got)
	}, 5*time.Second, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, want, got)
}

// fakeVersion is a version of an object for the dispatcher's unit tests; without an object
// it cannot be decoded.
type fakeVersion struct{ o *metav1.PartialObjectMetadata }

func (v fakeVersion) meta() *metav1.ObjectMeta {
	if v.o == nil {
		return &metav1.ObjectMeta{Name: "undecodable", UID: "undecodable"}
	}
	return &v.o.ObjectMeta
}
func (v fakeVersion) Key() string             { return "ns/" + v.meta().Name }
func (v fakeVersion) UID() types.UID          { return v.meta().UID }
func (v fakeVersion) ResourceVersion() string { return v.meta().ResourceVersion }
func (v fakeVersion) Object() (*metav1.PartialObjectMetadata, error) {
	if v.o == nil {
		return nil, errors.New("undecodable")
	}
	return v.o, nil
}

// TestShardDispatcherLaggingInformer: during a handoff the new range's informer can list an
// object at a later version than the old range's informer has delivered yet; the old one's
// earlier versions, arriving next, are not passed on as updates that go back in time.
func TestShardDispatcherLaggingInformer(t *testing.T) {
	var mu sync.Mutex
	var got []string
	record := func(ev string, old, obj any) {
		o := obj.(*metav1.PartialObjectMetadata)
		s := ev + " " + o.Name + "@" + o.ResourceVersion
		if old != nil {
			s = ev + " " + o.Name + "@" + old.(*metav1.PartialObjectMetadata).ResourceVersion + "->" + o.ResourceVersion
		}
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	}
	d := newDispatcher[*metav1.PartialObjectMetadata](cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { record("add", nil, obj) },
		UpdateFunc: func(old, obj any) { record("update", old, obj) },
		DeleteFunc: func(obj any) { record("delete", nil, obj) },
	}, logr.Discard())
	defer d.close()
	obj := func(rv string) fakeVersion {
		return fakeVersion{&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "u", ResourceVersion: rv}}}
	}
	oldRange, newRange := &piece[*metav1.PartialObjectMetadata]{}, &piece[*metav1.PartialObjectMetadata]{}
	d.upsert(oldRange, obj("5"))
	d.upsert(newRange, obj("7")) // the new range's list, ahead of the old range's watch
	d.upsert(oldRange, obj("6")) // the old range's watch catching up
	d.upsert(oldRange, obj("7"))
	d.upsert(oldRange, obj("8"))
	d.upsert(newRange, obj("8"))
	d.remove(oldRange)
	d.upsert(newRange, obj("9"))
	want := []string{"add x@5", "update x@5->7", "update x@7->8", "update x@8->9"}
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return assert.ObjectsAreEqual(want, got)
	}, 5*time.Second, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, want, got)
}

// TestShardDispatcherForgetsReleasedPieces: the dispatcher keeps no piece it has removed (a
// handoff's released informer, whose stopped informer holds the emptied cache's tables),
// so that a long-running replica does not keep one per handoff.
func TestShardDispatcherForgetsReleasedPieces(t *testing.T) {
	d := newDispatcher[*metav1.PartialObjectMetadata](cache.ResourceEventHandlerFuncs{}, logr.Discard())
	defer d.close()
	obj := func(name, rv string) fakeVersion {
		return fakeVersion{&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), ResourceVersion: rv}}}
	}
	kept := &piece[*metav1.PartialObjectMetadata]{}
	collected := make(chan struct{})
	func() {
		released := &piece[*metav1.PartialObjectMetadata]{}
		runtime.AddCleanup(released, func(c chan struct{}) { close(c) }, collected)
		d.upsert(released, obj("both", "1"))
		d.upsert(released, obj("leaves", "1"))
		d.upsert(kept, obj("both", "1"))
		d.upsert(released, obj("both", "2")) // the last version came through it
		d.remove(released)
	}()
	for range 50 {
		runtime.GC()
		select {
		case <-collected:
			d.upsert(kept, obj("both", "3"))
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("a released piece is still referenced by the dispatcher")
}
