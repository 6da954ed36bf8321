package informer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
