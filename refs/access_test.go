package refs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/refs"
)

// One forbidden resource made every other one "not cached completely" for good: coverage
// asked whether the watch-all set's handler had synced on every member, which a member
// parked as forbidden never does, so a Pod's reference to a missing ConfigMap stayed
// Unknown although ConfigMaps were listed and handed to the graph. Coverage is per member.
func TestForbiddenResourceLeavesOthersCovered(t *testing.T) {
	f := newFixture(t)
	user, cfg, err := cp.NewUser()
	require.NoError(t, err)
	cp.Grant(t, user, "", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "configmaps"},
		Verbs: []string{"get", "list", "watch"}})
	f.create(podsR, `{"metadata":{"name":"p","namespace":"{ns}"},"spec":{"containers":[{"name":"c","image":"x"}],
		"volumes":[{"name":"v","configMap":{"name":"absent"}},{"name":"s","secret":{"secretName":"hidden"}}]}}`)

	g, err := refs.New(cfg, refs.Options{Filter: &discovery.Filter{IncludeResources: []string{"pods", "configmaps", "secrets"}}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		g.Shutdown()
	})
	require.NoError(t, g.Start(ctx))
	wctx, wcancel := context.WithTimeout(ctx, 3*time.Second)
	defer wcancel()
	require.Error(t, g.WaitForSync(wctx), "secrets are forbidden: the graph never syncs whole")

	eventually(t, f.want(`
		pods/{ns}/p -[pods:volume-configmap]-> configmaps/{ns}/absent (Missing: not found)
		pods/{ns}/p -[pods:volume-secret]-> secrets/{ns}/hidden (Unknown: secrets is Parked (Forbidden))
	`), func() []string { return render(fromNS(g.Dangling(), f.ns)) })
	unused, err := g.Unreferenced(configMapsGR)
	var inc *refs.IncompleteError
	require.ErrorAs(t, err, &inc)
	// The resources the filter leaves out whose rules name ConfigMaps (workloads) are
	// incomplete too; of the watched ones, only the forbidden one.
	require.Contains(t, inc.Resources, secretsGR)
	require.NotContains(t, inc.Resources, configMapsGR)
	require.NotContains(t, inc.Resources, schema.GroupResource{Resource: "pods"})
	require.Empty(t, inNamespace(unused, f.ns))
}

func fromNS(edges []refs.Edge, ns string) []refs.Edge {
	var out []refs.Edge
	for _, e := range edges {
		if e.From.Namespace == ns {
			out = append(out, e)
		}
	}
	return out
}
