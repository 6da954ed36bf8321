package dynamicinformer_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/internal/snapshot"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// shortWatches makes every watch request ask for a timeout of seconds: the apiserver sends
// a bookmark about two seconds before a watch's deadline, so one comes within seconds
// instead of the minute it takes with the reflector's timeouts.
type shortWatches struct {
	rt      http.RoundTripper
	seconds int
}

func (s shortWatches) RoundTrip(req *http.Request) (*http.Response, error) {
	q := req.URL.Query()
	if q.Get("watch") == "true" || q.Get("watch") == "1" {
		q.Set("timeoutSeconds", strconv.Itoa(s.seconds))
		req = req.Clone(req.Context())
		req.URL.RawQuery = q.Encode()
	}
	return s.rt.RoundTrip(req)
}

// The version a snapshot saves follows the watch's bookmarks, not only the informer's own
// objects: an informer on a namespace nobody changes, on a resource that changes
// elsewhere, saved the version of its last list for good, which falls out of the server's
// watch window while the process runs, so that every restart listed again.
func TestSnapshotBookmarksAdvanceTheSavedVersion(t *testing.T) {
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	quiet := cp.Namespace(t)
	createConfigMaps(t, cp.Dynamic(t).Resource(gvr).Namespace(quiet), 2)
	dir := t.TempDir()
	cfg := rest.CopyConfig(cp.AdminConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return shortWatches{rt: rt, seconds: 4} })
	f, _, _ := testsupport.StartFactory(t, cfg, dynamicinformer.Options{Namespace: quiet, SnapshotDir: dir, SnapshotInterval: 100 * time.Millisecond},
		func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
		})
	inf, err := f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	waitSync(t, inf)
	saved := func() uint64 {
		files, _ := filepath.Glob(filepath.Join(dir, "*.snap"))
		if len(files) != 1 {
			return 0
		}
		rv, err := snapshot.PeekResourceVersion(files[0])
		if err != nil {
			return 0
		}
		n, _ := strconv.ParseUint(rv, 10, 64)
		return n
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return saved() > 0 }, "first snapshot written")

	// The server's version moves on elsewhere; the informer's objects stay as they are.
	busy := cp.Dynamic(t).Resource(gvr).Namespace(cp.Namespace(t))
	createConfigMaps(t, busy, 3)
	l, err := busy.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	serverRV, err := strconv.ParseUint(l.GetResourceVersion(), 10, 64)
	require.NoError(t, err)
	testenv.Eventually(t, 30*time.Second, func() bool { return saved() >= serverRV },
		"the saved resourceVersion reaches the server's (%d) through bookmarks", serverRV)
	objs, err := inf.List(labels.Everything())
	require.NoError(t, err)
	require.Len(t, objs, 2, "the informer's own objects")
}
