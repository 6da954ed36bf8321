package refs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/metadataonly"
	"github.com/kindex/kindex/refs"
)

// TestGraphFollowsObjectsAndCRDsCreatedAfterStart starts the graph first: every edge below
// comes from watch events, and a CRD that appears while it runs joins the graph (its kind
// resolves, its objects and its user rule follow).
func TestGraphFollowsObjectsAndCRDsCreatedAfterStart(t *testing.T) {
	group := "live.refs.example.com"
	gizmos := schema.GroupResource{Group: group, Resource: "gizmos"}
	gizmosR := gizmos.WithVersion("v1")
	g := startGraph(t, refs.Options{Rules: append(refs.BuiltinRules(),
		refs.Rule{Name: "gizmos:secret", From: gizmos, Path: "{.spec.credentials.secretName}", To: secretsGR})})
	f := newFixture(t)
	dangling := func() []string {
		var out []refs.Edge
		for _, e := range g.Dangling() {
			if e.From.Namespace == f.ns {
				out = append(out, e)
			}
		}
		return render(out)
	}

	// A Pod mounting a ConfigMap that does not exist yet, then does.
	f.create(podsR, `{"metadata":{"name":"p","namespace":"{ns}"},"spec":{"volumes":[{"name":"v","configMap":{"name":"later"}}],
	  "containers":[{"name":"c","image":"i"}]}}`)
	eventually(t, f.want(`pods/{ns}/p -[pods:volume-configmap]-> configmaps/{ns}/later (Missing: not found)`), dangling)
	f.create(configMapsR, `{"metadata":{"name":"later","namespace":"{ns}"}}`)
	eventually(t, nil, dangling)

	// A ConfigMap owned by a Gizmo, a kind no server serves yet: the cache cannot tell.
	f.create(configMapsR, `{"metadata":{"name":"owned","namespace":"{ns}",
	  "ownerReferences":[{"apiVersion":"live.refs.example.com/v1","kind":"Gizmo","name":"g","uid":"0000"}]}}`)
	eventually(t, f.want(`configmaps/{ns}/owned -[owner]-> Gizmo.live.refs.example.com/{ns}/g (Unknown: no served resource known to have kind Gizmo.live.refs.example.com)`), dangling)

	// The CRD is installed: the kind resolves, the resource is watched, and the owner is
	// known to be missing.
	cp.InstallCRD(t, testenv.NewCRD(group, "Gizmo", "gizmos"))
	eventually(t, f.want(`configmaps/{ns}/owned -[owner]-> gizmos.live.refs.example.com/{ns}/g (Missing: not found)`), dangling)

	// A gizmo of that name, but not the UID the reference requires; then the reference is
	// corrected. The gizmo's own reference, by the user rule, to a Secret follows.
	gz := f.create(gizmosR, `{"apiVersion":"live.refs.example.com/v1","kind":"Gizmo","metadata":{"name":"g","namespace":"{ns}"},
	  "spec":{"credentials":{"secretName":"gizmo-creds"}}}`)
	eventually(t, f.want(`
		configmaps/{ns}/owned -[owner]-> gizmos.live.refs.example.com/{ns}/g (Missing: the object has UID `+string(gz.GetUID())+`, the reference requires 0000)
		gizmos.live.refs.example.com/{ns}/g -[gizmos:secret]-> secrets/{ns}/gizmo-creds (Missing: not found)
	`), dangling)
	f.update(configMapsR, f.ns, "owned", func(u *unstructured.Unstructured) {
		owners := u.GetOwnerReferences()
		owners[0].UID = gz.GetUID()
		u.SetOwnerReferences(owners)
	})
	f.create(secretsR, `{"metadata":{"name":"gizmo-creds","namespace":"{ns}"}}`)
	eventually(t, nil, dangling)
	eventually(t, f.want(`
		configmaps/{ns}/owned -[owner]-> gizmos.live.refs.example.com/{ns}/g
		pods/{ns}/p -[pods:volume-configmap]-> configmaps/{ns}/later
		gizmos.live.refs.example.com/{ns}/g -[gizmos:secret]-> secrets/{ns}/gizmo-creds
	`), func() []string { return f.edges(g) })
	// Transitively: what uses the Secret, and what uses that.
	assert.Equal(t, f.want(`
		gizmos.live.refs.example.com/{ns}/g -[gizmos:secret]-> secrets/{ns}/gizmo-creds
		configmaps/{ns}/owned -[owner]-> gizmos.live.refs.example.com/{ns}/g
	`), render(usedBy(t, g, refs.ObjectRef{Resource: "secrets", Namespace: f.ns, Name: "gizmo-creds"}, 0)))

	// The CRD goes: the gizmo's edges go with it, and the owner is unknown again.
	cp.DeleteCRD(t, "gizmos."+group)
	eventually(t, f.want(`configmaps/{ns}/owned -[owner]-> gizmos.live.refs.example.com/{ns}/g (Unknown: gizmos.live.refs.example.com is not watched)`), dangling)
	eventually(t, []string{f.expand("secrets/{ns}/gizmo-creds"), "<nil>"}, func() []string {
		unused, err := g.Unreferenced(secretsGR)
		return append(inNamespace(unused, f.ns), fmt.Sprint(err))
	})
}

// TestSharedFactoryAndDiscovery runs the graph on a program's own discovery client and
// metadata-only factory: the graph's informers are the factory's, shared with the program's,
// and shutting the graph down leaves them to the program.
func TestSharedFactoryAndDiscovery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	disc, err := discovery.New(cp.AdminConfig(), discovery.Options{})
	require.NoError(t, err)
	dctx, dcancel := context.WithCancel(ctx)
	require.NoError(t, disc.Start(dctx))
	defer func() {
		dcancel()
		disc.Wait()
	}()
	mf, err := metadataonly.NewFactory(cp.AdminConfig(), metadataonly.Options{Discovery: disc})
	require.NoError(t, err)
	require.NoError(t, mf.Start(ctx))
	defer mf.Shutdown()
	mine, err := mf.WatchAll(ctx, refs.DefaultFilter())
	require.NoError(t, err)
	defer mine.Stop()
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	require.NoError(t, mine.WaitForSync(wctx))
	before := len(mf.Statuses())

	g, err := refs.New(cp.AdminConfig(), refs.Options{Discovery: disc, Metadata: mf})
	require.NoError(t, err)
	require.NoError(t, g.Start(ctx))
	require.NoError(t, g.WaitForSync(wctx))
	// The metadata-only resources are shared: the factory holds no informer more than the
	// program's set, minus the resources the graph reads fields of (those the graph's own
	// compact factory watches).
	assert.Equal(t, before, len(mf.Statuses()))

	f := newFixture(t)
	owner := f.create(configMapsR, `{"metadata":{"name":"owner","namespace":"{ns}"}}`)
	f.create(secretsR, `{"metadata":{"name":"owned","namespace":"{ns}",
	  "ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"`+string(owner.GetUID())+`"}]}}`)
	eventually(t, f.want(`secrets/{ns}/owned -[owner]-> configmaps/{ns}/owner`), func() []string { return f.edges(g) })

	g.Shutdown()
	assert.Equal(t, before, len(mf.Statuses()), "the program's informers outlive the graph")
	require.NoError(t, mine.WaitForSync(wctx))
	// The graph keeps answering from what it holds.
	assert.Len(t, usedBy(t, g, refs.ObjectRef{Resource: "configmaps", Namespace: f.ns, Name: "owner"}, 1), 1)
}

// Not parallel: goleak sees every goroutine.
func TestShutdownLeavesNoGoroutines(t *testing.T) {
	// Warm up the shared HTTP/2 connection before the snapshot. client-go caches transports
	// per configuration for the whole process, and a connection one of them opened stays
	// idle in that cache after the graph stops: its reader is the transport's, not the
	// graph's, so it is left out of the check.
	_ = cp.Clientset(t)
	ignore := goleak.IgnoreCurrent()
	idleConns := goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*clientConnReadLoop).run")
	g, err := refs.New(cp.AdminConfig(), refs.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, g.Start(ctx))
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	require.NoError(t, g.WaitForSync(wctx))
	wcancel()
	assert.Positive(t, g.Stats().Objects)
	g.Shutdown()
	cancel()
	goleak.VerifyNone(t, ignore, idleConns)

	// Ending the context stops it too.
	g, err = refs.New(cp.AdminConfig(), refs.Options{})
	require.NoError(t, err)
	ctx, cancel = context.WithCancel(context.Background())
	require.NoError(t, g.Start(ctx))
	cancel()
	g.Shutdown()
	goleak.VerifyNone(t, ignore, idleConns)
}

// Two references that differ only in the namespace they name resolve to one target while
// the target's resource is cluster-scoped (the namespace does not count). The graph kept
// only one of them, so when the CRD came back namespaced only one reference followed: the
// other target was in no answer (References, Dangling, Referrers), as if nothing named it.
func TestReferencesNamingNamespacesSurviveAScopeChange(t *testing.T) {
	group := "vns.refs.example.com"
	holders := schema.GroupResource{Group: group, Resource: "holders"}
	targets := schema.GroupResource{Group: group, Resource: "targets"}
	cp.InstallCRD(t, testenv.NewCRD(group, "Holder", "holders"))
	clusterCRD := testenv.NewCRD(group, "Target", "targets")
	clusterCRD.Spec.Scope = apiextv1.ClusterScoped
	cp.InstallCRD(t, clusterCRD)
	g := startGraph(t, refs.Options{Rules: append(refs.BuiltinRules(),
		refs.Rule{Name: "holders:targets", From: holders, Path: "{.spec.targets[*]}", To: targets,
			NamespaceField: "namespace", NameField: "name"})})
	f := newFixture(t)
	other := cp.Namespace(t)
	f.create(holders.WithVersion("v1"), `{"apiVersion":"`+group+`/v1","kind":"Holder","metadata":{"name":"h","namespace":"{ns}"},
	  "spec":{"targets":[{"namespace":"{ns}","name":"t"},{"namespace":"`+other+`","name":"t"}]}}`)
	eventually(t, f.want(`holders.`+group+`/{ns}/h -[holders:targets]-> targets.`+group+`/t (Missing: not found)`),
		func() []string { return f.edges(g) })

	// The CRD comes back namespaced: each reference names its own target.
	cp.DeleteCRD(t, "targets."+group)
	cp.InstallCRD(t, testenv.NewCRD(group, "Target", "targets"))
	eventually(t, f.want(`
		holders.`+group+`/{ns}/h -[holders:targets]-> targets.`+group+`/{ns}/t (Missing: not found)
		holders.`+group+`/{ns}/h -[holders:targets]-> targets.`+group+`/`+other+`/t (Missing: not found)
	`), func() []string { return f.edges(g) })
	assert.Len(t, usedBy(t, g, refs.ObjectRef{Group: group, Resource: "targets", Namespace: other, Name: "t"}, 1), 1,
		"the target in the other namespace has its referrer")
}

// Every CRD the graph saw left its other names (kind, singular, short names) in the graph
// for good: under CRD churn the table only grew. They go with the resource once nothing in
// the graph is of it.
func TestCRDChurnLeavesNoNamesBehind(t *testing.T) {
	group := "churn.refs.example.com"
	g := startGraph(t, refs.Options{})
	f := newFixture(t)
	for i := range 3 {
		kind, plural := fmt.Sprintf("Churn%d", i), fmt.Sprintf("churns%d", i)
		crd := testenv.NewCRD(group, kind, plural)
		crd.Spec.Names.ShortNames = []string{fmt.Sprintf("ch%d", i)}
		cp.InstallCRD(t, crd)
		f.create(schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural},
			`{"apiVersion":"`+group+`/v1","kind":"`+kind+`","metadata":{"name":"x","namespace":"{ns}"}}`)
		short := schema.GroupResource{Group: group, Resource: fmt.Sprintf("ch%d", i)}
		eventually(t, []string{"refs: unknown resource: \"" + short.String() + "\" is not a resource's name; queries name resources by their plural: " + plural + "." + group},
			func() []string {
				_, err := g.Unreferenced(short)
				return []string{fmt.Sprint(err)}
			})
		cp.DeleteCRD(t, plural+"."+group)
		eventually(t, nil, func() []string { return refs.AliasesIn(g, group) })
	}
}

// The graph kept a record of every resource it ever saw, after its CRD was deleted and
// nothing of it was left: CRD churn grew it for good. A CRD deleted takes its record with
// it, and with it the edges its objects' user rule made; created again, the rule's edges
// come back.
func TestDeletedCRDTakesItsRecordAndComesBack(t *testing.T) {
	group := "release.refs.example.com"
	widgets := schema.GroupResource{Group: group, Resource: "widgets"}
	g := startGraph(t, refs.Options{Rules: append(refs.BuiltinRules(),
		refs.Rule{Name: "widgets:secret", From: widgets, Path: "{.spec.secretName}", To: secretsGR})})
	f := newFixture(t)
	f.create(secretsR, `{"metadata":{"name":"creds","namespace":"{ns}"}}`)
	secret := refs.ObjectRef{Resource: "secrets", Namespace: f.ns, Name: "creds"}
	referrers := func() []string { return render(usedBy(t, g, secret, 1)) }
	unused := func() []string {
		objs, _ := g.Unreferenced(secretsGR) // incomplete while the CRD's member syncs or leaves
		return inNamespace(objs, f.ns)
	}
	dangling := func() []string {
		var out []refs.Edge
		for _, e := range g.Dangling() {
			if e.From.Namespace == f.ns || e.To.Namespace == f.ns {
				out = append(out, e)
			}
		}
		return render(out)
	}
	records := func() []string { return refs.RecordsIn(g, group) }
	for round := range 2 {
		t.Logf("round %d", round)
		cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
		eventually(t, []string{"widgets"}, records)
		for _, name := range []string{"a", "b"} {
			f.create(widgets.WithVersion("v1"), `{"apiVersion":"`+group+`/v1","kind":"Widget",
			  "metadata":{"name":"`+name+`","namespace":"{ns}"},"spec":{"secretName":"creds"}}`)
		}
		eventually(t, f.want(`
			widgets.`+group+`/{ns}/a -[widgets:secret]-> secrets/{ns}/creds
			widgets.`+group+`/{ns}/b -[widgets:secret]-> secrets/{ns}/creds
		`), referrers)
		eventually(t, nil, unused)

		cp.DeleteCRD(t, "widgets."+group)
		eventually(t, nil, records)
		assert.Empty(t, referrers())
		assert.Equal(t, []string{f.expand("secrets/{ns}/creds")}, unused())
		assert.Empty(t, dangling())
		assert.Empty(t, refs.AliasesIn(g, group))
	}
}

// A cluster-scoped custom resource naming a kind that is namespaced, without a namespace,
// names nothing; when that kind's CRD is deleted and created again cluster-scoped, it names
// the object of that name. The graph had dropped the reference when it read it: the new
// object looked unused, and the holder used nothing, until the holder changed.
func TestClusterScopedHolderFollowsItsTargetsNewScope(t *testing.T) {
	group := "void.refs.example.com"
	holders := schema.GroupResource{Group: group, Resource: "holders"}
	targets := schema.GroupResource{Group: group, Resource: "targets"}
	holderCRD := testenv.NewCRD(group, "Holder", "holders")
	holderCRD.Spec.Scope = apiextv1.ClusterScoped
	cp.InstallCRD(t, holderCRD)
	cp.InstallCRD(t, testenv.NewCRD(group, "Target", "targets"))
	g := startGraph(t, refs.Options{Rules: append(refs.BuiltinRules(),
		refs.Rule{Name: "holders:target", From: holders, Path: "{.spec.target}", To: targets},
		refs.Rule{Name: "holders:ref", From: holders, Path: "{.spec.ref}", To: schema.GroupResource{Group: group},
			KindField: "kind", NameField: "name"},
		refs.Rule{Name: "holders:node", From: holders, Path: "{.spec.node}", To: schema.GroupResource{Resource: "nodes"}})})
	f := newFixture(t)
	f.create(holders.WithVersion("v1"), `{"apiVersion":"`+group+`/v1","kind":"Holder","metadata":{"name":"h-{c}"},
	  "spec":{"target":"t-{c}","ref":{"kind":"Target","name":"t-{c}"},"node":"n-{c}"}}`)
	// The holder is read (its Node edge), and names no Target.
	eventually(t, f.want(`holders.`+group+`/h-{c} -[holders:node]-> nodes/n-{c} (Missing: not found)`),
		func() []string { return f.edges(g) })

	cp.DeleteCRD(t, "targets."+group)
	clusterCRD := testenv.NewCRD(group, "Target", "targets")
	clusterCRD.Spec.Scope = apiextv1.ClusterScoped
	cp.InstallCRD(t, clusterCRD)
	f.create(targets.WithVersion("v1"), `{"apiVersion":"`+group+`/v1","kind":"Target","metadata":{"name":"t-{c}"}}`)
	target := refs.ObjectRef{Group: group, Resource: "targets", Name: f.expand("t-{c}")}
	eventually(t, f.want(`
		holders.`+group+`/h-{c} -[holders:ref]-> targets.`+group+`/t-{c}
		holders.`+group+`/h-{c} -[holders:target]-> targets.`+group+`/t-{c}
	`), func() []string { return render(usedBy(t, g, target, 1)) })
	unused, err := g.Unreferenced(targets)
	require.NoError(t, err)
	assert.NotContains(t, inNamespace(unused, ""), target.String())
}
