package refs_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/refs"
)

// s52 fixtures: reference forms, selectors and bindings the other tests do not build, on
// the real apiserver, each edge written by hand.
var (
	s52Group  = "s52.refs.example.com"
	s52Gizmos = schema.GroupResource{Group: s52Group, Resource: "gizmos"}
	s52Rules  = []refs.Rule{
		// Only the refs of kind ConfigMap: the filter reads a sibling field of the name.
		{Name: "gizmos:configmap", From: s52Gizmos, Path: `{.spec.refs[?(@.kind=="ConfigMap")].name}`, To: configMapsGR, Namespace: refs.NamespaceSame},
	}
)

// s52Edges are the edges of the fixture, written by hand.
const s52Edges = `
	gizmos.s52.refs.example.com/{ns}/g -[gizmos:configmap]-> configmaps/{ns}/cm-gizmo
	horizontalpodautoscalers.autoscaling/{ns}/hpa-g -[horizontalpodautoscalers.autoscaling:target]-> gizmos.s52.refs.example.com/{ns}/g
	validatingwebhookconfigurations.admissionregistration.k8s.io/vwc-s52-{c} -[validatingwebhookconfigurations.admissionregistration.k8s.io:service]-> services/{ns}/hook-gone (Missing: not found)
	rolebindings.rbac.authorization.k8s.io/{ns}/rb-local -[rolebindings.rbac.authorization.k8s.io:role]-> clusterroles.rbac.authorization.k8s.io/cr-s52-{c}
	rolebindings.rbac.authorization.k8s.io/{ns}/rb-local -[rolebindings.rbac.authorization.k8s.io:subject]-> serviceaccounts/{ns}/sa-local
	clusterrolebindings.rbac.authorization.k8s.io/crb-s52-{c} -[clusterrolebindings.rbac.authorization.k8s.io:role]-> clusterroles.rbac.authorization.k8s.io/cr-s52-{c}
	clusterrolebindings.rbac.authorization.k8s.io/crb-s52-{c} -[clusterrolebindings.rbac.authorization.k8s.io:subject]-> serviceaccounts/{ns2}/sa2
	pods/{ns}/p1 -[pods:serviceaccount]-> serviceaccounts/{ns}/sa-local
	pods/{ns}/p1 -[pods:projected-configmap]-> configmaps/{ns}/cm-proj
	pods/{ns}/p1 -[pods:projected-secret]-> secrets/{ns}/sec-proj-opt (optional) (Missing: not found)
	pods/{ns}/p1 -[pods:volume-plugin-secret]-> secrets/{ns}/sec-csi
	pods/{ns}/p1 -[pods:volume-secret]-> secrets/{ns}/late (Missing: not found)
	pods/{ns}/p1 -[pods:env-configmap]-> configmaps/{ns}/cm-env
	pods/{ns}/p1 -[pods:envfrom-configmap]-> configmaps/{ns}/cm-envfrom
	pods/{ns}/p1 -[pods:env-secret]-> secrets/{ns}/sec-init
	pods/{ns}/p1 -[pods:image-pull-secret]-> secrets/{ns}/pull
	cronjobs.batch/{ns}/cj -[cronjobs.batch:volume-configmap]-> configmaps/{ns}/cm-cron
	statefulsets.apps/{ns}/ss -[statefulsets.apps:service]-> services/{ns}/svc-noselector
	statefulsets.apps/{ns}/ss -[statefulsets.apps:envfrom-secret]-> secrets/{ns}/sec-init
	services/{ns}/svc-web -[services:selector]-> pods/{ns}/p1
	services/{ns}/svc-empty-value -[services:selector]-> pods/{ns}/p3
	networkpolicies.networking.k8s.io/{ns}/np-all -[networkpolicies.networking.k8s.io:pod-selector]-> pods/{ns}/p1
	networkpolicies.networking.k8s.io/{ns}/np-all -[networkpolicies.networking.k8s.io:pod-selector]-> pods/{ns}/p3
	networkpolicies.networking.k8s.io/{ns}/np-all -[networkpolicies.networking.k8s.io:pod-selector]-> pods/{ns}/p4
	poddisruptionbudgets.policy/{ns}/pdb-all -[poddisruptionbudgets.policy:selector]-> pods/{ns}/p1
	poddisruptionbudgets.policy/{ns}/pdb-all -[poddisruptionbudgets.policy:selector]-> pods/{ns}/p3
	poddisruptionbudgets.policy/{ns}/pdb-all -[poddisruptionbudgets.policy:selector]-> pods/{ns}/p4
	poddisruptionbudgets.policy/{ns}/pdb-expr -[poddisruptionbudgets.policy:selector]-> pods/{ns}/p1
	poddisruptionbudgets.policy/{ns}/pdb-expr -[poddisruptionbudgets.policy:selector]-> pods/{ns}/p3
`

const s52Pod = `{"metadata":{"name":"p1","namespace":"{ns}","labels":{"app":"web"}},"spec":{
  "serviceAccountName":"sa-local","automountServiceAccountToken":false,
  "imagePullSecrets":[{"name":"pull"},{"name":"pull"}],
  "volumes":[
    {"name":"proj","projected":{"sources":[{"serviceAccountToken":{"path":"token","expirationSeconds":3600}},
      {"configMap":{"name":"cm-proj"}},{"secret":{"name":"sec-proj-opt","optional":true}},
      {"downwardAPI":{"items":[{"path":"labels","fieldRef":{"fieldPath":"metadata.labels"}}]}}]}},
    {"name":"csi","csi":{"driver":"csi.example.com","nodePublishSecretRef":{"name":"sec-csi"}}},
    {"name":"late","secret":{"secretName":"late"}}],
  "initContainers":[{"name":"init","image":"i","env":[{"name":"S","valueFrom":{"secretKeyRef":{"name":"sec-init","key":"k"}}}]}],
  "containers":[{"name":"c","image":"i",
    "env":[{"name":"E","valueFrom":{"configMapKeyRef":{"name":"cm-env","key":"k","optional":false}}}],
    "envFrom":[{"prefix":"X_","configMapRef":{"name":"cm-envfrom"}}]}]}}`

func s52Fixture(t *testing.T) (*fixture, string) {
	f := newFixture(t)
	ns2 := cp.Namespace(t)
	f.repl = strings.NewReplacer("{ns2}", ns2, "{ns}", f.ns, "{c}", f.c)
	crd := testenv.NewCRD(s52Group, "Gizmo", "gizmos")
	crd.Spec.Versions[0].Subresources = &apiextv1.CustomResourceSubresources{
		Status: &apiextv1.CustomResourceSubresourceStatus{},
		Scale:  &apiextv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
	}
	cp.InstallCRD(t, crd)

	for _, cm := range []string{"cm-proj", "cm-env", "cm-envfrom", "cm-cron", "cm-gizmo", "cm-free"} {
		f.create(configMapsR, `{"metadata":{"name":"`+cm+`","namespace":"{ns}"}}`)
	}
	for _, s := range []string{"sec-csi", "pull", "sec-init"} {
		f.create(secretsR, `{"metadata":{"name":"`+s+`","namespace":"{ns}"}}`)
	}
	// A Secret named "late" in another namespace: no use to the Pod.
	f.create(secretsR, `{"metadata":{"name":"late","namespace":"{ns2}"}}`)
	f.create(gvr("", "v1", "serviceaccounts"), `{"metadata":{"name":"sa-local","namespace":"{ns}"}}`)
	f.create(gvr("", "v1", "serviceaccounts"), `{"metadata":{"name":"sa2","namespace":"{ns2}"}}`)

	f.create(gvr(s52Group, "v1", "gizmos"), `{"apiVersion":"s52.refs.example.com/v1","kind":"Gizmo","metadata":{"name":"g","namespace":"{ns}"},
	  "spec":{"replicas":1,"refs":[{"kind":"ConfigMap","name":"cm-gizmo"},{"kind":"Secret","name":"not-a-configmap"}]}}`)
	f.create(gvr("autoscaling", "v2", "horizontalpodautoscalers"), `{"metadata":{"name":"hpa-g","namespace":"{ns}"},"spec":{"maxReplicas":3,
	  "scaleTargetRef":{"apiVersion":"s52.refs.example.com/v1","kind":"Gizmo","name":"g"}}}`)
	hook := `{"name":"NAME.s52.example.com","clientConfig":CC,"failurePolicy":"Ignore","sideEffects":"None",
	  "admissionReviewVersions":["v1"],"rules":[{"operations":["CREATE"],"apiGroups":["nothing.example.com"],"apiVersions":["v1"],"resources":["nothing"]}]}`
	urlHook := strings.NewReplacer("NAME", "url", "CC", `{"url":"https://hooks.example.com/validate"}`).Replace(hook)
	svcHook := strings.NewReplacer("NAME", "svc", "CC", `{"service":{"namespace":"{ns}","name":"hook-gone"}}`).Replace(hook)
	f.create(gvr("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"), `{"metadata":{"name":"vwc-s52-{c}"},"webhooks":[`+urlHook+`,`+svcHook+`]}`)
	f.create(gvr("rbac.authorization.k8s.io", "v1", "clusterroles"), `{"metadata":{"name":"cr-s52-{c}"},"rules":[]}`)
	// A RoleBinding's ServiceAccount subject without a namespace is the binding's namespace's.
	f.create(gvr("rbac.authorization.k8s.io", "v1", "rolebindings"), `{"metadata":{"name":"rb-local","namespace":"{ns}"},
	  "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cr-s52-{c}"},
	  "subjects":[{"kind":"ServiceAccount","name":"sa-local"},{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"devs"}]}`)
	f.create(gvr("rbac.authorization.k8s.io", "v1", "clusterrolebindings"), `{"metadata":{"name":"crb-s52-{c}"},
	  "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cr-s52-{c}"},
	  "subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"},{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"system:masters"},
	    {"kind":"ServiceAccount","name":"sa2","namespace":"{ns2}"}]}`)

	f.create(podsR, s52Pod)
	f.create(podsR, `{"metadata":{"name":"p2","namespace":"{ns2}","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	f.create(podsR, `{"metadata":{"name":"p3","namespace":"{ns}","labels":{"app":""}},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	f.create(podsR, `{"metadata":{"name":"p4","namespace":"{ns}","labels":{"tier":"db"}},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	f.create(servicesR, `{"metadata":{"name":"svc-noselector","namespace":"{ns}"},"spec":{"ports":[{"port":80}]}}`)
	f.create(servicesR, `{"metadata":{"name":"svc-web","namespace":"{ns}"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}`)
	f.create(servicesR, `{"metadata":{"name":"svc-empty-value","namespace":"{ns}"},"spec":{"selector":{"app":""},"ports":[{"port":80}]}}`)
	f.create(servicesR, `{"metadata":{"name":"svc-none","namespace":"{ns}"},"spec":{"selector":{"app":"nobody"},"ports":[{"port":80}]}}`)
	f.create(gvr("networking.k8s.io", "v1", "networkpolicies"), `{"metadata":{"name":"np-all","namespace":"{ns}"},"spec":{"podSelector":{}}}`)
	f.create(gvr("policy", "v1", "poddisruptionbudgets"), `{"metadata":{"name":"pdb-all","namespace":"{ns}"},"spec":{"maxUnavailable":1,"selector":{}}}`)
	f.create(gvr("policy", "v1", "poddisruptionbudgets"), `{"metadata":{"name":"pdb-expr","namespace":"{ns}"},"spec":{"maxUnavailable":1,
	  "selector":{"matchExpressions":[{"key":"app","operator":"Exists"},{"key":"tier","operator":"DoesNotExist"}]}}}`)
	f.create(gvr("batch", "v1", "cronjobs"), `{"metadata":{"name":"cj","namespace":"{ns}"},"spec":{"schedule":"0 0 1 1 *","suspend":true,
	  "jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","volumes":[{"name":"v","configMap":{"name":"cm-cron"}}],
	    "containers":[{"name":"c","image":"i"}]}}}}}}`)
	f.create(gvr("apps", "v1", "statefulsets"), `{"metadata":{"name":"ss","namespace":"{ns}"},"spec":{"serviceName":"svc-noselector",
	  "replicas":0,"selector":{"matchLabels":{"app":"ss"}},"template":{"metadata":{"labels":{"app":"ss"}},
	  "spec":{"containers":[{"name":"c","image":"i","envFrom":[{"prefix":"P_","secretRef":{"name":"sec-init"}}]}]}}}}`)
	return f, ns2
}

// TestS52ReferenceFormsSelectorsAndBindings checks, on the apiserver, reference forms and
// selections the other tests do not build, against hand-written edges, then follows them
// through changes.
func TestS52ReferenceFormsSelectorsAndBindings(t *testing.T) {
	f, ns2 := s52Fixture(t)
	g := startGraph(t, refs.Options{Rules: append(refs.BuiltinRules(), s52Rules...)})
	eventually(t, f.want(s52Edges), func() []string { return f.edges(g) })

	dangling := func() []string {
		var out []refs.Edge
		for _, e := range g.Dangling() {
			if e.From.Namespace == f.ns || e.From.Namespace == ns2 || strings.HasSuffix(e.From.Name, "-"+f.c) {
				out = append(out, e)
			}
		}
		return render(out)
	}
	assert.Equal(t, f.want(`
		pods/{ns}/p1 -[pods:volume-secret]-> secrets/{ns}/late (Missing: not found)
		validatingwebhookconfigurations.admissionregistration.k8s.io/vwc-s52-{c} -[validatingwebhookconfigurations.admissionregistration.k8s.io:service]-> services/{ns}/hook-gone (Missing: not found)
	`), dangling(), "the Group and User subjects, the url webhook and the optional Secret do not dangle")

	// A ConfigMap used only by a CronJob's template, a projection or a user rule is used.
	unused, err := g.Unreferenced(configMapsGR)
	require.NoError(t, err)
	assert.Equal(t, []string{f.expand("configmaps/{ns}/cm-free")}, inNamespace(unused, f.ns))
	empty, err := g.EmptySelectors(servicesGR)
	require.NoError(t, err)
	assert.Equal(t, []string{f.expand("services/{ns}/svc-none")}, inNamespace(empty, f.ns), "a Service without selector is no empty selector")
	unusedPods, err := g.Unreferenced(refs.ObjectRef{Resource: "pods"}.GroupResource())
	require.NoError(t, err)
	assert.Equal(t, []string{ns2 + "/p2"}, trimRes(inNamespace(unusedPods, ns2)), "Pods of another namespace are selected by nothing here")
	assert.Empty(t, usedBy(t, g, refs.ObjectRef{Resource: "pods", Namespace: ns2, Name: "p2"}, 1))
	// Who uses the Gizmo, and what it uses, transitively from the HPA.
	assert.Equal(t, f.want(`
		horizontalpodautoscalers.autoscaling/{ns}/hpa-g -[horizontalpodautoscalers.autoscaling:target]-> gizmos.s52.refs.example.com/{ns}/g
		gizmos.s52.refs.example.com/{ns}/g -[gizmos:configmap]-> configmaps/{ns}/cm-gizmo
	`), render(uses(t, g, refs.ObjectRef{Group: "autoscaling", Resource: "horizontalpodautoscalers", Namespace: f.ns, Name: "hpa-g"}, 0)))

	t.Run("target created in its namespace, then deleted", func(t *testing.T) {
		late := func() []string {
			var out []string
			for _, e := range uses(t, g, refs.ObjectRef{Resource: "pods", Namespace: f.ns, Name: "p1"}, 1) {
				if e.To.Name == "late" {
					out = append(out, e.String())
				}
			}
			return out
		}
		f.create(secretsR, `{"metadata":{"name":"late","namespace":"{ns}"}}`)
		eventually(t, f.want(`pods/{ns}/p1 -[pods:volume-secret]-> secrets/{ns}/late`), late)
		f.delete(secretsR, f.ns, "late")
		eventually(t, f.want(`pods/{ns}/p1 -[pods:volume-secret]-> secrets/{ns}/late (Missing: not found)`), late)
		f.delete(secretsR, ns2, "late")
		f.create(secretsR, `{"metadata":{"name":"late","namespace":"{ns}"}}`)
		eventually(t, f.want(`pods/{ns}/p1 -[pods:volume-secret]-> secrets/{ns}/late`), late)
	})

	t.Run("ephemeral container added through its subresource", func(t *testing.T) {
		res := cp.Dynamic(t).Resource(podsR).Namespace(f.ns)
		p, err := res.Get(context.Background(), "p1", metav1.GetOptions{})
		require.NoError(t, err)
		require.NoError(t, unstructured.SetNestedSlice(p.Object, []any{map[string]any{"name": "debug", "image": "busybox",
			"envFrom": []any{map[string]any{"secretRef": map[string]any{"name": "sec-eph"}}},
			"env":     []any{map[string]any{"name": "D", "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "cm-eph", "key": "k"}}}}}},
			"spec", "ephemeralContainers"))
		_, err = res.Update(context.Background(), p, metav1.UpdateOptions{}, "ephemeralcontainers")
		require.NoError(t, err)
		eventually(t, f.want(`
			pods/{ns}/p1 -[pods:envfrom-secret]-> secrets/{ns}/sec-eph (Missing: not found)
			pods/{ns}/p1 -[pods:env-configmap]-> configmaps/{ns}/cm-eph (Missing: not found)
		`), func() []string {
			var out []refs.Edge
			for _, e := range uses(t, g, refs.ObjectRef{Resource: "pods", Namespace: f.ns, Name: "p1"}, 1) {
				if strings.HasSuffix(e.To.Name, "-eph") {
					out = append(out, e)
				}
			}
			return render(out)
		})
	})

	t.Run("labels and selectors change", func(t *testing.T) {
		referrers := func(name string) func() []string {
			return func() []string {
				return render(usedBy(t, g, refs.ObjectRef{Resource: "pods", Namespace: f.ns, Name: name}, 1))
			}
		}
		// p4 loses tier and gains app=web: the PDB with expressions and svc-web select it.
		f.update(podsR, f.ns, "p4", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "web"}) })
		eventually(t, f.want(`
			networkpolicies.networking.k8s.io/{ns}/np-all -[networkpolicies.networking.k8s.io:pod-selector]-> pods/{ns}/p4
			poddisruptionbudgets.policy/{ns}/pdb-all -[poddisruptionbudgets.policy:selector]-> pods/{ns}/p4
			poddisruptionbudgets.policy/{ns}/pdb-expr -[poddisruptionbudgets.policy:selector]-> pods/{ns}/p4
			services/{ns}/svc-web -[services:selector]-> pods/{ns}/p4
		`), referrers("p4"))
		// p3's empty app value becomes "web": it leaves svc-empty-value for svc-web.
		f.update(podsR, f.ns, "p3", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "web"}) })
		eventually(t, f.want(`
			networkpolicies.networking.k8s.io/{ns}/np-all -[networkpolicies.networking.k8s.io:pod-selector]-> pods/{ns}/p3
			poddisruptionbudgets.policy/{ns}/pdb-all -[poddisruptionbudgets.policy:selector]-> pods/{ns}/p3
			poddisruptionbudgets.policy/{ns}/pdb-expr -[poddisruptionbudgets.policy:selector]-> pods/{ns}/p3
			services/{ns}/svc-web -[services:selector]-> pods/{ns}/p3
		`), referrers("p3"))
		// The Service without selector gains one: it selects what matches, here only.
		f.update(servicesR, f.ns, "svc-noselector", func(u *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedStringMap(u.Object, map[string]string{"app": "web"}, "spec", "selector"))
		})
		eventually(t, f.want(`
			services/{ns}/svc-noselector -[services:selector]-> pods/{ns}/p1
			services/{ns}/svc-noselector -[services:selector]-> pods/{ns}/p3
			services/{ns}/svc-noselector -[services:selector]-> pods/{ns}/p4
		`), func() []string {
			return render(uses(t, g, refs.ObjectRef{Resource: "services", Namespace: f.ns, Name: "svc-noselector"}, 1))
		})
		empty, err := g.EmptySelectors(servicesGR)
		require.NoError(t, err)
		assert.Equal(t, []string{f.expand("services/{ns}/svc-empty-value"), f.expand("services/{ns}/svc-none")}, inNamespace(empty, f.ns))
	})

	t.Run("source deleted and created again", func(t *testing.T) {
		cmProj := refs.ObjectRef{Resource: "configmaps", Namespace: f.ns, Name: "cm-proj"}
		f.delete(podsR, f.ns, "p1")
		eventually(t, nil, func() []string { return render(usedBy(t, g, cmProj, 1)) })
		eventually(t, f.want(`
			validatingwebhookconfigurations.admissionregistration.k8s.io/vwc-s52-{c} -[validatingwebhookconfigurations.admissionregistration.k8s.io:service]-> services/{ns}/hook-gone (Missing: not found)
		`), dangling)
		unused, err := g.Unreferenced(configMapsGR)
		require.NoError(t, err)
		assert.Equal(t, f.want(`
			configmaps/{ns}/cm-env
			configmaps/{ns}/cm-envfrom
			configmaps/{ns}/cm-free
			configmaps/{ns}/cm-proj
		`), inNamespace(unused, f.ns))
		f.create(podsR, s52Pod)
		eventually(t, f.want(`pods/{ns}/p1 -[pods:projected-configmap]-> configmaps/{ns}/cm-proj`),
			func() []string { return render(usedBy(t, g, cmProj, 1)) })
	})
}

// trimRes drops the resource of rendered object references: "pods/ns/p" is "ns/p".
func trimRes(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		_, out[i], _ = strings.Cut(s, "/")
	}
	return out
}

// TestS52SelectorRulesOfCustomResourcesFollowTheirCRDs: user selector rules whose source,
// or whose target, is a custom resource, with the CRDs installed after the graph starts,
// deleted while their objects select or are selected, and installed again (the target's
// with the other scope).
func TestS52SelectorRulesOfCustomResourcesFollowTheirCRDs(t *testing.T) {
	group := "s52b.refs.example.com"
	podGroups := schema.GroupResource{Group: group, Resource: "podgroups"}
	pools := schema.GroupResource{Group: group, Resource: "pools"}
	machines := schema.GroupResource{Group: group, Resource: "machines"}
	g := startGraph(t, refs.Options{Rules: append(refs.BuiltinRules(),
		refs.Rule{Name: "podgroups:pods", From: podGroups, Path: "{.spec.selector}", To: gvr("", "v1", "pods").GroupResource(), Selector: refs.SelectorLabelSelector},
		refs.Rule{Name: "pools:machines", From: pools, Path: "{.spec.machineSelector}", To: machines, Selector: refs.SelectorMap},
	)})
	f := newFixture(t)
	ns2 := cp.Namespace(t)
	f.repl = strings.NewReplacer("{ns2}", ns2, "{ns}", f.ns, "{c}", f.c)
	uses := func(res schema.GroupResource, ns, name string) func() []string {
		return func() []string {
			return render(uses(t, g, refs.ObjectRef{Group: res.Group, Resource: res.Resource, Namespace: ns, Name: name}, 1))
		}
	}
	f.create(podsR, `{"metadata":{"name":"p-a","namespace":"{ns}","labels":{"team":"a"}},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	f.create(podsR, `{"metadata":{"name":"p-b","namespace":"{ns}","labels":{"team":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	f.create(podsR, `{"metadata":{"name":"p-a","namespace":"{ns2}","labels":{"team":"a"}},"spec":{"containers":[{"name":"c","image":"i"}]}}`)

	pgCRD := testenv.NewCRD(group, "PodGroup", "podgroups")
	cp.InstallCRD(t, pgCRD)
	pgR := podGroups.WithVersion("v1")
	f.create(pgR, `{"apiVersion":"s52b.refs.example.com/v1","kind":"PodGroup","metadata":{"name":"pg","namespace":"{ns}"},
	  "spec":{"selector":{"matchLabels":{"team":"a"}}}}`)
	eventually(t, f.want(`podgroups.s52b.refs.example.com/{ns}/pg -[podgroups:pods]-> pods/{ns}/p-a`), uses(podGroups, f.ns, "pg"))
	f.update(podsR, f.ns, "p-b", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"team": "a"}) })
	eventually(t, f.want(`
		podgroups.s52b.refs.example.com/{ns}/pg -[podgroups:pods]-> pods/{ns}/p-a
		podgroups.s52b.refs.example.com/{ns}/pg -[podgroups:pods]-> pods/{ns}/p-b
	`), uses(podGroups, f.ns, "pg"))
	// The CRD goes with its object: the Pods are selected by nothing.
	cp.DeleteCRD(t, "podgroups."+group)
	eventually(t, nil, func() []string {
		return render(usedBy(t, g, refs.ObjectRef{Resource: "pods", Namespace: f.ns, Name: "p-a"}, 1))
	})
	// Answered once the graph has seen the resource go (an error while it reads as not
	// cached completely).
	var unused []refs.ObjectRef
	testenv.Eventually(t, 30*time.Second, func() bool {
		var err error
		unused, err = g.Unreferenced(podsR.GroupResource())
		return err == nil
	}, "Unreferenced answers")
	assert.Equal(t, f.want(`
		pods/{ns}/p-a
		pods/{ns}/p-b
	`), inNamespace(unused, f.ns))
	// Back, with an object selecting the other way.
	cp.InstallCRD(t, testenv.NewCRD(group, "PodGroup", "podgroups"))
	f.create(pgR, `{"apiVersion":"s52b.refs.example.com/v1","kind":"PodGroup","metadata":{"name":"pg","namespace":"{ns}"},
	  "spec":{"selector":{"matchExpressions":[{"key":"team","operator":"NotIn","values":["b"]}]}}}`)
	eventually(t, f.want(`
		podgroups.s52b.refs.example.com/{ns}/pg -[podgroups:pods]-> pods/{ns}/p-a
		podgroups.s52b.refs.example.com/{ns}/pg -[podgroups:pods]-> pods/{ns}/p-b
	`), uses(podGroups, f.ns, "pg"))

	// A pool selects machines before the machines' CRD exists; it comes cluster-scoped.
	cp.InstallCRD(t, testenv.NewCRD(group, "Pool", "pools"))
	poolR := pools.WithVersion("v1")
	f.create(poolR, `{"apiVersion":"s52b.refs.example.com/v1","kind":"Pool","metadata":{"name":"x","namespace":"{ns}"},
	  "spec":{"machineSelector":{"pool":"x"}}}`)
	eventually(t, nil, uses(pools, f.ns, "x"))
	mCRD := testenv.NewCRD(group, "Machine", "machines")
	mCRD.Spec.Scope = apiextv1.ClusterScoped
	cp.InstallCRD(t, mCRD)
	machR := machines.WithVersion("v1")
	f.create(machR, `{"apiVersion":"s52b.refs.example.com/v1","kind":"Machine","metadata":{"name":"m1-{c}","labels":{"pool":"x"}}}`)
	f.create(machR, `{"apiVersion":"s52b.refs.example.com/v1","kind":"Machine","metadata":{"name":"m2-{c}","labels":{"pool":"y"}}}`)
	eventually(t, f.want(`pools.s52b.refs.example.com/{ns}/x -[pools:machines]-> machines.s52b.refs.example.com/m1-{c}`), uses(pools, f.ns, "x"))
	updateObject(t, machR, "", "m2-"+f.c, func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"pool": "x"}) })
	eventually(t, f.want(`
		pools.s52b.refs.example.com/{ns}/x -[pools:machines]-> machines.s52b.refs.example.com/m1-{c}
		pools.s52b.refs.example.com/{ns}/x -[pools:machines]-> machines.s52b.refs.example.com/m2-{c}
	`), uses(pools, f.ns, "x"))
	// The machines' CRD goes, and comes back namespaced: the pool selects in its namespace.
	cp.DeleteCRD(t, "machines."+group)
	eventually(t, nil, uses(pools, f.ns, "x"))
	var empty []refs.ObjectRef
	testenv.Eventually(t, 30*time.Second, func() bool {
		var err error
		empty, err = g.EmptySelectors(pools)
		return err == nil
	}, "EmptySelectors answers")
	assert.Equal(t, f.want(`pools.s52b.refs.example.com/{ns}/x`), inNamespace(empty, f.ns))
	cp.InstallCRD(t, testenv.NewCRD(group, "Machine", "machines"))
	f.create(machR, `{"apiVersion":"s52b.refs.example.com/v1","kind":"Machine","metadata":{"name":"m1","namespace":"{ns}","labels":{"pool":"x"}}}`)
	f.create(machR, `{"apiVersion":"s52b.refs.example.com/v1","kind":"Machine","metadata":{"name":"m1","namespace":"{ns2}","labels":{"pool":"x"}}}`)
	eventually(t, f.want(`pools.s52b.refs.example.com/{ns}/x -[pools:machines]-> machines.s52b.refs.example.com/{ns}/m1`), uses(pools, f.ns, "x"))
	// And relabelled out of it.
	f.update(machR, f.ns, "m1", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"pool": "z"}) })
	eventually(t, nil, uses(pools, f.ns, "x"))
	t.Cleanup(func() {
		for _, n := range []string{"podgroups", "pools", "machines"} {
			cp.DeleteCRD(t, n+"."+group)
		}
	})
}

// s52RuleFile are user rules, as a rule file holds them, reading a custom resource's fields
// by every JSONPath form a rule author reaches for: the graph's own compact factory keeps
// what each reads, so that the live graph finds what the rules find on the whole object.
const s52RuleFile = `
- name: things:index
  from: things.s52c.refs.example.com
  path: "{.spec.list[0].name}"
  to: configmaps
- name: things:slice
  from: things.s52c.refs.example.com
  path: "{.spec.list[-1:].name}"
  to: secrets
- name: things:union-keys
  from: things.s52c.refs.example.com
  path: "{.spec.sources[*]['primary','fallback']}"
  to: configmaps
- name: things:dotted-key
  from: things.s52c.refs.example.com
  path: "{.metadata.annotations['s52.example.com/config']}"
  to: configmaps
- name: things:nested-filter
  from: things.s52c.refs.example.com
  path: "{.spec.mounts[?(@.ref.kind==\"Secret\")].ref.name}"
  to: secrets
- name: things:descent
  from: things.s52c.refs.example.com
  path: "{..serviceName}"
  to: services
- name: things:typed
  from: things.s52c.refs.example.com
  path: "{.spec.target}"
  kindField: kind
  apiVersionField: apiVersion
  nameField: name
  namespaceField: namespace
  optionalField: optional
- name: things:unless
  from: things.s52c.refs.example.com
  path: "{.spec.backup.secretName}"
  to: secrets
  unless:
    path: "{.spec.backup.enabled}"
    values: ["false"]
- name: gadgets:selector
  from: gadgets.s52c.refs.example.com
  path: "{.spec.selector}"
  to: pods
  selector: LabelSelector
  unless:
    path: "{.spec.paused}"
    values: ["true"]
`

func TestS52RuleFileFormsOnTheAPIServer(t *testing.T) {
	group := "s52c.refs.example.com"
	cp.InstallCRD(t, testenv.NewCRD(group, "Thing", "things"))
	cp.InstallCRD(t, testenv.NewCRD(group, "Gadget", "gadgets"))
	t.Cleanup(func() {
		cp.DeleteCRD(t, "things."+group)
		cp.DeleteCRD(t, "gadgets."+group)
	})
	rules, err := refs.ParseRules([]byte(s52RuleFile))
	require.NoError(t, err)
	f := newFixture(t)
	ns2 := cp.Namespace(t)
	f.repl = strings.NewReplacer("{ns2}", ns2, "{ns}", f.ns, "{c}", f.c)
	thingsR := gvr(group, "v1", "things")
	gadgetsR := gvr(group, "v1", "gadgets")
	f.create(thingsR, `{"apiVersion":"s52c.refs.example.com/v1","kind":"Thing","metadata":{"name":"t","namespace":"{ns}",
	  "annotations":{"s52.example.com/config":"cm-annotated","other":"x"}},
	  "spec":{"list":[{"name":"cm-first"},{"name":"cm-middle"},{"name":"sec-last"}],
	    "sources":[{"primary":"cm-p1","fallback":"cm-f1","ignored":"cm-no"},{"primary":"cm-p2"}],
	    "mounts":[{"ref":{"kind":"Secret","name":"sec-mount"}},{"ref":{"kind":"ConfigMap","name":"cm-mount-no"}}],
	    "deep":{"deeper":[{"serviceName":"svc-deep"}]},"serviceName":"svc-top",
	    "target":{"apiVersion":"v1","kind":"Secret","name":"sec-typed","namespace":"{ns2}","optional":true},
	    "backup":{"enabled":false,"secretName":"sec-backup"}}}`)
	f.create(thingsR, `{"apiVersion":"s52c.refs.example.com/v1","kind":"Thing","metadata":{"name":"u","namespace":"{ns}"},
	  "spec":{"backup":{"enabled":true,"secretName":"sec-backup"}}}`)
	f.create(podsR, `{"metadata":{"name":"p","namespace":"{ns}","labels":{"role":"db","tier":"back"}},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	f.create(gadgetsR, `{"apiVersion":"s52c.refs.example.com/v1","kind":"Gadget","metadata":{"name":"on","namespace":"{ns}"},
	  "spec":{"paused":false,"selector":{"matchExpressions":[{"key":"role","operator":"In","values":["db"]}]}}}`)
	f.create(gadgetsR, `{"apiVersion":"s52c.refs.example.com/v1","kind":"Gadget","metadata":{"name":"off","namespace":"{ns}"},
	  "spec":{"paused":true,"selector":{"matchLabels":{"role":"db"}}}}`)
	g := startGraph(t, refs.Options{Rules: append(refs.BuiltinRules(), rules...)})
	eventually(t, f.want(`
		things.s52c.refs.example.com/{ns}/t -[things:index]-> configmaps/{ns}/cm-first (Missing: not found)
		things.s52c.refs.example.com/{ns}/t -[things:slice]-> secrets/{ns}/sec-last (Missing: not found)
		things.s52c.refs.example.com/{ns}/t -[things:union-keys]-> configmaps/{ns}/cm-p1 (Missing: not found)
		things.s52c.refs.example.com/{ns}/t -[things:union-keys]-> configmaps/{ns}/cm-f1 (Missing: not found)
		things.s52c.refs.example.com/{ns}/t -[things:union-keys]-> configmaps/{ns}/cm-p2 (Missing: not found)
		things.s52c.refs.example.com/{ns}/t -[things:dotted-key]-> configmaps/{ns}/cm-annotated (Missing: not found)
		things.s52c.refs.example.com/{ns}/t -[things:nested-filter]-> secrets/{ns}/sec-mount (Missing: not found)
		things.s52c.refs.example.com/{ns}/t -[things:descent]-> services/{ns}/svc-deep (Missing: not found)
		things.s52c.refs.example.com/{ns}/t -[things:descent]-> services/{ns}/svc-top (Missing: not found)
		things.s52c.refs.example.com/{ns}/t -[things:typed]-> secrets/{ns2}/sec-typed (optional) (Missing: not found)
		things.s52c.refs.example.com/{ns}/u -[things:unless]-> secrets/{ns}/sec-backup (Missing: not found)
		gadgets.s52c.refs.example.com/{ns}/on -[gadgets:selector]-> pods/{ns}/p
	`), func() []string { return f.edges(g) })

	// Changes follow: the condition flips both ways, the filter's sibling field changes.
	f.update(thingsR, f.ns, "t", func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedField(u.Object, true, "spec", "backup", "enabled"))
		require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{
			map[string]any{"ref": map[string]any{"kind": "ConfigMap", "name": "sec-mount"}},
			map[string]any{"ref": map[string]any{"kind": "Secret", "name": "cm-mount-no"}}}, "spec", "mounts"))
	})
	f.update(gadgetsR, f.ns, "off", func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedField(u.Object, false, "spec", "paused"))
	})
	f.update(gadgetsR, f.ns, "on", func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedField(u.Object, true, "spec", "paused"))
	})
	eventually(t, f.want(`
		things.s52c.refs.example.com/{ns}/t -[things:nested-filter]-> secrets/{ns}/cm-mount-no (Missing: not found)
		things.s52c.refs.example.com/{ns}/t -[things:unless]-> secrets/{ns}/sec-backup (Missing: not found)
		things.s52c.refs.example.com/{ns}/u -[things:unless]-> secrets/{ns}/sec-backup (Missing: not found)
		gadgets.s52c.refs.example.com/{ns}/off -[gadgets:selector]-> pods/{ns}/p
	`), func() []string {
		var out []string
		for _, e := range f.edges(g) {
			if strings.Contains(e, ":nested-filter]") || strings.Contains(e, ":unless]") || strings.Contains(e, ":selector]") {
				out = append(out, e)
			}
		}
		return out
	})
}

// TestS52FilteredResourcesAreUnknown: a graph whose filter leaves resources out says so
// for every reference to them (Unknown, never Missing), and answers about them or that
// depend on them are incomplete; what it watches is followed as usual.
func TestS52FilteredResourcesAreUnknown(t *testing.T) {
	f := newFixture(t)
	f.create(configMapsR, `{"metadata":{"name":"cm","namespace":"{ns}"}}`)
	f.create(gvr("apps", "v1", "deployments"), `{"metadata":{"name":"d","namespace":"{ns}"},"spec":{"replicas":0,
	  "selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{
	    "volumes":[{"name":"a","configMap":{"name":"cm"}},{"name":"b","configMap":{"name":"cm-gone"}},{"name":"c","secret":{"secretName":"sec"}}],
	    "containers":[{"name":"c","image":"i"}]}}}}`)
	f.create(podsR, `{"metadata":{"name":"p","namespace":"{ns}","labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	f.create(servicesR, `{"metadata":{"name":"s","namespace":"{ns}"},"spec":{"selector":{"app":"d"},"ports":[{"port":80}]}}`)
	g := startGraph(t, refs.Options{Filter: &discovery.Filter{IncludeGroups: []string{"apps"}, IncludeResources: []string{"configmaps", "services"}}})
	eventually(t, f.want(`
		deployments.apps/{ns}/d -[deployments.apps:volume-configmap]-> configmaps/{ns}/cm
		deployments.apps/{ns}/d -[deployments.apps:volume-configmap]-> configmaps/{ns}/cm-gone (Missing: not found)
		deployments.apps/{ns}/d -[deployments.apps:volume-secret]-> secrets/{ns}/sec (Unknown: secrets is not watched)
	`), func() []string {
		return render(uses(t, g, refs.ObjectRef{Group: "apps", Resource: "deployments", Namespace: f.ns, Name: "d"}, 1))
	})
	// Pods are not watched: the Service selects none that the graph can see, and says the
	// answer is incomplete rather than that the Service selects nothing.
	empty, err := g.EmptySelectors(servicesGR)
	var inc *refs.IncompleteError
	require.ErrorAs(t, err, &inc)
	assert.Contains(t, inc.Resources, podsR.GroupResource())
	assert.Equal(t, []string{f.expand("services/{ns}/s")}, inNamespace(empty, f.ns))
	_, err = g.Unreferenced(secretsGR)
	require.ErrorAs(t, err, &inc)
	assert.Contains(t, inc.Resources, secretsGR)
	_, err = g.Unreferenced(configMapsGR)
	require.ErrorAs(t, err, &inc, "Pods, which may name ConfigMaps, are not watched")
	assert.Contains(t, inc.Resources, podsR.GroupResource())
	_, err = g.References(refs.ObjectRef{Resource: "pods", Namespace: f.ns, Name: "p"}, 1)
	require.ErrorAs(t, err, &inc)
	var dangling []string
	for _, e := range g.Dangling() {
		if e.From.Namespace == f.ns {
			dangling = append(dangling, e.String())
		}
	}
	sortStrings(dangling)
	assert.Equal(t, f.want(`
		deployments.apps/{ns}/d -[deployments.apps:volume-configmap]-> configmaps/{ns}/cm-gone (Missing: not found)
		deployments.apps/{ns}/d -[deployments.apps:volume-secret]-> secrets/{ns}/sec (Unknown: secrets is not watched)
	`), dangling)
}

// TestS52QueriesDuringTheInitialSync queries graphs as they start, while their informers
// list: an answer given without an *IncompleteError must be right. Unreferenced listed,
// without error, ConfigMaps that Pods mount (the Pods were handed to the graph after it was
// read, before coverage was checked); Dangling must not call a mounted ConfigMap Missing.
func TestS52QueriesDuringTheInitialSync(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 50; i++ {
		f.create(configMapsR, fmt.Sprintf(`{"metadata":{"name":"cm%d","namespace":"{ns}"}}`, i))
		f.create(podsR, fmt.Sprintf(`{"metadata":{"name":"p%d","namespace":"{ns}"},"spec":{"volumes":[{"name":"v","configMap":{"name":"cm%d"}}],
		  "containers":[{"name":"c","image":"i"}]}}`, i, i))
	}
	for round := 0; round < 8; round++ {
		g := startGraphAs(t, cp.AdminConfig(), refs.Options{})
		complete := 0
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			unused, err := g.Unreferenced(configMapsGR)
			if err == nil {
				complete++
				require.Empty(t, inNamespace(unused, f.ns), "round %d: a complete answer lists ConfigMaps that Pods mount", round)
			}
			for _, e := range g.Dangling() {
				require.False(t, e.From.Namespace == f.ns && e.State == refs.Missing, "round %d: %s", round, e)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			synced := g.WaitForSync(ctx) == nil
			cancel()
			if synced && complete > 0 {
				break
			}
		}
		require.Positive(t, complete, "round %d: no complete answer once synced", round)
		g.Shutdown()
	}
}
