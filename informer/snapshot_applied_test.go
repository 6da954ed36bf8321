package informer

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/internal/snapshot"
)

// rvGate holds the first reader of an object's resourceVersion once armed with it: the
// processing loop, recording what it applied for the snapshot.
type rvGate struct {
	mu      sync.Mutex
	rv      string
	blocked chan struct{} // closed once a reader is held
	release chan struct{}
}

func (g *rvGate) arm(rv string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rv, g.blocked, g.release = rv, make(chan struct{}), make(chan struct{})
}

func (g *rvGate) pass(rv string) {
	g.mu.Lock()
	hold := g.rv != "" && g.rv == rv
	if hold {
		g.rv = ""
	}
	blocked, release := g.blocked, g.release
	g.mu.Unlock()
	if hold {
		close(blocked)
		<-release
	}
}

// gatedObj is a stored object whose resourceVersion's readers pass its gate.
type gatedObj struct {
	*metav1.PartialObjectMetadata
	gate *rvGate
}

func (o gatedObj) GetResourceVersion() string {
	o.gate.pass(o.ResourceVersion)
	return o.ResourceVersion
}

// gatedSnapMode is jsonSnapMode whose stored objects are gatedObjs.
type gatedSnapMode struct {
	jsonSnapMode
	gate rvGate
}

func (m *gatedSnapMode) Transform(user cache.TransformFunc) cache.TransformFunc {
	return func(o any) (any, error) {
		if p, ok := o.(obj); ok {
			return gatedObj{p, &m.gate}, nil
		}
		return o, nil
	}
}

// A snapshot's resourceVersion covers every object it holds: a background write that came
// between the processing loop's applying a change and its recording the change's version
// saved the object at its new version under the previous one, and a process restarted from
// that file after a crash was replayed the change (an update of an object to the version it
// held, a delete of an object it never had, an object set back to an older version).
func TestSnapshotVersionCoversItsObjects(t *testing.T) {
	mode := &gatedSnapMode{jsonSnapMode: jsonSnapMode{snapModeFake: snapModeFake{newFakeMode()}}}
	srv := mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", nil))
	dir := t.TempDir()
	inf := startSnapshotting(t, mode, dir, time.Hour)
	s := inf.h.e.snap
	require.NotZero(t, s.write(context.Background(), "test"), "the first snapshot")

	// A change not saved yet, then another, held as it is recorded.
	srv.update(newObj("ns", "a", map[string]string{"changed": "once"}))
	srv.mu.Lock()
	applied := uint64(srv.rv)
	next := strconv.Itoa(srv.rv + 1)
	srv.mu.Unlock()
	eventually(t, func() bool { return s.appliedRV.Load() == applied }, "the first change applied")
	mode.gate.arm(next)
	srv.update(newObj("ns", "a", map[string]string{"changed": "twice"}))
	<-mode.gate.blocked // the change applied, its version being recorded
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		s.write(context.Background(), "test")
	}()
	select {
	case <-wrote:
	case <-time.After(200 * time.Millisecond): // the write waits for the record
	}
	close(mode.gate.release)
	<-wrote
	files, err := filepath.Glob(filepath.Join(dir, "*.snap"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	rv, err := snapshot.PeekResourceVersion(files[0])
	require.NoError(t, err)
	r, err := snapshot.Open(files[0], must(s.fullIdentity(context.Background())), snapshot.Options{})
	require.NoError(t, err)
	defer func() { _ = r.Close() }()
	b, err := r.Next()
	require.NoError(t, err)
	saved, err := mode.SnapshotDecode(b)
	require.NoError(t, err)
	require.Equal(t, next, saved.(obj).ResourceVersion, "the object saved")
	require.Equal(t, next, rv, "the snapshot's resourceVersion")
}
