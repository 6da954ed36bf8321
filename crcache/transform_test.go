package crcache_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
)

// A transform that fails (an error, or an object of another type) is reported: counted in
// the informer's status and logged. The object is kept as the server sent it, kindex's policy (a failing
// transform never makes an object vanish from a controller's view), never converted into
// something else.
func TestTransformFailures(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, prefix+" "+args)
	}, funcr.Options{})

	ns := cp.Namespace(t)
	cl := adminClient(t)
	for _, name := range []string{"ok", "fails", "wrong-type"} {
		require.NoError(t, cl.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Data: map[string]string{"secret": "s3cr3t"}}))
	}
	c, err := crcache.NewCache(cp.AdminConfig(), cache.Options{
		DefaultNamespaces: map[string]cache.Config{ns: {}},
		ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Transform: func(in any) (any, error) {
			cm := in.(*corev1.ConfigMap)
			switch cm.Name {
			case "fails":
				return nil, errors.New("cannot redact")
			case "wrong-type":
				return &corev1.Secret{ObjectMeta: cm.ObjectMeta}, nil
			}
			cm.Data = map[string]string{"secret": "redacted"}
			return cm, nil
		}}},
	}, crcache.Options{Logger: logger})
	require.NoError(t, err)
	run(t, c)
	require.True(t, c.WaitForCacheSync(t.Context()))
	get := func(name string) map[string]string {
		var cm corev1.ConfigMap
		require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &cm))
		return cm.Data
	}
	assert.Equal(t, "redacted", get("ok")["secret"])
	assert.Equal(t, "s3cr3t", get("fails")["secret"], "kept as received")
	assert.Equal(t, "s3cr3t", get("wrong-type")["secret"], "kept as received, not converted from a Secret")

	var failures int64
	for _, st := range c.Statuses() {
		if st.Resource.GVR.Resource == "configmaps" {
			failures += st.CallbackErrors
		}
	}
	assert.EqualValues(t, 2, failures, "both failures counted")
	mu.Lock()
	defer mu.Unlock()
	assert.True(t, slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "Transform failed") }), "logged: %q", lines)
}

// Without Options.Logger, kindex's logs go to klog, as documented, not nowhere.
func TestLoggerDefault(t *testing.T) {
	c := newCache(t, nil, cache.Options{})
	assert.NotNil(t, crcache.LoggerOf(c).GetSink(), "a logger that writes somewhere")
	assert.Equal(t, fmt.Sprintf("%T", klog.Background().GetSink()), fmt.Sprintf("%T", crcache.LoggerOf(c).GetSink()), "klog's")
}
