package discovery_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/testenv"
)

// kubectlMapper builds the REST mapper kubectl builds: a memory-cached discovery client, a
// deferred discovery REST mapper and the short name expander.
func kubectlMapper(t *testing.T) meta.RESTMapper {
	t.Helper()
	dc, err := cdiscovery.NewDiscoveryClientForConfig(cp.AdminConfig())
	require.NoError(t, err)
	cached := memory.NewMemCacheClient(dc)
	return restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
}

// kubectlResolve maps arg as kubectl's resource builder does (mappingFor).
func kubectlResolve(m meta.RESTMapper, arg string) (schema.GroupVersionResource, error) {
	fullySpecifiedGVR, groupResource := schema.ParseResourceArg(arg)
	gvk := schema.GroupVersionKind{}
	if fullySpecifiedGVR != nil {
		gvk, _ = m.KindFor(*fullySpecifiedGVR)
	}
	if gvk.Empty() {
		gvk, _ = m.KindFor(groupResource.WithVersion(""))
	}
	if !gvk.Empty() {
		mp, err := m.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return schema.GroupVersionResource{}, err
		}
		return mp.Resource, nil
	}
	fullySpecifiedGVK, groupKind := schema.ParseKindArg(arg)
	if fullySpecifiedGVK == nil {
		gvk := groupKind.WithVersion("")
		fullySpecifiedGVK = &gvk
	}
	if !fullySpecifiedGVK.Empty() {
		if mp, err := m.RESTMapping(fullySpecifiedGVK.GroupKind(), fullySpecifiedGVK.Version); err == nil {
			return mp.Resource, nil
		}
	}
	mp, err := m.RESTMapping(groupKind, gvk.Version)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return mp.Resource, nil
}

func outcome(gvr schema.GroupVersionResource, err error) string {
	var amb *discovery.AmbiguousError
	switch {
	case err == nil:
		return gvr.String()
	case errors.As(err, &amb), meta.IsAmbiguousError(err):
		return "ambiguous"
	case meta.IsNoMatchError(err):
		return "nomatch"
	}
	return "error: " + err.Error()
}

func auditCRD(group, kind, plural string, short, cats []string, versions ...string) *apiextv1.CustomResourceDefinition {
	crd := testenv.NewCRD(group, kind, plural, versions...)
	crd.Spec.Names.ShortNames = short
	crd.Spec.Names.Categories = cats
	return crd
}

func TestAuditS52CompareWithKubectl(t *testing.T) {
	ctx := context.Background()
	for _, crd := range []*apiextv1.CustomResourceDefinition{
		auditCRD("example.com", "Pod", "pods", []string{"po", "cm", "exw"}, []string{"all", "exa"}),
		auditCRD("apps.example.com", "Deployment", "deployments", []string{"deploy", "dx"}, nil),
		auditCRD("sub.example.com", "Widget", "widgets", []string{"wd"}, nil, "v1beta2", "v1"),
		auditCRD("example.com", "Widget", "widgets", []string{"wdx"}, nil),
		auditCRD("other.io", "Gadget", "gadgets", nil, nil),
		auditCRD("more.io", "Gadget", "gizmos", nil, nil),
		auditCRD("vers.io", "Thing", "things", []string{"th"}, nil, "v1beta1", "v2", "v1", "v10alpha1"),
		auditCRD("short.io", "Svc", "svcs", []string{"services", "svc2"}, nil),
		auditCRD("multi.io", "Alpha", "alphas", []string{"al"}, nil, "v1"),
		auditCRD("multi.io", "Beta", "betas", nil, nil, "v2"),
		auditCRD("multi.io", "Gamma", "gammas", nil, nil, "v1beta1", "v3alpha1"),
		auditCRD("case.io", "ZAP", "zaps", nil, nil),
		auditCRD("case2.io", "Zap", "zappers", nil, nil),
	} {
		cp.InstallCRD(t, crd)
	}
	c, _ := startClient(t, cp.AdminConfig(), discovery.Options{})
	m := kubectlMapper(t)
	inputs := []string{
		"po", "pods", "pod", "Pod", "Pods", "PODS", "DEPLOY", "deploy", "cm", "exw", "Po",
		"pods.example.com", "pod.example.com", "Pod.example.com", "Pod.v1.example.com", "pods.v1.example.com",
		"po.example.com", "po.example", "pods.example", "Pods.Example.Com",
		"deployments.apps.example.com", "deploy.apps.example.com", "deploy.apps", "deployment.apps",
		"deployments.v1.apps", "Deployment.apps", "Deployment.v1.apps", "deployments.apps", "deploy.app",
		"deployments.app", "deploy.apps.example", "dx", "dx.apps", "Deployment", "deployment",
		"widgets", "widget", "Widget", "wd", "wd.sub", "widgets.sub", "widgets.sub.example.com",
		"widgets.v1beta2.sub.example.com", "widgets.v1.sub.example.com", "widgets.v2.sub.example.com",
		"widgets.example.com", "widgets.example", "Widget.example.com", "wdx", "Widget.v1beta2.sub.example.com",
		"pods.v1.", "pods.", "Pod.v1.", "pods.v1", "pods ", " pods", "pods..", "pods.v1..", "deploy.", "po.",
		"Gadget", "gadget", "gizmo", "gizmos", "gadgets", "all", "exa", "example.com", "v1",
		"events", "ev", "Event", "event", "ev.events.k8s.io", "events.events", "events.v1.events.k8s.io",
		"Event.events.k8s.io", "Event.v1.events.k8s.io", "storageclass.storage", "sc", "sc.storage",
		"svc.", "svc.v1.", "po.v1.", "deployments.apps.", "hpa", "horizontalpodautoscalers.v1.autoscaling",
		"horizontalpodautoscalers.autoscaling", "HorizontalPodAutoscaler.v1.autoscaling", "hpa.autoscaling",
		"things", "thing", "th", "Thing", "things.vers.io", "things.v1.vers.io", "things.v10alpha1.vers.io",
		"services", "svc", "svc2", "svcs", "Svc", "service", "Service", "Service.v1.",
		"customresourcedefinitions", "crd", "crds", "crd.apiextensions", "apiservices", "apiservice.apiregistration.k8s.io",
		"deployments.extensions", "deploy.extensions", "ing", "ing.networking", "ingresses.networking.k8s",
		"componentstatuses", "cs", "Pod.", "pods.V1.", "pods.v1.Apps", "deployments.V1.apps", "DEPLOYMENTS.APPS",
		"ns", "no", "nodes", "Node", "namespace", "ep", "endpoints", "endpointslices", "leases", "lease.coordination",
		"pods.v1.example.com.", "deploy.apps.", "DEPLOY.apps", "Deploy", "leases.v1.coordination",
		"csr", "certificatesigningrequests.certificates", "pv", "pvc", "rs", "ds", "sts", "cj", "jobs.batch", "jobs.v1.batch",
		"pdb", "pc", "quota", "limits", "sa", "rc", "netpol", "ingressclasses", "va", "csidrivers",
		"clusterrole.rbac", "alphas", "al", "Alpha", "alphas.multi.io", "betas", "gammas", "Gamma.multi.io", "gammas.v3alpha1.multi.io",
		"alphas.v2.multi.io", "Zap", "ZAP", "zap", "zapper", "zaps", "Zap.case.io", "gizmos.", "gizmos.v1.", "Gadget.", "Gadget.v1.", "th.", "things.v1beta1.", "ThInG",
		"po.e", "pods.ex", "widgets.s", "wd.s", "wd.example", "wdx.example", "Widget.sub", "Widget.sub.example.com", "Widget.v1.sub.example.com",
		"Widget.v1beta2.sub.example.com", "deployments.apps.example", "deployment.apps.example", "Deployment.apps.example", "Deployment.app", "roles.rbac.authorization", "rolebindings.v1.rbac.authorization.k8s.io",
	}
	// Where kindex differs from kubectl by design (doc.go), its own answer is checked instead:
	// built-in groups win without a group (kubectl's pick among colliding short names also
	// varies from one run to the next); CRDs clashing in a tier are ambiguous, as is a group
	// given by its start that several groups have; a group given by its start is read so only
	// when no group has that name; names, kinds, groups and versions match case-insensitively;
	// a category that one resource has resolves to it; "a..b" is no name; "name.version." with
	// a version that is a group is that version.
	const (
		pods, configmaps, services, events = "/v1, Resource=pods", "/v1, Resource=configmaps", "/v1, Resource=services", "/v1, Resource=events"
		deployments, ambiguous, nomatch    = "apps/v1, Resource=deployments", "ambiguous", "nomatch"
	)
	deviations := map[string]string{
		"po": pods, "po.": pods, "Po": pods, "cm": configmaps, "ev": events, "svc": services, "Svc": services, "svc.": services,
		"svc.v1.": services, "po.v1.": pods, "deploy": deployments, "deploy.": deployments, "DEPLOY": deployments, "Deploy": deployments,
		"DEPLOY.apps": deployments, "DEPLOYMENTS.APPS": deployments, "deployments.V1.apps": deployments, "pods.V1.": pods,
		"Pods.Example.Com": "example.com/v1, Resource=pods", "exa": "example.com/v1, Resource=pods",
		"deploy.app": ambiguous, "deployments.app": ambiguous, "Deployment.app": ambiguous, "dx.apps": nomatch,
		"deploy.apps.": nomatch, "deployments.apps.": nomatch, "pods..": nomatch, "all": ambiguous,
		"widgets": ambiguous, "widget": ambiguous, "Widget": ambiguous, "Gadget": ambiguous, "gadget": ambiguous,
		"Gadget.": ambiguous, "Gadget.v1.": ambiguous, "Zap": ambiguous, "ZAP": ambiguous, "zap": ambiguous,
	}
	var diffs []string
	for _, in := range inputs {
		r, err := c.Resolve(ctx, in)
		xo := outcome(r.GVR, err)
		if want, ok := deviations[in]; ok {
			if xo != want {
				diffs = append(diffs, fmt.Sprintf("%q: documented=%s kindex=%s", in, want, xo))
			}
			continue
		}
		kr, kerr := kubectlResolve(m, in)
		if ko := outcome(kr, kerr); ko != xo {
			diffs = append(diffs, fmt.Sprintf("%q: kubectl=%s kindex=%s", in, ko, xo))
		}
	}
	for _, gvr := range []schema.GroupVersionResource{{}, {Group: "apps"}, {Group: "apps", Version: "v1"}, {Resource: "po"},
		{Resource: "pod"}, {Resource: "Pods"}, {Group: "example.com", Resource: "pods"}, {Group: "example.com", Resource: "po"},
		{Group: "vers.io", Resource: "things"}, {Group: "sub.example.com", Resource: "widgets"}, {Group: "app", Resource: "deployments"},
		{Group: "apps", Resource: "Deployment"}, {Group: "autoscaling", Resource: "horizontalpodautoscalers"}} {
		r, err := c.ResolveGVR(ctx, gvr)
		xo := outcome(r.GVR, err)
		// ResolveGVR matches plural or singular in the group given (the core group when empty).
		if gvr.Resource == "" || gvr.Resource == "po" || gvr.Group == "app" {
			if xo != nomatch {
				diffs = append(diffs, fmt.Sprintf("GVR %v: documented=nomatch kindex=%s", gvr, xo))
			}
			continue
		}
		kr, kerr := m.ResourceFor(gvr)
		ko := outcome(kr, kerr)
		if ko != xo {
			diffs = append(diffs, fmt.Sprintf("GVR %v: kubectl=%s kindex=%s", gvr, ko, xo))
		}
	}
	for _, gvk := range []schema.GroupVersionKind{{}, {Group: "apps"}, {Kind: "Pod"}, {Kind: "pod"}, {Group: "example.com", Kind: "Pod"},
		{Group: "vers.io", Kind: "Thing"}, {Group: "sub.example.com", Kind: "Widget"}, {Group: "app", Kind: "Deployment"},
		{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}, {Group: "events.k8s.io", Kind: "Event"}, {Group: "more.io", Kind: "Gadget"}} {
		var ko string
		mp, kerr := m.RESTMapping(gvk.GroupKind(), gvk.Version)
		if kerr == nil {
			ko = outcome(mp.Resource, nil)
		} else {
			ko = outcome(schema.GroupVersionResource{}, kerr)
		}
		r, err := c.ResolveGVK(ctx, gvk)
		xo := outcome(r.GVR, err)
		if ko != xo {
			diffs = append(diffs, fmt.Sprintf("GVK %v: kubectl=%s kindex=%s", gvk, ko, xo))
		}
	}
	assert.Empty(t, diffs, "disagreements:\n%s", strings.Join(diffs, "\n"))
}

// TestAuditS52MissesDoNotOutliveCreation: misses of every form (short name, kind, name.group,
// a group given by its start, a category, a GVK, a GVR) remembered for an hour are forgotten
// when the CRD that answers them is created, and the CRD then resolves within the bound.
func TestAuditS52MissesDoNotOutliveCreation(t *testing.T) {
	ctx := context.Background()
	c, _ := startClient(t, cp.AdminConfig(), discovery.Options{NegativeCacheTTL: time.Hour})
	spec := uniqueCRD(t, "Flange")
	inputs := []string{spec.plural, strings.ToLower(spec.kind), spec.kind, spec.shortNames[0], spec.categories[0],
		spec.shortNames[0] + "." + spec.group, spec.kind + ".v1." + spec.group, spec.plural + "." + strings.Split(spec.group, ".")[0],
		strings.ToUpper(spec.shortNames[0])}
	gvk := schema.GroupVersionKind{Group: spec.group, Version: "v1", Kind: spec.kind}
	gvr := schema.GroupVersionResource{Group: spec.group, Resource: spec.plural}
	for _, in := range inputs {
		_, err := c.Resolve(ctx, in)
		require.True(t, meta.IsNoMatchError(err), "%s: %v", in, err)
	}
	_, err := c.ResolveGVK(ctx, gvk)
	require.True(t, meta.IsNoMatchError(err), "%v", err)
	_, err = c.ResolveGVR(ctx, gvr)
	require.True(t, meta.IsNoMatchError(err), "%v", err)
	_, err = c.ResolveCategory(ctx, spec.categories[0])
	require.True(t, meta.IsNoMatchError(err), "%v", err)

	t0 := time.Now()
	cp.InstallCRD(t, spec.build())
	for _, in := range inputs {
		testenv.Eventually(t, bound, func() bool {
			_, err = c.Resolve(ctx, in)
			return err == nil
		}, "%s does not resolve: %v", in, errOf{&err})
	}
	t.Logf("all forms resolvable %v after the create call", time.Since(t0).Round(time.Millisecond))
	_, err = c.ResolveGVK(ctx, gvk)
	require.NoError(t, err)
	_, err = c.ResolveGVR(ctx, gvr)
	require.NoError(t, err)
	members, err := c.ResolveCategory(ctx, spec.categories[0])
	require.NoError(t, err)
	require.Len(t, members, 1)
}

// TestAuditS52ReAddOtherScope: a CRD deleted and created again under the same name with the
// other scope (and other short names) is reported with its new scope and names.
func TestAuditS52ReAddOtherScope(t *testing.T) {
	ctx := context.Background()
	c, _ := startClient(t, cp.AdminConfig(), discovery.Options{NegativeCacheTTL: time.Hour})
	spec := uniqueCRD(t, "Bracket")
	name := spec.plural + "." + spec.group
	scopes := []apiextv1.ResourceScope{apiextv1.NamespaceScoped, apiextv1.ClusterScoped, apiextv1.NamespaceScoped}
	for i, scope := range scopes {
		crd := spec.build()
		crd.Spec.Scope = scope
		short := fmt.Sprintf("%s%d", spec.shortNames[0], i)
		crd.Spec.Names.ShortNames = []string{short}
		if i > 0 {
			cp.DeleteCRD(t, name)
		}
		t0 := time.Now()
		cp.InstallCRD(t, crd)
		var r discovery.Resource
		var err error
		testenv.Eventually(t, bound, func() bool {
			r, err = c.Resolve(ctx, short)
			return err == nil && r.Namespaced == (scope == apiextv1.NamespaceScoped)
		}, "%s (%s) not resolved with its scope: %+v %v", short, scope, r, errOf{&err})
		t.Logf("%s resolvable %v after the create call", scope, time.Since(t0).Round(time.Millisecond))
		r, err = c.Resolve(ctx, spec.plural)
		require.NoError(t, err)
		require.Equal(t, scope == apiextv1.NamespaceScoped, r.Namespaced)
		require.Equal(t, []string{short}, r.ShortNames)
		if i > 0 {
			_, err = c.Resolve(ctx, fmt.Sprintf("%s%d", spec.shortNames[0], i-1))
			require.True(t, meta.IsNoMatchError(err), "the old short name: %v", err)
		}
	}
}

// TestAuditS52EmptyGroupAsKubectl: kubectl reads a group left empty ("deployments.v1.",
// "deploy.", "widgets.v1.") as no group given, so any group that serves the name (in that
// version) answers; it is not the core group.
func TestAuditS52EmptyGroupAsKubectl(t *testing.T) {
	ctx := context.Background()
	spec := uniqueCRD(t, "Sprocket")
	spec.versions = []string{"v1beta1", "v2"}
	cp.InstallCRD(t, spec.build())
	c, _ := newClient(t, cp.AdminConfig(), discovery.Options{})
	m := kubectlMapper(t)
	inputs := []string{
		"deployments.v1.", "deploy.", "deployments.", "Deployment.v1.", "deployment.v1.", "cronjobs.v1.", "cj.",
		"leases.v1.", "horizontalpodautoscalers.v1.", "hpa.v2.", "deployments.v2.", "pods.v1.", "pods.v2.",
		spec.plural + ".", spec.plural + ".v2.", spec.plural + ".v1beta1.", spec.plural + ".v1.", spec.shortNames[0] + ".",
		strings.ToLower(spec.kind) + ".v2.",
	}
	// kubectl drops the version when it expands a short name (hpa.v1. is autoscaling/v2 to
	// it); kindex keeps the version typed, as it does for hpa.v1.autoscaling.
	for in, want := range map[string]schema.GroupVersionResource{
		"hpa.v1.":                        {Group: "autoscaling", Version: "v1", Resource: "horizontalpodautoscalers"},
		spec.shortNames[0] + ".v1beta1.": {Group: spec.group, Version: "v1beta1", Resource: spec.plural},
	} {
		r, err := c.Resolve(ctx, in)
		require.NoError(t, err, in)
		assert.Equal(t, want, r.GVR, in)
	}
	for _, in := range inputs {
		kr, kerr := kubectlResolve(m, in)
		r, err := c.Resolve(ctx, in)
		assert.Equal(t, outcome(kr, kerr), outcome(r.GVR, err), in)
		if err == nil {
			assert.Equal(t, r.GVR.Version, r.GVK.Version, in)
		}
	}
}
