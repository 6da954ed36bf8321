package storage

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Objects without a kind get the resource's on the way through, others keep theirs; a
// stopped watch leaves no goroutine, even with an event waiting that nobody reads.
func TestKindWatch(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fw := watch.NewFakeWithChanSize(2, false)
	w := newKindWatch(fw, kindSetter(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}))

	fw.Add(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a"}})
	ev := <-w.ResultChan()
	got := ev.Object.(*metav1.PartialObjectMetadata)
	assert.Equal(t, metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, got.TypeMeta)

	own := metav1.TypeMeta{APIVersion: "example.com/v2", Kind: "Widget"}
	fw.Modify(&metav1.PartialObjectMetadata{TypeMeta: own, ObjectMeta: metav1.ObjectMeta{Name: "b"}})
	ev = <-w.ResultChan()
	require.Equal(t, watch.Modified, ev.Type)
	assert.Equal(t, own, ev.Object.(*metav1.PartialObjectMetadata).TypeMeta, "a kind the server sent is kept")

	fw.Add(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "c"}}) // never read
	w.Stop()
}
