package compact

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kindex/kindex/internal/storage"
)

// TestShardSelectorSent: the target's shard selector goes on every LIST (paged and
// streamed) and WATCH, and the server's ShardInfo echo is decoded into the list.
func TestShardSelectorSent(t *testing.T) {
	const sel = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
	f := &fakeServer{
		list: func(url.Values) (int, string) {
			return 200, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5","shardInfo":{"selector":"` + sel + `"}},"items":[]}`
		},
		watch: func(url.Values) (int, string) { return 200, "" },
	}
	lw := newFakeLW(t, f, storage.Target{Resource: podsResource, ShardSelector: sel})
	ctx := context.Background()
	obj, err := lw.ListWithContext(ctx, metav1.ListOptions{Limit: 500})
	require.NoError(t, err)
	require.NotNil(t, obj.(*List).ShardInfo)
	assert.Equal(t, sel, obj.(*List).ShardInfo.Selector)
	obj, err = lw.StreamingLists(&Decoder{}).ListWithContext(ctx, metav1.ListOptions{ShardSelector: "ignored"})
	require.NoError(t, err)
	assert.Equal(t, sel, obj.(*List).ShardInfo.Selector)
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "5"})
	require.NoError(t, err)
	for range w.ResultChan() {
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Len(t, f.queries, 3)
	for _, q := range f.queries {
		assert.Equal(t, sel, q.Get("shardSelector"))
	}
}
