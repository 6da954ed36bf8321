package informer

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
)

// Which inputs of Factory.Informer named a version: only those may keep an informer at
// its version when the version is retired (entry.follow).
func TestNamesVersion(t *testing.T) {
	core := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	apps := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	foo := schema.GroupVersionResource{Group: "example.com", Version: "v1beta1", Resource: "foos"}
	vgroup := schema.GroupVersionResource{Group: "v1.example.com", Version: "v2", Resource: "foos"}
	for _, tc := range []struct {
		input string
		gvr   schema.GroupVersionResource
		want  bool
	}{
		{"pods", core, false},
		{"po", core, false},
		{"Pod", core, false},
		{"pods.", core, false},
		{"pods.v1.", core, true},
		{"v1/pods", core, true},
		{"apps/deployments", apps, false},
		{"apps/v1/deployments", apps, true},
		{"deployments.apps", apps, false},
		{"deploy.app", apps, false},
		{"Deployment.v1.apps", apps, true},
		{"deployments.V1.Apps", apps, true},
		{"foos.example.com", foo, false},
		{"foos.v1beta1.example.com", foo, true},
		{"foo.v1beta1.example.com", foo, true},
		// "foos.v1.example.com" is foos of group v1.example.com when example.com serves no
		// v1 foos: the group it resolved to names no version.
		{"foos.v1.example.com", vgroup, false},
		{"foos.v2.v1.example.com", vgroup, true},
	} {
		assert.Equal(t, tc.want, namesVersion(tc.input, tc.gvr), "%s as %s", tc.input, tc.gvr)
	}
}

// An informer asked for after another has followed its resource to a new version shares
// it, whether asked for without a version or at the new one, with the same options; other
// options still make an informer of their own.
func TestAcquireSharesAFollowedInformer(t *testing.T) {
	widgetsV2 := resource("example.com", "v2", "widgets")
	e := newEnv(t, Options[obj]{}, widgetsV2)
	serve(e.mode.server(widgetsV2.GVR), "o", 0, 5)
	serve(e.mode.server(widgets.GVR), "o", 0, 5)
	ctx := context.Background()
	first, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer first.Release()
	require.NoError(t, first.WaitForSync(ctx))

	retireV2(t, e, widgetsV2, first)
	lists := e.mode.lws.Load()

	byName, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	atV1, err := e.f.InformerForGVR(ctx, widgets.GVR)
	require.NoError(t, err)
	for _, again := range []*Informer[obj]{byName, atV1} {
		assert.True(t, first.h.e == again.h.e, "shares the informer that followed")
		assert.Equal(t, "v2", again.Key().GVR.Version, "the key it was made for")
		again.Release()
	}
	assert.Len(t, e.f.Statuses(), 1)
	assert.Equal(t, lists, e.mode.lws.Load(), "no second list-watch")

	other, err := e.f.Informer(ctx, "widgets", WithLabelSelector("a=b"))
	require.NoError(t, err)
	defer other.Release()
	assert.True(t, first.h.e != other.h.e, "other options: an informer of its own")
	assert.Equal(t, "v1", other.Key().GVR.Version)
}

// retireV2 retires v2 of widgets for v1 (discovery serves v1 only, v2's list and watch
// answer 404) and waits until inf, at v2, has followed to v1 and synced there.
func retireV2(t *testing.T, e *env, widgetsV2 discovery.Resource, inf *Informer[obj]) {
	t.Helper()
	e.disc.set(widgets)
	e.mode.server(widgetsV2.GVR).setErrors(notFoundErr(), notFoundErr())
	e.mode.server(widgetsV2.GVR).closeWatches()
	eventually(t, func() bool {
		st := inf.Status()
		return st.Resource.GVR.Version == "v1" && st.Phase == PhaseSynced
	}, "followed to v1: %v", inf.Status())
}
