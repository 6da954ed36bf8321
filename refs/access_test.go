package refs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
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

	g := startGraphAs(t, cfg, refs.Options{Filter: &discovery.Filter{IncludeResources: []string{"pods", "configmaps", "secrets"}}})
	wctx, wcancel := context.WithTimeout(context.Background(), 3*time.Second)
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

// A rule naming a served resource by its singular or short name was accepted and made a
// phantom resource: its references stayed "Unknown: secret is not watched", and the
// Secret's referrers did not include them. Start refuses it, naming the plural.
func TestStartRefusesRulesNamingResourcesByAnotherName(t *testing.T) {
	for _, tc := range []struct {
		rule refs.Rule
		want string
	}{
		{refs.Rule{Name: "to-singular", From: configMapsGR, Path: "{.data.s}", To: schema.GroupResource{Resource: "secret"}},
			`refs: rule "to-singular": secret names secrets by another name than its plural: use secrets`},
		{refs.Rule{Name: "from-short", From: schema.GroupResource{Resource: "cm"}, Path: "{.data.s}", To: secretsGR},
			`refs: rule "from-short": cm names configmaps by another name than its plural: use configmaps`},
		{refs.Rule{Name: "deploy", From: schema.GroupResource{Group: "apps", Resource: "deploy"}, Path: "{.metadata.name}", To: secretsGR},
			`refs: rule "deploy": deploy.apps names deployments.apps by another name than its plural: use deployments.apps`},
	} {
		g, err := refs.New(cp.AdminConfig(), refs.Options{Rules: append(refs.BuiltinRules(), tc.rule)})
		require.NoError(t, err)
		err = g.Start(context.Background())
		require.ErrorIs(t, err, refs.ErrInvalidRule, tc.rule.Name)
		require.EqualError(t, err, tc.want)
		g.Shutdown()
	}
	// A resource not served yet (a CRD to come) is not refused.
	g, err := refs.New(cp.AdminConfig(), refs.Options{Rules: append(refs.BuiltinRules(),
		refs.Rule{Name: "later", From: schema.GroupResource{Group: "later.example.com", Resource: "things"}, Path: "{.spec.s}", To: secretsGR})})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, g.Start(ctx))
	g.Shutdown()
}

// A shared Objects factory projected to other fields than the rules read was accepted:
// every rule found nothing, and every ConfigMap read as unused, with no error.
func TestStartRefusesASharedFactoryThatDropsWhatRulesRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	objs, err := dynamicinformer.NewCompactFactory(cp.AdminConfig(), dynamicinformer.Options{},
		dynamicinformer.CompactOptions{Projection: []string{"{.spec.nodeName}"}})
	require.NoError(t, err)
	require.NoError(t, objs.Start(ctx))
	defer objs.Shutdown()
	g, err := refs.New(cp.AdminConfig(), refs.Options{Objects: objs})
	require.NoError(t, err)
	err = g.Start(ctx)
	require.ErrorIs(t, err, refs.ErrInvalidRule)
	require.ErrorIs(t, err, dynamicinformer.ErrNotProjected)
	require.ErrorContains(t, err, "Options.Objects does not keep what the rule reads")
	g.Shutdown()
}
