package dynamicinformer_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/internal/snapshot"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// A snapshot written for one cluster is not resumed on another cluster at the same address
// (a development cluster deleted and created again), although the new cluster's
// resourceVersions have passed the snapshot's and its watch cache accepts a watch from
// that version: resumed, the old cluster's objects would never be deleted. The informer
// lists the new cluster instead, and its next snapshot replaces the old one's file.
func TestSnapshotOfAnotherClusterAtTheSameAddress(t *testing.T) {
	ctx := context.Background()
	a, b := startControlPlane(t), startControlPlane(t)
	proxy := newSwitchProxy(t)
	through := func(c *testenv.ControlPlane) *rest.Config {
		cfg := c.AdminConfig()
		cfg.Host = proxy.url
		return cfg
	}
	const ns = "recreated"
	configMaps := func(c *testenv.ControlPlane) dynamic.ResourceInterface {
		t.Helper()
		_, err := c.Clientset(t).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
		return c.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	}
	newCompact := func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
	}
	opts := dynamicinformer.Options{Namespace: ns, SnapshotDir: t.TempDir()}

	proxy.to(a.Host())
	createConfigMaps(t, configMaps(a), 3) // o0, o1, o2
	f, _, _ := testsupport.StartFactory(t, through(a), opts, newCompact)
	inf, err := f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	waitSync(t, inf)
	f.Shutdown()
	saved, err := strconv.ParseUint(must(snapshot.PeekResourceVersion(snapshotFile(t, opts.SnapshotDir))), 10, 64)
	require.NoError(t, err)

	// The other cluster: past the snapshot's version with writes of another resource, so
	// that its configmaps' watch cache still reaches back before that version.
	proxy.to(b.Host())
	cms := configMaps(b)
	secrets := b.Clientset(t).CoreV1().Secrets(ns)
	s, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "counter"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	for n := uint64(0); n <= saved; n = must(strconv.ParseUint(s.ResourceVersion, 10, 64)) {
		s.StringData = map[string]string{"n": fmt.Sprint(n)}
		s, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	for i := range 2 {
		_, err := cms.Create(ctx, toUnstructured(t, &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("n", i)}}), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	// What resuming would rely on: the new cluster accepts a watch from the old snapshot's version.
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatUint(saved, 10)})
	require.NoError(t, err)
	ev := <-w.ResultChan()
	w.Stop()
	require.NotEqual(t, "ERROR", string(ev.Type), "the watch from %d: %v", saved, ev.Object)

	f, rec, log := testsupport.StartFactory(t, through(b), opts, newCompact)
	inf, err = f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	waitSync(t, inf)
	cacheEquals(t, ctx, inf, cms)
	require.ElementsMatch(t, []string{ns + "/n0", ns + "/n1"}, testsupport.Keys(must(inf.List(nil))))
	lists, _ := rec.Count("/api/v1/namespaces/" + ns + "/configmaps")
	require.Equal(t, 1, lists, "the other cluster is listed")
	require.Equal(t, 1, log.Count("Snapshot ignored", "another informer"), "%s", log)
	f.Shutdown()
	snapshotFile(t, opts.SnapshotDir) // one file: the new cluster's replaced the old one's
}

func startControlPlane(t *testing.T) *testenv.ControlPlane {
	t.Helper()
	c, err := testenv.Start(testenv.Options{})
	require.NoError(t, err)
	t.Cleanup(c.Stop)
	return c
}

// switchProxy forwards TCP connections on one loopback address to the target of the
// moment: two clusters at one address, one after the other.
type switchProxy struct {
	url    string
	target atomic.Value // "host:port"
	mu     sync.Mutex
	conns  []net.Conn
}

func newSwitchProxy(t *testing.T) *switchProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &switchProxy{url: "https://" + l.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = l.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", p.target.Load().(string))
			if err != nil {
				_ = in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(out, in); _ = out.Close() })
			wg.Go(func() { _, _ = io.Copy(in, out); _ = in.Close() })
		}
	})
	return p
}

// to sends new connections to host (an https:// URL).
func (p *switchProxy) to(host string) {
	u, err := url.Parse(host)
	if err != nil {
		panic(err)
	}
	p.target.Store(u.Host)
}
