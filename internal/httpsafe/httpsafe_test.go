package httpsafe_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/internal/httpsafe"
)

const token = "s3cret-token"

// recorder is an httptest server that records the Authorization headers it receives.
type recorder struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newRecorder(t *testing.T, h http.HandlerFunc) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auths = append(r.auths, req.Header.Get("Authorization"))
		r.mu.Unlock()
		h(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.auths...)
}

// servers returns a target that answers every request and an origin that redirects every
// request to the target.
func servers(t *testing.T) (origin, target *recorder) {
	target = newRecorder(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"apiVersion":"v1","kind":"List","items":[]}`)
	})
	origin = newRecorder(t, func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, target.URL+req.URL.Path, http.StatusFound)
	})
	return origin, target
}

func TestCrossHostRedirectRefused(t *testing.T) {
	origin, target := servers(t)
	cfg := httpsafe.Config(&rest.Config{Host: origin.URL, BearerToken: token})
	client, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	resp, err := client.Get(origin.URL + "/api/v1/configmaps")
	if resp != nil {
		_ = resp.Body.Close()
	}
	require.Error(t, err)
	assert.True(t, errors.Is(err, httpsafe.ErrCrossHostRedirect), "got %v", err)
	var re *httpsafe.RedirectError
	require.ErrorAs(t, err, &re)
	assert.NotContains(t, err.Error(), token)
	assert.Equal(t, []string{"Bearer " + token}, origin.seen(), "the origin gets the token")
	assert.Empty(t, target.seen(), "the redirect target must never be contacted")
}

// Without httpsafe, client-go sends the token to the redirect target: the leak this package
// exists to stop (and proof that the test above would catch it).
func TestUnsafeClientLeaksToken(t *testing.T) {
	origin, target := servers(t)
	client, err := rest.HTTPClientFor(&rest.Config{Host: origin.URL, BearerToken: token})
	require.NoError(t, err)
	resp, err := client.Get(origin.URL + "/api/v1/configmaps")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, []string{"Bearer " + token}, target.seen())
}

func TestDynamicClientRefusesRedirect(t *testing.T) {
	origin, target := servers(t)
	client, err := dynamic.NewForConfig(httpsafe.Config(&rest.Config{Host: origin.URL, BearerToken: token}))
	require.NoError(t, err)
	_, err = client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).
		List(context.Background(), metav1.ListOptions{})
	require.Error(t, err)
	assert.True(t, errors.Is(err, httpsafe.ErrCrossHostRedirect), "got %v", err)
	assert.Empty(t, target.seen())
}

func TestSameHostRedirectFollowed(t *testing.T) {
	var srv *recorder
	srv = newRecorder(t, func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/old" {
			http.Redirect(w, req, srv.URL+"/new", http.StatusMovedPermanently)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	client, err := rest.HTTPClientFor(httpsafe.Config(&rest.Config{Host: srv.URL, BearerToken: token}))
	require.NoError(t, err)
	resp, err := client.Get(srv.URL + "/old")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, "ok", string(body))
	assert.Equal(t, []string{"Bearer " + token, "Bearer " + token}, srv.seen())
}

func TestConfigKeepsCallerWrapAndInput(t *testing.T) {
	origin, target := servers(t)
	var wrapped int
	in := &rest.Config{Host: origin.URL, BearerToken: token}
	in.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		wrapped++
		return rt
	})
	before := in.WrapTransport
	cfg := httpsafe.Config(httpsafe.Config(in)) // twice is harmless
	client, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	resp, err := client.Get(origin.URL + "/x")
	if resp != nil {
		_ = resp.Body.Close()
	}
	require.ErrorIs(t, err, httpsafe.ErrCrossHostRedirect)
	assert.Equal(t, 1, wrapped, "the caller's WrapTransport still applies")
	assert.Empty(t, target.seen())
	assert.NotNil(t, before)
	assert.Equal(t, token, in.BearerToken, "input config untouched")
}
