package dynamicinformer_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/internal/testsupport"
)

// A compact informer whose one streamed LIST outlives the apiserver's request timeout
// (--request-timeout=5s here; a client that reads slower than the server sends, as a
// CPU-throttled process on a large resource does) is cut at every attempt. After two cuts
// it lists in pages of 500, each a request of its own, and syncs every object, saying so
// once in its log. The reader here stalls 6 s at the start of every LIST without a limit
// (the streamed ones), over 12 MB of ConfigMaps: more than the connection buffers, so the
// server's writes block until its timeout cuts the stream; pages are read at once.
func TestCompactListCutByRequestTimeoutListsInPages(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	const n = 1500
	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	testsupport.CreateN(t, n, func(i int) error {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", i)},
			Data: testsupport.BigConfigMapData(uint64(i), 240)}, metav1.CreateOptions{})
		return err
	})
	cfg := rest.CopyConfig(cp.AdminConfig())
	cfg.DisableCompression = true // the bytes on the wire are the JSON's: 12 MB
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return testsupport.RoundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			q := req.URL.Query()
			if err == nil && req.URL.Path == path && q.Get("watch") == "" && q.Get("limit") == "" {
				resp.Body = &stalledBody{ReadCloser: resp.Body, until: time.Now().Add(6 * time.Second)}
			}
			return resp, err
		})
	})
	f, rec, log := testsupport.StartFactory(t, cfg, dynamicinformer.Options{Namespace: ns},
		func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
			return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
		})
	inf, err := f.Informer(ctx, "configmaps")
	require.NoError(t, err)
	defer inf.Release()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	require.NoError(t, inf.WaitForSync(wctx), "synced from pages")
	items, err := inf.ListItems("")
	require.NoError(t, err)
	assert.Len(t, items, n)

	var streamed, pages int
	for _, r := range rec.Requests(path) {
		switch {
		case r.Watch:
		case strings.Contains(r.Query, "limit=500"):
			pages++
		default:
			streamed++
		}
	}
	assert.Equal(t, 2, streamed, "two streamed LISTs, both cut")
	assert.GreaterOrEqual(t, pages, (n+499)/500, "then pages")
	assert.Equal(t, 1, log.Count("listing in pages"), "said once")
}

// stalledBody reads nothing until a time, as a reader too slow for the server would.
type stalledBody struct {
	io.ReadCloser
	until time.Time
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if d := time.Until(b.until); d > 0 {
		time.Sleep(d)
	}
	return b.ReadCloser.Read(p)
}
