package testenv

import (
	"context"
	"testing"

	cgdiscovery "k8s.io/client-go/discovery"
)

// FailedGroups asks a plain client-go discovery client which API groups' discovery failed
// (an aggregated API that is down): the oracle tests of broken groups wait on.
func (cp *ControlPlane) FailedGroups(t testing.TB) []string {
	t.Helper()
	dc, err := cgdiscovery.NewDiscoveryClientForConfig(cp.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = cgdiscovery.ServerGroupsAndResourcesWithContext(context.Background(), dc)
	gvs, _ := cgdiscovery.GroupDiscoveryFailedErrorGroups(err)
	var out []string
	for gv := range gvs {
		out = append(out, gv.Group)
	}
	return out
}
