package discovery

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// While the watch of CRDs is down (before it first opens, and from its end until it opens
// again: an apiserver restarting, client-go's backoff), the client does not count as
// following and the follower polls; a CRD created meanwhile would otherwise reach nobody
// until the watch opens again, which client-go's backoff may put off for a minute.
func TestWatchDownIsNotFollowing(t *testing.T) {
	srv := newFakeServer(t)
	c, err := New(srv.config(), Options{})
	require.NoError(t, err)
	f := newFollower(c)
	watches := make(chan *watch.FakeWatcher)
	w := newTypedWatcher(f, "customresourcedefinitions.apiextensions.k8s.io",
		func(context.Context, metav1.ListOptions) (*apiextv1.CustomResourceDefinitionList, error) {
			return &apiextv1.CustomResourceDefinitionList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
		},
		func(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
			select {
			case fw := <-watches: // the test lets a watch open
				return fw, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		&apiextv1.CustomResourceDefinition{}, stripCRD, func(any, bool) {})
	f.watchers = []*watcher{w}
	c.setFollower(f)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		c.Wait()
	})
	w.start(ctx)

	following := func(want bool) func() bool {
		return func() bool { return c.Following() == want && f.polling() == !want }
	}
	require.True(t, following(false)(), "no watch open yet")
	first := watch.NewFake()
	watches <- first
	require.Eventually(t, following(true), 5*time.Second, time.Millisecond, "the watch is open")

	first.Stop() // the server ends the watch
	require.Eventually(t, following(false), 5*time.Second, time.Millisecond, "the watch ended")
	// The watch is down until it opens again, however long that takes.
	require.Never(t, following(true), 200*time.Millisecond, 10*time.Millisecond)
	watches <- watch.NewFake()
	require.Eventually(t, following(true), 30*time.Second, time.Millisecond, "the watch is open again")
}

// The end of a watch reported after a newer watch opened (the reflector stops a watch and
// opens the next one at once; the old one's forwarding ends later) leaves the newer one
// counted open.
func TestLateWatchEndKeepsNewerWatchOpen(t *testing.T) {
	c, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{})
	require.NoError(t, err)
	w := &watcher{f: newFollower(c), running: true}
	ctx := t.Context()
	old := w.watchOpened(ctx)
	w.watchOpened(ctx)
	w.watchDown(ctx, old)
	require.False(t, w.isDown(), "the newer watch is open")
	w.watchDown(ctx, 0)
	require.True(t, w.isDown(), "listing again: no watch open")
}
