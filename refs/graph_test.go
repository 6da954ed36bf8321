package refs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const fullPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"shop","uid":"p1",
  "labels":{"app":"web"},
  "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-rs","uid":"rs1","controller":true}]},
 "spec":{
  "serviceAccountName":"web-sa","nodeName":"node-a","priorityClassName":"high","runtimeClassName":"gvisor",
  "imagePullSecrets":[{"name":"regcred"}],
  "volumes":[
    {"name":"a","configMap":{"name":"cfg-vol"}},
    {"name":"a2","configMap":{"name":"cfg-vol"}},
    {"name":"b","secret":{"secretName":"sec-vol"}},
    {"name":"c","persistentVolumeClaim":{"claimName":"data"}},
    {"name":"d","projected":{"sources":[{"configMap":{"name":"cfg-proj"}},{"secret":{"name":"sec-proj"}},{"serviceAccountToken":{"path":"t"}}]}},
    {"name":"e","csi":{"driver":"x","nodePublishSecretRef":{"name":"sec-csi"}}}],
  "initContainers":[{"name":"init","envFrom":[{"configMapRef":{"name":"cfg-init"}}]}],
  "containers":[{"name":"app",
    "env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"cfg-env","key":"a"}}},
           {"name":"B","valueFrom":{"secretKeyRef":{"name":"sec-env","key":"b"}}},
           {"name":"C","value":"plain"}],
    "envFrom":[{"secretRef":{"name":"sec-envfrom"}}]}],
  "ephemeralContainers":[{"name":"debug","envFrom":[{"configMapRef":{"name":"cfg-debug"}}]}],
  "resourceClaims":[{"name":"gpu","resourceClaimName":"gpu-claim"}]}}`

func TestPodReferencesEveryBuiltinField(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(pods, fullPod)
	got := tg.References(oref(pods, "shop", "web-1"), 1)
	want := lines(`
		pods/shop/web-1 -[owner]-> replicasets.apps/shop/web-rs (Missing: not found)
		pods/shop/web-1 -[pods:serviceaccount]-> serviceaccounts/shop/web-sa (Missing: not found)
		pods/shop/web-1 -[pods:node]-> nodes/node-a (Missing: not found)
		pods/shop/web-1 -[pods:priorityclass]-> priorityclasses.scheduling.k8s.io/high (Missing: not found)
		pods/shop/web-1 -[pods:runtimeclass]-> runtimeclasses.node.k8s.io/gvisor (Missing: not found)
		pods/shop/web-1 -[pods:image-pull-secret]-> secrets/shop/regcred (Missing: not found)
		pods/shop/web-1 -[pods:volume-configmap]-> configmaps/shop/cfg-vol (Missing: not found)
		pods/shop/web-1 -[pods:volume-secret]-> secrets/shop/sec-vol (Missing: not found)
		pods/shop/web-1 -[pods:volume-pvc]-> persistentvolumeclaims/shop/data (Missing: not found)
		pods/shop/web-1 -[pods:projected-configmap]-> configmaps/shop/cfg-proj (Missing: not found)
		pods/shop/web-1 -[pods:projected-secret]-> secrets/shop/sec-proj (Missing: not found)
		pods/shop/web-1 -[pods:volume-plugin-secret]-> secrets/shop/sec-csi (Missing: not found)
		pods/shop/web-1 -[pods:envfrom-configmap]-> configmaps/shop/cfg-init (Missing: not found)
		pods/shop/web-1 -[pods:envfrom-configmap]-> configmaps/shop/cfg-debug (Missing: not found)
		pods/shop/web-1 -[pods:env-configmap]-> configmaps/shop/cfg-env (Missing: not found)
		pods/shop/web-1 -[pods:env-secret]-> secrets/shop/sec-env (Missing: not found)
		pods/shop/web-1 -[pods:envfrom-secret]-> secrets/shop/sec-envfrom (Missing: not found)
		pods/shop/web-1 -[pods:resourceclaim]-> resourceclaims.resource.k8s.io/shop/gpu-claim (Missing: not found)
	`)
	assert.Equal(t, want, strs(got))
	for _, e := range got {
		assert.Equal(t, 1, e.Depth)
	}
	st := tg.Stats()
	assert.Equal(t, 1, st.Objects)
	assert.Equal(t, 18, st.Edges)
	assert.Equal(t, 18, st.Missing)

	// Create the targets: every edge becomes Present, and nothing dangles.
	tg.put(gr("apps", "replicasets"), `{"metadata":{"name":"web-rs","namespace":"shop","uid":"rs1"}}`)
	for _, e := range got {
		if e.To.Resource == "replicasets" {
			continue
		}
		tg.put(e.To.GroupResource(), `{"metadata":{"name":"`+e.To.Name+`","namespace":"`+e.To.Namespace+`","uid":"u-`+e.To.Name+`"}}`)
	}
	for _, e := range tg.References(oref(pods, "shop", "web-1"), 1) {
		assert.Equal(t, Present, e.State, e.String())
	}
	assert.Empty(t, tg.Dangling())
	assert.Zero(t, tg.Stats().Missing)
}

func TestWorkloadTemplatesUseWhatTheirPodsUse(t *testing.T) {
	tg := newTestGraph(t, nil)
	spec := `{"serviceAccountName":"sa","volumes":[{"name":"v","configMap":{"name":"cm"}}],
	  "containers":[{"name":"c","envFrom":[{"secretRef":{"name":"s"}}]}]}`
	tg.put(gr("apps", "deployments"), `{"metadata":{"name":"d","namespace":"ns"},"spec":{"template":{"spec":`+spec+`}}}`)
	tg.put(gr("apps", "statefulsets"), `{"metadata":{"name":"st","namespace":"ns"},"spec":{"serviceName":"headless",
	  "volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"storageClassName":"fast"}}],"template":{"spec":`+spec+`}}}`)
	tg.put(gr("batch", "cronjobs"), `{"metadata":{"name":"cj","namespace":"ns"},"spec":{"jobTemplate":{"spec":{"template":{"spec":`+spec+`}}}}}`)
	tg.put(gr("", "podtemplates"), `{"metadata":{"name":"pt","namespace":"ns"},"template":{"spec":`+spec+`}}`)
	for _, c := range []struct{ res, name string }{
		{"deployments.apps", "d"}, {"statefulsets.apps", "st"}, {"cronjobs.batch", "cj"}, {"podtemplates", "pt"},
	} {
		got := tg.References(ObjectRef{Group: groupOf(c.res), Resource: resourceOf(c.res), Namespace: "ns", Name: c.name}, 1)
		want := lines(`
			` + c.res + `/ns/` + c.name + ` -[` + c.res + `:serviceaccount]-> serviceaccounts/ns/sa (Missing: not found)
			` + c.res + `/ns/` + c.name + ` -[` + c.res + `:volume-configmap]-> configmaps/ns/cm (Missing: not found)
			` + c.res + `/ns/` + c.name + ` -[` + c.res + `:envfrom-secret]-> secrets/ns/s (Missing: not found)
		`)
		if c.name == "st" {
			want = append(want, lines(`
				statefulsets.apps/ns/st -[statefulsets.apps:service]-> services/ns/headless (Missing: not found)
				statefulsets.apps/ns/st -[statefulsets.apps:claim-storageclass]-> storageclasses.storage.k8s.io/fast (Missing: not found)
			`)...)
		}
		assert.ElementsMatch(t, want, strs(got), c.res)
	}
	// Four holders use the ConfigMap.
	assert.Len(t, tg.Referrers(oref(configMaps, "ns", "cm"), 1), 4)
}

func groupOf(res string) string {
	for i := 0; i < len(res); i++ {
		if res[i] == '.' {
			return res[i+1:]
		}
	}
	return ""
}

func resourceOf(res string) string {
	for i := 0; i < len(res); i++ {
		if res[i] == '.' {
			return res[:i]
		}
	}
	return res
}

func TestStorageIngressAndServiceRules(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(pvcs, `{"metadata":{"name":"data","namespace":"ns","uid":"c1"},"spec":{"volumeName":"pv-1","storageClassName":"fast",
	  "dataSource":{"kind":"PersistentVolumeClaim","name":"seed"},"dataSourceRef":{"kind":"PersistentVolumeClaim","name":"seed"}}}`)
	tg.put(pvs, `{"metadata":{"name":"pv-1"},"spec":{"storageClassName":"fast","claimRef":{"namespace":"ns","name":"data","uid":"c1"},
	  "csi":{"driver":"d","nodeStageSecretRef":{"namespace":"kube-system","name":"csi-creds"}}}}`)
	tg.put(ingresses, `{"metadata":{"name":"ing","namespace":"ns"},"spec":{"ingressClassName":"nginx",
	  "defaultBackend":{"service":{"name":"fallback","port":{"number":80}}},
	  "tls":[{"secretName":"tls-cert"}],
	  "rules":[{"http":{"paths":[{"path":"/","backend":{"service":{"name":"web","port":{"number":80}}}},
	                             {"path":"/b","backend":{"resource":{"apiGroup":"k8s.example.com","kind":"StorageBucket","name":"assets"}}}]}}]}}`)
	tg.put(ingressClasses, `{"metadata":{"name":"nginx"},"spec":{"controller":"x","parameters":{"apiGroup":"k8s.example.com","kind":"IngressParameters","name":"p","namespace":"ns","scope":"Namespace"}}}`)
	tg.put(gr("apiregistration.k8s.io", "apiservices"), `{"metadata":{"name":"v1.metrics.k8s.io"},"spec":{"service":{"namespace":"kube-system","name":"metrics-server"}}}`)
	tg.put(gr("admissionregistration.k8s.io", "validatingwebhookconfigurations"), `{"metadata":{"name":"vwc"},
	  "webhooks":[{"name":"a.example.com","clientConfig":{"service":{"namespace":"hooks","name":"validator"}}},{"name":"b.example.com","clientConfig":{"url":"https://x"}}]}`)
	tg.put(gr("admissionregistration.k8s.io", "mutatingwebhookconfigurations"), `{"metadata":{"name":"mwc"},
	  "webhooks":[{"name":"m.example.com","clientConfig":{"service":{"namespace":"hooks","name":"mutator"}}}]}`)
	tg.put(gr("autoscaling", "horizontalpodautoscalers"), `{"metadata":{"name":"hpa","namespace":"ns"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}}}`)
	tg.put(serviceAccounts, `{"metadata":{"name":"sa","namespace":"ns"},"secrets":[{"name":"sa-token"}],"imagePullSecrets":[{"name":"pull"}]}`)
	tg.put(secrets, `{"metadata":{"name":"sa-token","namespace":"ns","annotations":{"kubernetes.io/service-account.name":"sa"}}}`)

	got := tg.Dangling()
	want := lines(`
		persistentvolumeclaims/ns/data -[persistentvolumeclaims:storageclass]-> storageclasses.storage.k8s.io/fast (Missing: not found)
		persistentvolumeclaims/ns/data -[persistentvolumeclaims:datasource]-> persistentvolumeclaims/ns/seed (Missing: not found)
		persistentvolumes/pv-1 -[persistentvolumes:storageclass]-> storageclasses.storage.k8s.io/fast (Missing: not found)
		persistentvolumes/pv-1 -[persistentvolumes:csi-secret]-> secrets/kube-system/csi-creds (Missing: not found)
		ingresses.networking.k8s.io/ns/ing -[ingresses.networking.k8s.io:backend-service]-> services/ns/fallback (Missing: not found)
		ingresses.networking.k8s.io/ns/ing -[ingresses.networking.k8s.io:backend-service]-> services/ns/web (Missing: not found)
		ingresses.networking.k8s.io/ns/ing -[ingresses.networking.k8s.io:tls-secret]-> secrets/ns/tls-cert (Missing: not found)
		ingresses.networking.k8s.io/ns/ing -[ingresses.networking.k8s.io:backend-resource]-> StorageBucket.k8s.example.com/ns/assets (Unknown: no served resource known to have kind StorageBucket.k8s.example.com)
		ingressclasses.networking.k8s.io/nginx -[ingressclasses.networking.k8s.io:parameters]-> IngressParameters.k8s.example.com/ns/p (Unknown: no served resource known to have kind IngressParameters.k8s.example.com)
		apiservices.apiregistration.k8s.io/v1.metrics.k8s.io -[apiservices.apiregistration.k8s.io:service]-> services/kube-system/metrics-server (Missing: not found)
		validatingwebhookconfigurations.admissionregistration.k8s.io/vwc -[validatingwebhookconfigurations.admissionregistration.k8s.io:service]-> services/hooks/validator (Missing: not found)
		mutatingwebhookconfigurations.admissionregistration.k8s.io/mwc -[mutatingwebhookconfigurations.admissionregistration.k8s.io:service]-> services/hooks/mutator (Missing: not found)
		horizontalpodautoscalers.autoscaling/ns/hpa -[horizontalpodautoscalers.autoscaling:target]-> deployments.apps/ns/web (Missing: not found)
		serviceaccounts/ns/sa -[serviceaccounts:image-pull-secret]-> secrets/ns/pull (Missing: not found)
	`)
	assert.Equal(t, want, strs(got))
	// The ones that are there: PV and PVC to each other, the ServiceAccount and its token.
	assert.Equal(t, lines(`
		persistentvolumes/pv-1 -[persistentvolumes:claim]-> persistentvolumeclaims/ns/data
		persistentvolumeclaims/ns/data -[persistentvolumeclaims:volume]-> persistentvolumes/pv-1
	`), strs(append(tg.Referrers(oref(pvcs, "ns", "data"), 1), tg.Referrers(oref(pvs, "", "pv-1"), 1)...)))
	assert.Equal(t, lines(`
		serviceaccounts/ns/sa -[serviceaccounts:secret]-> secrets/ns/sa-token
		secrets/ns/sa-token -[secrets:serviceaccount]-> serviceaccounts/ns/sa
	`), strs(append(tg.Referrers(oref(secrets, "ns", "sa-token"), 1), tg.Referrers(oref(serviceAccounts, "ns", "sa"), 1)...)))
	// The PVC recreated under the same name: the PV's claim reference requires the old UID.
	tg.del(pvcs, "ns", "data")
	tg.put(pvcs, `{"metadata":{"name":"data","namespace":"ns","uid":"c2"}}`)
	assert.Equal(t, lines(`
		persistentvolumes/pv-1 -[persistentvolumes:claim]-> persistentvolumeclaims/ns/data (Missing: the object has UID c2, the reference requires c1)
	`), strs(tg.Referrers(oref(pvcs, "ns", "data"), 1)))
}

func TestRBACRules(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(roleBindings, `{"metadata":{"name":"rb","namespace":"ns"},
	  "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"reader"},
	  "subjects":[{"kind":"ServiceAccount","name":"bot","namespace":"ci"},{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"},
	              {"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"devs"}]}`)
	tg.put(roleBindings, `{"metadata":{"name":"rb-cluster","namespace":"ns"},
	  "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},"subjects":[{"kind":"ServiceAccount","name":"local"}]}`)
	tg.put(clusterRoleBindings, `{"metadata":{"name":"crb"},
	  "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},
	  "subjects":[{"kind":"ServiceAccount","name":"bot","namespace":"ci"}]}`)
	assert.Equal(t, lines(`
		rolebindings.rbac.authorization.k8s.io/ns/rb -[rolebindings.rbac.authorization.k8s.io:role]-> roles.rbac.authorization.k8s.io/ns/reader (Missing: not found)
		rolebindings.rbac.authorization.k8s.io/ns/rb -[rolebindings.rbac.authorization.k8s.io:subject]-> serviceaccounts/ci/bot (Missing: not found)
		rolebindings.rbac.authorization.k8s.io/ns/rb-cluster -[rolebindings.rbac.authorization.k8s.io:role]-> clusterroles.rbac.authorization.k8s.io/view (Missing: not found)
		rolebindings.rbac.authorization.k8s.io/ns/rb-cluster -[rolebindings.rbac.authorization.k8s.io:subject]-> serviceaccounts/ns/local (Missing: not found)
		clusterrolebindings.rbac.authorization.k8s.io/crb -[clusterrolebindings.rbac.authorization.k8s.io:role]-> clusterroles.rbac.authorization.k8s.io/view (Missing: not found)
		clusterrolebindings.rbac.authorization.k8s.io/crb -[clusterrolebindings.rbac.authorization.k8s.io:subject]-> serviceaccounts/ci/bot (Missing: not found)
	`), strs(tg.Dangling()))
	// The ClusterRole exists: both bindings to it are whole; the Role is still missing.
	tg.put(clusterRoles, `{"metadata":{"name":"view"}}`)
	assert.Equal(t, lines(`
		rolebindings.rbac.authorization.k8s.io/ns/rb-cluster -[rolebindings.rbac.authorization.k8s.io:role]-> clusterroles.rbac.authorization.k8s.io/view
		clusterrolebindings.rbac.authorization.k8s.io/crb -[clusterrolebindings.rbac.authorization.k8s.io:role]-> clusterroles.rbac.authorization.k8s.io/view
	`), strs(tg.Referrers(oref(clusterRoles, "", "view"), 1)))
	// A query may name the cluster-scoped object with a namespace: it is ignored.
	assert.Len(t, tg.Referrers(oref(clusterRoles, "whatever", "view"), 1), 2)
	assert.Len(t, tg.Dangling(), 4)
}

func TestOwnerReferencesResolveKindsAndUIDs(t *testing.T) {
	rules := append(BuiltinRules(), Rule{Name: "widgets:secret", From: gr("example.com", "widgets"), Path: "{.spec.secretRef.name}", To: secrets})
	tg := newTestGraph(t, rules)
	// A Pod owned by a Widget, whose kind nothing serves yet: the reference is Unknown.
	tg.put(pods, `{"metadata":{"name":"p","namespace":"ns","uid":"p1","ownerReferences":[{"apiVersion":"example.com/v1","kind":"Widget","name":"w","uid":"w1"}]}}`)
	assert.Equal(t, lines(`
		pods/ns/p -[owner]-> Widget.example.com/ns/w (Unknown: no served resource known to have kind Widget.example.com)
	`), strs(tg.Dangling()))
	assert.Equal(t, 1, tg.Stats().Unresolved)
	// The widget uses a Secret; the rule targets secrets with the automatic namespace, which
	// needs the widgets' scope: until discovery tells it, the widget's reference waits too.
	tg.put(gr("example.com", "widgets"), `{"metadata":{"name":"w","namespace":"ns","uid":"w1"},"spec":{"secretRef":{"name":"creds"}}}`)
	assert.Equal(t, lines(`
		widgets.example.com/ns/w -[widgets:secret]-> secrets/ns/creds (Missing: not found)
	`), strs(tg.References(oref(gr("example.com", "widgets"), "ns", "w"), 1)))
	// The CRD is served: the owner reference resolves, and the owner is there.
	tg.g.learn(gr("example.com", "widgets"), "Widget", true)
	assert.Zero(t, tg.Stats().Unresolved)
	assert.Equal(t, lines(`
		pods/ns/p -[owner]-> widgets.example.com/ns/w
	`), strs(tg.Referrers(oref(gr("example.com", "widgets"), "ns", "w"), 1)))
	// The widget is recreated with another UID: the owner reference dangles although an
	// object of that name exists; and the new one's name is whole again when the UID matches.
	tg.put(gr("example.com", "widgets"), `{"metadata":{"name":"w","namespace":"ns","uid":"w2"}}`)
	assert.Equal(t, lines(`
		pods/ns/p -[owner]-> widgets.example.com/ns/w (Missing: the object has UID w2, the reference requires w1)
	`), strs(tg.Dangling()))
	tg.put(pods, `{"metadata":{"name":"p","namespace":"ns","uid":"p1","ownerReferences":[{"apiVersion":"example.com/v1","kind":"Widget","name":"w","uid":"w2"}]}}`)
	assert.Empty(t, tg.Dangling())
	// Unknown when the owner's resource is not cached completely.
	tg.del(gr("example.com", "widgets"), "ns", "w")
	tg.uncovered[gr("example.com", "widgets")] = "widgets.example.com is Parked (NotFound)"
	assert.Equal(t, lines(`
		pods/ns/p -[owner]-> widgets.example.com/ns/w (Unknown: widgets.example.com is Parked (NotFound))
	`), strs(tg.Dangling()))
}

func TestCustomResourceRulesByKind(t *testing.T) {
	// cert-manager style: {.spec.issuerRef} names a kind and a name; Issuer is namespaced,
	// ClusterIssuer is not, and discovery decides where the target is.
	rules := append(BuiltinRules(),
		Rule{Name: "certificates:issuer", From: gr("cert-manager.io", "certificates"), Path: "{.spec.issuerRef}",
			To: gr("cert-manager.io", ""), KindField: "kind", GroupField: "group", NameField: "name"},
		Rule{Name: "certificates:secret", From: gr("cert-manager.io", "certificates"), Path: "{.spec.secretName}",
			To: secrets, Namespace: NamespaceSame},
	)
	tg := newTestGraph(t, rules)
	tg.g.learn(gr("cert-manager.io", "issuers"), "Issuer", true)
	tg.g.learn(gr("cert-manager.io", "clusterissuers"), "ClusterIssuer", false)
	certs := gr("cert-manager.io", "certificates")
	tg.put(certs, `{"metadata":{"name":"a","namespace":"ns"},"spec":{"secretName":"a-tls","issuerRef":{"kind":"Issuer","name":"local"}}}`)
	tg.put(certs, `{"metadata":{"name":"b","namespace":"ns"},"spec":{"secretName":"b-tls","issuerRef":{"kind":"ClusterIssuer","group":"cert-manager.io","name":"letsencrypt"}}}`)
	tg.put(certs, `{"metadata":{"name":"c","namespace":"ns"},"spec":{"issuerRef":{"kind":"Issuer","group":"other.io","name":"x"}}}`)
	assert.Equal(t, lines(`
		certificates.cert-manager.io/ns/a -[certificates:issuer]-> issuers.cert-manager.io/ns/local (Missing: not found)
		certificates.cert-manager.io/ns/a -[certificates:secret]-> secrets/ns/a-tls (Missing: not found)
		certificates.cert-manager.io/ns/b -[certificates:issuer]-> clusterissuers.cert-manager.io/letsencrypt (Missing: not found)
		certificates.cert-manager.io/ns/b -[certificates:secret]-> secrets/ns/b-tls (Missing: not found)
		certificates.cert-manager.io/ns/c -[certificates:issuer]-> Issuer.other.io/ns/x (Unknown: no served resource known to have kind Issuer.other.io)
	`), strs(tg.Dangling()))
	tg.put(secrets, `{"metadata":{"name":"a-tls","namespace":"ns"}}`)
	tg.put(secrets, `{"metadata":{"name":"unused","namespace":"ns"}}`)
	unused, err := tg.Unreferenced(secrets)
	require.NoError(t, err)
	assert.Equal(t, []string{"secrets/ns/unused"}, refStrs(unused))
}

// cert-manager's issuerRef may leave out its kind (and group): it names an Issuer then, in
// the Certificate's namespace. Such a value named nothing, so that the Issuer looked unused;
// a rule's DefaultKind gives the kind its API defaults to.
func TestDefaultKindOfReferencesThatNameNone(t *testing.T) {
	certs, issuers := gr("cert-manager.io", "certificates"), gr("cert-manager.io", "issuers")
	rules := append(BuiltinRules(),
		Rule{Name: "certificates:issuer", From: certs, Path: "{.spec.issuerRef}", To: gr("cert-manager.io", ""),
			KindField: "kind", GroupField: "group", NameField: "name", DefaultKind: "Issuer"})
	tg := newTestGraph(t, rules)
	tg.g.learn(issuers, "Issuer", true)
	tg.g.learn(gr("cert-manager.io", "clusterissuers"), "ClusterIssuer", false)
	tg.put(certs, `{"metadata":{"name":"a","namespace":"ns"},"spec":{"issuerRef":{"name":"ca"}}}`)
	tg.put(certs, `{"metadata":{"name":"b","namespace":"ns"},"spec":{"issuerRef":{"name":"acme","kind":"","group":"cert-manager.io"}}}`)
	tg.put(certs, `{"metadata":{"name":"c","namespace":"ns"},"spec":{"issuerRef":{"name":"le","kind":"ClusterIssuer"}}}`)
	assert.Equal(t, lines(`
		certificates.cert-manager.io/ns/a -[certificates:issuer]-> issuers.cert-manager.io/ns/ca (Missing: not found)
		certificates.cert-manager.io/ns/b -[certificates:issuer]-> issuers.cert-manager.io/ns/acme (Missing: not found)
		certificates.cert-manager.io/ns/c -[certificates:issuer]-> clusterissuers.cert-manager.io/le (Missing: not found)
	`), strs(tg.Dangling()))
	tg.put(issuers, `{"metadata":{"name":"ca","namespace":"ns"}}`)
	tg.put(issuers, `{"metadata":{"name":"spare","namespace":"ns"}}`)
	unused, err := tg.Unreferenced(issuers)
	require.NoError(t, err)
	assert.Equal(t, []string{"issuers.cert-manager.io/ns/spare"}, refStrs(unused))

	for _, r := range []Rule{
		{Name: "names", From: certs, Path: "{.spec.issuerRef.name}", To: issuers, DefaultKind: "Issuer"},
		{Name: "by-resource", From: certs, Path: "{.spec.issuerRef}", To: issuers, NameField: "name", DefaultKind: "Issuer"},
		{Name: "selector", From: certs, Path: "{.spec.selector}", To: pods, Selector: SelectorMap, DefaultKind: "Pod"},
	} {
		assert.ErrorIs(t, CheckRules([]Rule{r}), ErrInvalidRule, "%s: DefaultKind needs a KindField", r.Name)
	}
}

func TestDeletedTargetDanglesAndRecreatedIsWhole(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(configMaps, `{"metadata":{"name":"cfg","namespace":"ns","uid":"c1"}}`)
	for _, p := range []string{"a", "b"} {
		tg.put(pods, `{"metadata":{"name":"`+p+`","namespace":"ns"},"spec":{"volumes":[{"name":"v","configMap":{"name":"cfg"}}]}}`)
	}
	assert.Empty(t, tg.Dangling())
	tg.del(configMaps, "ns", "cfg")
	assert.Equal(t, lines(`
		pods/ns/a -[pods:volume-configmap]-> configmaps/ns/cfg (Missing: not found)
		pods/ns/b -[pods:volume-configmap]-> configmaps/ns/cfg (Missing: not found)
	`), strs(tg.Dangling()))
	// Who uses the deleted ConfigMap: still answered.
	assert.Len(t, tg.Referrers(oref(configMaps, "ns", "cfg"), 1), 2)
	// Recreated (another UID: only owner references require one).
	tg.put(configMaps, `{"metadata":{"name":"cfg","namespace":"ns","uid":"c2"}}`)
	assert.Empty(t, tg.Dangling())
	// The pods go: the graph forgets the ConfigMap's referrers, and deleting it then leaves
	// nothing behind.
	tg.del(pods, "ns", "a")
	tg.del(pods, "ns", "b")
	tg.del(configMaps, "ns", "cfg")
	assert.Empty(t, tg.g.entries)
	assert.Equal(t, Stats{Events: tg.Stats().Events}, tg.Stats())
}

func TestUnreferencedHonoursEveryRule(t *testing.T) {
	rules := append(BuiltinRules(), Rule{Name: "widgets:secret", From: gr("example.com", "widgets"),
		Path: "{.spec.secretRef.name}", To: secrets, Namespace: NamespaceSame})
	tg := newTestGraph(t, rules)
	for _, n := range []string{"by-pod", "by-widget", "by-sa", "by-ingress", "nothing"} {
		tg.put(secrets, `{"metadata":{"name":"`+n+`","namespace":"ns"}}`)
	}
	tg.put(configMaps, `{"metadata":{"name":"lonely","namespace":"ns"}}`)
	tg.put(pods, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":"by-pod","key":"k"}}}]}]}}`)
	tg.put(gr("example.com", "widgets"), `{"metadata":{"name":"w","namespace":"ns"},"spec":{"secretRef":{"name":"by-widget"}}}`)
	tg.put(serviceAccounts, `{"metadata":{"name":"sa","namespace":"ns"},"imagePullSecrets":[{"name":"by-sa"}]}`)
	tg.put(ingresses, `{"metadata":{"name":"i","namespace":"ns"},"spec":{"tls":[{"secretName":"by-ingress"}]}}`)
	unused, err := tg.Unreferenced(secrets)
	require.NoError(t, err)
	assert.Equal(t, []string{"secrets/ns/nothing"}, refStrs(unused))
	unused, err = tg.Unreferenced(configMaps)
	require.NoError(t, err)
	assert.Equal(t, []string{"configmaps/ns/lonely"}, refStrs(unused))
	// The widget stops naming its Secret: now that one is unused too.
	tg.put(gr("example.com", "widgets"), `{"metadata":{"name":"w","namespace":"ns"},"spec":{}}`)
	unused, _ = tg.Unreferenced(secrets)
	assert.Equal(t, []string{"secrets/ns/by-widget", "secrets/ns/nothing"}, refStrs(unused))
	// While a watched resource is not synced, the answer says so.
	tg.uncovered[pods] = "pods is Syncing"
	_, err = tg.Unreferenced(secrets)
	var inc *IncompleteError
	require.ErrorAs(t, err, &inc)
	assert.ErrorIs(t, err, ErrIncomplete)
	assert.Equal(t, "refs: not cached completely: pods", err.Error())
}

func TestTransitiveWalks(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(gr("apps", "deployments"), `{"metadata":{"name":"web","namespace":"ns","uid":"d1"},"spec":{"template":{"spec":{"serviceAccountName":"sa"}}}}`)
	tg.put(gr("apps", "replicasets"), `{"metadata":{"name":"web-1","namespace":"ns","uid":"r1","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"d1"}]},
	  "spec":{"template":{"spec":{"serviceAccountName":"sa"}}}}`)
	for _, p := range []string{"web-1-a", "web-1-b"} {
		tg.put(pods, `{"metadata":{"name":"`+p+`","namespace":"ns","uid":"`+p+`","labels":{"app":"web"},
		  "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":"r1"}]},"spec":{"serviceAccountName":"sa","nodeName":"n1"}}`)
	}
	tg.put(serviceAccounts, `{"metadata":{"name":"sa","namespace":"ns"}}`)
	tg.put(nodes, `{"metadata":{"name":"n1"}}`)
	tg.put(services, `{"metadata":{"name":"web","namespace":"ns"},"spec":{"selector":{"app":"web"}}}`)

	// What uses the Deployment, to any depth: its ReplicaSet, the Pods, the Service
	// selecting them.
	got := tg.Referrers(oref(gr("apps", "deployments"), "ns", "web"), 0)
	assert.Equal(t, []string{
		"1 replicasets.apps/ns/web-1 -[owner]-> deployments.apps/ns/web",
		"2 pods/ns/web-1-a -[owner]-> replicasets.apps/ns/web-1",
		"2 pods/ns/web-1-b -[owner]-> replicasets.apps/ns/web-1",
		"3 services/ns/web -[services:selector]-> pods/ns/web-1-a",
		"3 services/ns/web -[services:selector]-> pods/ns/web-1-b",
	}, withDepth(got))
	assert.True(t, got[3].Selector)
	// Depth 2 stops before the Service.
	assert.Len(t, tg.Referrers(oref(gr("apps", "deployments"), "ns", "web"), 2), 3)
	// What a Pod uses, transitively: its ReplicaSet (and what that uses), SA, Node.
	assert.Equal(t, []string{
		"1 pods/ns/web-1-a -[owner]-> replicasets.apps/ns/web-1",
		"1 pods/ns/web-1-a -[pods:node]-> nodes/n1",
		"1 pods/ns/web-1-a -[pods:serviceaccount]-> serviceaccounts/ns/sa",
		"2 replicasets.apps/ns/web-1 -[owner]-> deployments.apps/ns/web",
		"2 replicasets.apps/ns/web-1 -[replicasets.apps:serviceaccount]-> serviceaccounts/ns/sa",
		"3 deployments.apps/ns/web -[deployments.apps:serviceaccount]-> serviceaccounts/ns/sa",
	}, withDepth(tg.References(oref(pods, "ns", "web-1-a"), 0)))
	// The Service uses its Pods, and through them the rest.
	assert.Len(t, tg.References(oref(services, "ns", "web"), 1), 2)
	// An object the graph does not know.
	assert.Empty(t, tg.References(oref(pods, "ns", "nope"), 0))
	edges, err := tg.Graph.Referrers(ObjectRef{Resource: "nothings", Name: "x"}, 0)
	assert.Empty(t, edges)
	assert.ErrorIs(t, err, ErrUnknownResource, "a resource the graph does not know")
	// By kind instead of resource.
	assert.Len(t, tg.Referrers(ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "web"}, 1), 1)
}

func withDepth(edges []Edge) []string {
	out := make([]string, len(edges))
	for i, e := range edges {
		out[i] = string(rune('0'+e.Depth)) + " " + e.String()
	}
	return out
}

// A resource whose rules name the one asked about, served but not watched (filtered out,
// forbidden), makes the answer incomplete; so do unwatched Pods for Services' selections.
func TestUnwatchedRelatedResourcesMakeAnswersIncomplete(t *testing.T) {
	widgets := gr("example.com", "widgets")
	rules := append(BuiltinRules(), Rule{Name: "widgets:secret", From: widgets, Path: "{.spec.secretRef.name}", To: secrets, Namespace: NamespaceSame})
	tg := newTestGraph(t, rules)
	tg.incomplete = nil // every watched resource is synced
	tg.put(secrets, `{"metadata":{"name":"s","namespace":"ns"}}`)
	tg.put(services, `{"metadata":{"name":"web","namespace":"ns"},"spec":{"selector":{"app":"web"}}}`)
	_, err := tg.Unreferenced(secrets)
	require.NoError(t, err, "widgets are not served: nothing to miss")

	tg.g.learn(widgets, "Widget", true) // served, and not watched
	tg.uncovered[widgets] = "widgets.example.com is not watched"
	tg.uncovered[pods] = "pods is not watched"
	unused, err := tg.Unreferenced(secrets)
	assert.Equal(t, []string{"secrets/ns/s"}, refStrs(unused))
	assert.EqualError(t, err, "refs: not cached completely: pods, widgets.example.com")
	empty, err := tg.EmptySelectors(services)
	assert.Equal(t, []string{"services/ns/web"}, refStrs(empty))
	assert.EqualError(t, err, "refs: not cached completely: pods")
	// Unwatched widgets may own ConfigMaps (owner references are read on every resource).
	_, err = tg.Unreferenced(configMaps)
	assert.EqualError(t, err, "refs: not cached completely: pods, widgets.example.com")
}

// Rules that name their target's kind (RBAC bindings' roleRef and subjects, an HPA's target)
// have no To resource, and were left out: with the bindings unwatched, every ClusterRole
// was reported unused, with no error. A rule with Kinds may name those kinds only; one
// without may name any resource.
func TestUnwatchedKindRulesMakeAnswersIncomplete(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.incomplete = nil
	tg.put(gr("rbac.authorization.k8s.io", "clusterroles"), `{"metadata":{"name":"view"}}`)
	tg.put(serviceAccounts, `{"metadata":{"name":"bot","namespace":"ns"}}`)
	tg.put(gr("apps", "deployments"), `{"metadata":{"name":"web","namespace":"ns"}}`)
	for _, r := range []schema.GroupResource{gr("rbac.authorization.k8s.io", "rolebindings"),
		gr("rbac.authorization.k8s.io", "clusterrolebindings"), gr("autoscaling", "horizontalpodautoscalers")} {
		tg.uncovered[r] = resourceName(r) + " is not watched"
	}
	for res, want := range map[schema.GroupResource]string{
		gr("rbac.authorization.k8s.io", "clusterroles"): "refs: not cached completely: clusterrolebindings.rbac.authorization.k8s.io, " +
			"horizontalpodautoscalers.autoscaling, rolebindings.rbac.authorization.k8s.io",
		serviceAccounts: "refs: not cached completely: clusterrolebindings.rbac.authorization.k8s.io, " +
			"horizontalpodautoscalers.autoscaling, rolebindings.rbac.authorization.k8s.io",
		// An HPA's target is any kind; role bindings name roles and service accounts only, but
		// may own a Deployment (owner references); cluster role bindings, cluster-scoped,
		// cannot.
		gr("apps", "deployments"): "refs: not cached completely: horizontalpodautoscalers.autoscaling, rolebindings.rbac.authorization.k8s.io",
	} {
		unused, err := tg.Unreferenced(res)
		assert.Len(t, unused, 1, resourceName(res))
		assert.EqualError(t, err, want, resourceName(res))
	}
}

func TestForgottenResourceNoLongerResolves(t *testing.T) {
	widgets := gr("example.com", "widgets")
	tg := newTestGraph(t, nil)
	tg.g.learn(widgets, "Widget", true)
	owned := `{"metadata":{"name":"NAME","namespace":"ns","ownerReferences":[{"apiVersion":"example.com/v1","kind":"Widget","name":"w","uid":"1"}]}}`
	tg.put(configMaps, strings.Replace(owned, "NAME", "before", 1))
	tg.g.forget(widgets) // the CRD is deleted
	tg.put(configMaps, strings.Replace(owned, "NAME", "after", 1))
	assert.Equal(t, lines(`
		configmaps/ns/after -[owner]-> Widget.example.com/ns/w (Unknown: no served resource known to have kind Widget.example.com)
		configmaps/ns/before -[owner]-> widgets.example.com/ns/w (Missing: not found)
	`), strs(tg.Dangling()))
	tg.g.forget(widgets) // twice: nothing more
	tg.g.learn(widgets, "Widget", true)
	assert.Len(t, tg.Dangling(), 2)
	assert.Zero(t, tg.Stats().Unresolved)
}

// A rule that yields more values than its JSONPath budget allows keeps the references found
// before the failure; those past it were dropped without a trace. Stats.Truncated counts
// the objects so cut, and follows their updates and deletion.
func TestTruncatedReadingsAreCounted(t *testing.T) {
	widgets := gr("example.com", "widgets")
	tg := newTestGraph(t, append(BuiltinRules(), Rule{Name: "widgets:secrets", From: widgets,
		Path: "{.spec.items[*].secretRef.name}", To: secrets, Namespace: NamespaceSame}))
	tg.g.learn(widgets, "Widget", true)
	widget := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(`{"secretRef":{"name":"s%d"}}`, i)
		}
		return `{"metadata":{"name":"w","namespace":"ns"},"spec":{"items":[` + strings.Join(items, ",") + `]}}`
	}
	tg.put(widgets, widget(20000))
	st := tg.Stats()
	assert.Equal(t, 1, st.Truncated)
	assert.Equal(t, 16384, st.Edges, "the references before the budget's end are kept")
	tg.put(widgets, widget(10))
	st = tg.Stats()
	assert.Zero(t, st.Truncated)
	assert.Equal(t, 10, st.Edges)
	tg.put(widgets, widget(20000))
	tg.del(widgets, "ns", "w")
	assert.Zero(t, tg.Stats().Truncated)
}

// A reference or a selector to a resource discovery has not described yet waits for its
// scope. A reference whose value names a namespace was resolved at once into that
// namespace, and a selector was kept to its owner's: when the resource turned out
// cluster-scoped, the reference stayed Missing (a false "dangling") and the selector
// selected nothing, whichever came first deciding the answer.
func TestScopeLearnedAfterTheReference(t *testing.T) {
	widgets, pools, gizmos := gr("example.com", "widgets"), gr("example.com", "pools"), gr("example.com", "gizmos")
	rules := append(BuiltinRules(),
		Rule{Name: "widgets:gizmo", From: widgets, Path: "{.spec.gizmoRef}", To: gizmos, NameField: "name", NamespaceField: "namespace"},
		Rule{Name: "pools:gizmos", From: pools, Path: "{.spec.selector}", To: gizmos, Selector: SelectorMap})
	for _, learnFirst := range []bool{true, false} {
		tg := newTestGraph(t, rules)
		tg.g.learn(widgets, "Widget", true)
		tg.g.learn(pools, "Pool", true)
		if learnFirst {
			tg.g.learn(gizmos, "Gizmo", false)
		}
		tg.put(widgets, `{"metadata":{"name":"w","namespace":"ns"},"spec":{"gizmoRef":{"name":"g","namespace":"ns"}}}`)
		tg.put(pools, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"selector":{"k":"v"}}}`)
		if !learnFirst {
			tg.g.learn(gizmos, "Gizmo", false)
		}
		tg.put(gizmos, `{"metadata":{"name":"g","labels":{"k":"v"}}}`)
		assert.Empty(t, strs(tg.Dangling()), "learned first: %v", learnFirst)
		assert.Equal(t, []string{"widgets.example.com/ns/w -[widgets:gizmo]-> gizmos.example.com/g"},
			strs(tg.References(oref(widgets, "ns", "w"), 1)), "learned first: %v", learnFirst)
		assert.Equal(t, []string{"pools.example.com/ns/p -[pools:gizmos]-> gizmos.example.com/g"},
			strs(tg.References(oref(pools, "ns", "p"), 1)), "learned first: %v", learnFirst)
		empty, _ := tg.EmptySelectors(pools)
		assert.Empty(t, empty, "learned first: %v", learnFirst)
	}
}

// An owner reference to an earlier object of the same name (another UID) is Missing, and
// no use of the object now cached: it kept the new Deployment out of Unreferenced.
func TestStaleOwnerReferenceIsNoUse(t *testing.T) {
	deployments, replicaSets := gr("apps", "deployments"), gr("apps", "replicasets")
	tg := newTestGraph(t, nil)
	tg.put(deployments, `{"metadata":{"name":"web","namespace":"ns","uid":"d2"}}`)
	tg.put(replicaSets, `{"metadata":{"name":"web-1","namespace":"ns","uid":"r1","ownerReferences":[
		{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"d1"}]}}`)
	assert.Len(t, tg.Dangling(), 1, "the reference wants d1")
	unused, _ := tg.Unreferenced(deployments)
	assert.Equal(t, []string{"deployments.apps/ns/web"}, refStrs(unused))
	tg.put(replicaSets, `{"metadata":{"name":"web-1","namespace":"ns","uid":"r1","ownerReferences":[
		{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"d2"}]}}`)
	unused, _ = tg.Unreferenced(deployments)
	assert.Empty(t, unused, "owned by the current web")
}

// A walk does not pass through an owner reference to an earlier object of the name: the
// ReplicaSet that has the name now is not the Pod's owner, so its Deployment is not what
// the Pod uses, nor the Service selecting the Pod what uses the ReplicaSet. Both walks went
// on through the Missing edge, and the tree showed a missing owner with children.
func TestWalksStopAtStaleOwnerReferences(t *testing.T) {
	deployments, replicaSets := gr("apps", "deployments"), gr("apps", "replicasets")
	tg := newTestGraph(t, nil)
	tg.put(deployments, `{"metadata":{"name":"web","namespace":"ns","uid":"d1"}}`)
	tg.put(replicaSets, `{"metadata":{"name":"web-1","namespace":"ns","uid":"r2","ownerReferences":[
		{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"d1"}]}}`)
	tg.put(pods, `{"metadata":{"name":"p","namespace":"ns","uid":"p1","labels":{"app":"web"},"ownerReferences":[
		{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":"r1"}]}}`)
	tg.put(services, `{"metadata":{"name":"web","namespace":"ns"},"spec":{"selector":{"app":"web"}}}`)

	stale := "pods/ns/p -[owner]-> replicasets.apps/ns/web-1 (Missing: the object has UID r2, the reference requires r1)"
	assert.Equal(t, []string{"1 " + stale}, withDepth(tg.References(oref(pods, "ns", "p"), 0)))
	assert.Equal(t, []string{"1 " + stale}, withDepth(tg.Referrers(oref(replicaSets, "ns", "web-1"), 0)))
	assert.Equal(t, "pods/ns/p\n└── [owner] replicasets.apps/ns/web-1 (Missing: the object has UID r2, the reference requires r1)\n",
		Tree(oref(pods, "ns", "p"), tg.References(oref(pods, "ns", "p"), 0), false).String())

	// Deleted, the ReplicaSet's referrers are what still names it, and what uses those.
	tg.del(replicaSets, "ns", "web-1")
	assert.Equal(t, []string{
		"1 pods/ns/p -[owner]-> replicasets.apps/ns/web-1 (Missing: not found)",
		"2 services/ns/web -[services:selector]-> pods/ns/p",
	}, withDepth(tg.Referrers(oref(replicaSets, "ns", "web-1"), 0)))
}

// An edge resolved before its target's resource changed scope, or before its kind moved to
// another resource, kept pointing where the server no longer looks: a ConfigMap's reference
// to a Gizmo stayed "Missing" in the Gizmo's old namespace after the CRD came back
// cluster-scoped, and a reference by kind stayed on the resource that no longer served it.
func TestEdgesFollowScopeAndKindChanges(t *testing.T) {
	gizmos, gizmoz := gr("scope.io", "gizmos"), gr("scope.io", "gizmoz")
	rules := append(BuiltinRules(),
		Rule{Name: "cm:gizmo", From: configMaps, Path: "{.data.gizmo}", To: gizmos},
		Rule{Name: "cm:ref", From: configMaps, Path: "{.data.ref}", To: schema.GroupResource{Group: "scope.io"},
			KindField: "kind", NameField: "name"})
	tg := newTestGraph(t, rules)
	tg.g.learn(gizmos, "Gizmo", true)
	tg.put(configMaps, `{"metadata":{"name":"c","namespace":"ns"},"data":{"gizmo":"g1","ref":{"kind":"Gizmo","name":"g1"}}}`)
	tg.put(gizmos, `{"metadata":{"name":"g1","namespace":"ns"}}`)
	refsOfC := func() []string { return strs(tg.References(oref(configMaps, "ns", "c"), 1)) }
	require.Equal(t, lines(`
		configmaps/ns/c -[cm:gizmo]-> gizmos.scope.io/ns/g1
		configmaps/ns/c -[cm:ref]-> gizmos.scope.io/ns/g1
	`), refsOfC())

	// The CRD is deleted and created again cluster-scoped.
	tg.del(gizmos, "ns", "g1")
	tg.g.forget(gizmos)
	tg.g.learn(gizmos, "Gizmo", false)
	tg.put(gizmos, `{"metadata":{"name":"g1"}}`)
	assert.Equal(t, lines(`
		configmaps/ns/c -[cm:gizmo]-> gizmos.scope.io/g1
		configmaps/ns/c -[cm:ref]-> gizmos.scope.io/g1
	`), refsOfC())
	assert.Empty(t, strs(tg.Dangling()))

	// Its scope changes back without a deletion in between (a Changed event).
	tg.g.learn(gizmos, "Gizmo", true)
	assert.Equal(t, lines(`
		configmaps/ns/c -[cm:gizmo]-> gizmos.scope.io/ns/g1 (Missing: not found)
		configmaps/ns/c -[cm:ref]-> gizmos.scope.io/ns/g1 (Missing: not found)
	`), refsOfC())
	tg.g.learn(gizmos, "Gizmo", false)

	// The kind moves to another resource: the reference by kind follows it, the one by
	// resource stays with gizmos, no longer served (Referrers of gizmos/g1 still finds it).
	tg.del(gizmos, "", "g1")
	tg.g.forget(gizmos)
	tg.uncovered[gizmos] = "gizmos.scope.io is not watched"
	assert.Len(t, tg.Referrers(oref(gizmos, "", "g1"), 1), 2, "both still name gizmos/g1")
	tg.g.learn(gizmoz, "Gizmo", false)
	tg.put(gizmoz, `{"metadata":{"name":"g1"}}`)
	assert.Equal(t, lines(`
		configmaps/ns/c -[cm:gizmo]-> gizmos.scope.io/g1 (Unknown: gizmos.scope.io is not watched)
		configmaps/ns/c -[cm:ref]-> gizmoz.scope.io/g1
	`), refsOfC())

	// gizmoz's kind changes: the reference to a Gizmo no longer resolves to it.
	tg.g.learn(gizmoz, "Gadget", false)
	assert.Contains(t, refsOfC(), "configmaps/ns/c -[cm:ref]-> Gizmo.scope.io/ns/g1 (Unknown: no served resource known to have kind Gizmo.scope.io)")
	tg.g.learn(gizmoz, "Gizmo", false)
	assert.Contains(t, refsOfC(), "configmaps/ns/c -[cm:ref]-> gizmoz.scope.io/g1")
	assert.Zero(t, tg.Stats().Unresolved)
}

// A name the graph does not know answered like an object nothing uses: Unreferenced of
// "configmap", "cm", "ConfigMap" or a typo returned nothing and no error, and so did
// References and Referrers. Such names are errors naming the plural; a served resource
// that is not watched makes the answer incomplete.
func TestUnknownNamesAreErrors(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.g.learn(configMaps, "ConfigMap", true, "configmap", "cm")
	events := gr("", "events")
	tg.g.learn(events, "Event", true, "event", "ev")
	tg.uncovered[events] = "events is not watched"
	tg.put(configMaps, `{"metadata":{"name":"c","namespace":"ns"}}`)

	for _, name := range []string{"configmap", "cm", "ConfigMap", "ConfigMaps"} {
		_, err := tg.Unreferenced(gr("", name))
		require.ErrorIs(t, err, ErrUnknownResource, name)
		assert.ErrorContains(t, err, "configmaps", "%s: the error names the plural", name)
		_, err = tg.Graph.References(oref(gr("", name), "ns", "c"), 1)
		assert.ErrorIs(t, err, ErrUnknownResource, name)
		_, err = tg.Graph.Referrers(oref(gr("", name), "ns", "c"), 1)
		assert.ErrorIs(t, err, ErrUnknownResource, name)
		_, err = tg.EmptySelectors(gr("", name))
		assert.ErrorIs(t, err, ErrUnknownResource, name)
	}
	_, err := tg.Unreferenced(gr("nope", "nopes"))
	assert.EqualError(t, err, "refs: unknown resource: nopes.nope is not served (as discovery last said) and no rule names it")
	// "*", a rule's From for every resource, is no resource: it was known, and answered
	// nothing, incomplete.
	_, err = tg.Unreferenced(AnyResource)
	assert.EqualError(t, err, "refs: unknown resource: * is not served (as discovery last said) and no rule names it")
	_, err = tg.Graph.References(ObjectRef{Resource: "*", Name: "c"}, 1)
	assert.ErrorIs(t, err, ErrUnknownResource)
	_, err = tg.Graph.Referrers(ObjectRef{Resource: "*", Name: "c"}, 1)
	assert.ErrorIs(t, err, ErrUnknownResource)
	_, err = tg.Graph.Referrers(ObjectRef{Kind: "Nope", Name: "x"}, 1)
	assert.EqualError(t, err, "refs: unknown resource: no served resource has kind Nope")
	// By kind, a served one resolves.
	_, err = tg.Graph.Referrers(ObjectRef{Kind: "ConfigMap", Namespace: "ns", Name: "c"}, 1)
	assert.NotErrorIs(t, err, ErrUnknownResource)

	// Served and not watched: an answer, incomplete.
	unused, err := tg.Unreferenced(events)
	assert.Empty(t, unused)
	var inc *IncompleteError
	require.ErrorAs(t, err, &inc)
	assert.Contains(t, inc.Resources, events)
	_, err = tg.Graph.References(oref(events, "ns", "e"), 1)
	require.ErrorAs(t, err, &inc)
	assert.Equal(t, []schema.GroupResource{events}, inc.Resources)
	used, err := tg.Graph.References(oref(configMaps, "ns", "c"), 1)
	assert.NoError(t, err)
	assert.Empty(t, used)
}

// A CRD renamed (same group and kind, another plural): discovery reports the new plural
// before the old one goes. The kind stayed mapped to the old plural until it went, then to
// nothing: every reference by that kind stayed Unknown although a served resource had it.
func TestKindPassesToAnotherResourceThatHasIt(t *testing.T) {
	gizmos, gizmoz := gr("scope.io", "gizmos"), gr("scope.io", "gizmoz")
	tg := newTestGraph(t, nil)
	tg.g.learn(gizmos, "Gizmo", true)
	tg.put(configMaps, `{"metadata":{"name":"c","namespace":"ns","ownerReferences":[
		{"apiVersion":"scope.io/v1","kind":"Gizmo","name":"g","uid":"u"}]}}`)
	tg.g.learn(gizmoz, "Gizmo", true) // the new plural, while the old one is served
	assert.Equal(t, []string{"configmaps/ns/c -[owner]-> gizmos.scope.io/ns/g (Missing: not found)"},
		strs(tg.References(oref(configMaps, "ns", "c"), 1)))
	tg.g.forget(gizmos) // the old plural goes
	tg.put(gizmoz, `{"metadata":{"name":"g","namespace":"ns","uid":"u"}}`)
	assert.Equal(t, []string{"configmaps/ns/c -[owner]-> gizmoz.scope.io/ns/g"}, strs(tg.References(oref(configMaps, "ns", "c"), 1)))
	_, err := tg.Graph.Referrers(ObjectRef{Group: "scope.io", Kind: "Gizmo", Namespace: "ns", Name: "g"}, 1)
	assert.NoError(t, err, "the kind is served")
	assert.Zero(t, tg.Stats().Unresolved)
}

// What uses an object of a kind no served resource has yet, or of a resource discovery has
// not described: the references waiting for it. Referrers found nothing (or, by kind, an
// unknown-resource error) although objects named it.
func TestReferrersFindReferencesWaitingForTheirKind(t *testing.T) {
	gizmos := gr("example.com", "gizmos")
	rules := append(BuiltinRules(), Rule{Name: "cm:gizmo", From: configMaps, Path: "{.data.gizmo}", To: gizmos})
	tg := newTestGraph(t, rules)
	tg.put(configMaps, `{"metadata":{"name":"c","namespace":"ns","ownerReferences":[
		{"apiVersion":"example.com/v1","kind":"Widget","name":"w","uid":"u"}]},"data":{"gizmo":"g"}}`)
	byKind, err := tg.Graph.Referrers(ObjectRef{Group: "example.com", Kind: "Widget", Namespace: "ns", Name: "w"}, 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"configmaps/ns/c -[owner]-> Widget.example.com/ns/w (Unknown: no served resource known to have kind Widget.example.com)"}, strs(byKind))
	other, err := tg.Graph.Referrers(ObjectRef{Group: "example.com", Kind: "Widget", Namespace: "other", Name: "w"}, 1)
	assert.ErrorIs(t, err, ErrUnknownResource, "nothing waits for that one")
	assert.Empty(t, other)
	byResource := tg.Referrers(oref(gizmos, "ns", "g"), 1)
	assert.Equal(t, []string{"configmaps/ns/c -[cm:gizmo]-> gizmos.example.com/ns/g (Unknown: the scope of gizmos.example.com is not known (not served?))"}, strs(byResource))
}

// What names the objects of a resource that is no longer served is found however the
// query names them: by resource (with or without the kind) or by kind alone, whether the
// reference was resolved while the resource was served or waits for its kind since.
func TestReferrersOfAForgottenResourceByEitherName(t *testing.T) {
	widgets := gr("example.com", "widgets")
	tg := newTestGraph(t, nil)
	tg.g.learn(widgets, "Widget", true)
	owned := `{"metadata":{"name":"NAME","namespace":"ns","ownerReferences":[{"apiVersion":"example.com/v1","kind":"Widget","name":"w","uid":"1"}]}}`
	tg.put(configMaps, strings.Replace(owned, "NAME", "before", 1))
	tg.g.forget(widgets)
	tg.put(configMaps, strings.Replace(owned, "NAME", "after", 1))
	for _, ref := range []ObjectRef{
		{Group: "example.com", Resource: "widgets", Kind: "Widget", Namespace: "ns", Name: "w"},
		{Group: "example.com", Resource: "widgets", Namespace: "ns", Name: "w"},
		{Group: "example.com", Kind: "Widget", Namespace: "ns", Name: "w"},
	} {
		edges, err := tg.Graph.Referrers(ref, 1)
		require.NoError(t, err, "%+v", ref)
		var from []string
		for _, e := range edges {
			from = append(from, e.From.Name)
		}
		assert.Equal(t, []string{"after", "before"}, from, "%+v", ref)
	}
}

// References to a cluster-scoped object that name different namespaces are one edge; each
// namespace named is kept apart (however many edges the object has: more than 16 are
// deduplicated through a map) so that each becomes its own edge if the resource turns
// namespaced, and is forgotten with the value that named it.
func TestFoldedReferencesKeepTheirNamespaces(t *testing.T) {
	gizmos := gr("scope.io", "gizmos")
	tg := newTestGraph(t, append(BuiltinRules(),
		Rule{Name: "cm:gizmos", From: configMaps, Path: "{.data.refs[*]}", To: gizmos, NamespaceField: "namespace", NameField: "name"}))
	tg.g.learn(gizmos, "Gizmo", false)
	refsOfC := func() []string { return strs(tg.References(oref(configMaps, "ns", "c"), 1)) }
	for _, n := range []int{2, 20} {
		var vals []string
		var want []string
		for i := range n {
			vals = append(vals, fmt.Sprintf(`{"namespace":"ns%d","name":"g"}`, i%4), fmt.Sprintf(`{"name":"x%d"}`, i))
			want = append(want, fmt.Sprintf("configmaps/ns/c -[cm:gizmos]-> gizmos.scope.io/x%d (Missing: not found)", i))
		}
		tg.put(configMaps, `{"metadata":{"name":"c","namespace":"ns"},"data":{"refs":[`+strings.Join(vals, ",")+`]}}`)
		want = append(want, "configmaps/ns/c -[cm:gizmos]-> gizmos.scope.io/g (Missing: not found)")
		assert.ElementsMatch(t, want, refsOfC(), "%d values", n)
		assert.Len(t, tg.g.shadows[tg.g.entries[key{tg.g.byGR[configMaps].id, "ns", "c"}]], min(n, 4)-1, "one per other namespace")

		tg.g.learn(gizmos, "Gizmo", true)
		got := refsOfC()
		for i := range min(n, 4) {
			assert.Contains(t, got, fmt.Sprintf("configmaps/ns/c -[cm:gizmos]-> gizmos.scope.io/ns%d/g (Missing: not found)", i))
		}
		assert.Len(t, got, n+min(n, 4))
		tg.g.learn(gizmos, "Gizmo", false)
		assert.ElementsMatch(t, want, refsOfC(), "folded again")
	}
	tg.put(configMaps, `{"metadata":{"name":"c","namespace":"ns"},"data":{"refs":[{"namespace":"a","name":"g"}]}}`)
	assert.Empty(t, tg.g.shadows, "no other namespace named")
	tg.put(configMaps, `{"metadata":{"name":"c","namespace":"ns"},"data":{"refs":[{"namespace":"a","name":"g"},{"namespace":"b","name":"g"}]}}`)
	tg.del(configMaps, "ns", "c")
	assert.Empty(t, tg.g.shadows, "forgotten with the object")
}

// The other names of resources (kind, singular, short names) were kept forever: every CRD
// ever served left its names behind, so the table grew with CRD churn. A resource no
// longer served keeps them while the graph holds entries of its objects (a query may still
// name it by one: the error names the plural), and loses them with the last; a name a
// resource no longer has goes at once, or passes to another resource that has it.
func TestAliasesGoWithTheirResources(t *testing.T) {
	tg := newTestGraph(t, nil)
	baseline := len(tg.g.aliases)
	pluralIn := func(name, plural string) {
		t.Helper()
		_, err := tg.Unreferenced(gr("churn.io", name))
		require.ErrorIs(t, err, ErrUnknownResource)
		assert.ErrorContains(t, err, "by their plural: "+plural)
	}
	for i := range 50 {
		gizmos := gr("churn.io", fmt.Sprintf("gizmos%d", i))
		kind := fmt.Sprintf("Gizmo%d", i)
		tg.g.learn(gizmos, kind, true, strings.ToLower(kind), fmt.Sprintf("gz%d", i))
		tg.put(gizmos, `{"metadata":{"name":"g","namespace":"ns","uid":"u"}}`)
		tg.put(configMaps, `{"metadata":{"name":"c","namespace":"ns","ownerReferences":[
			{"apiVersion":"churn.io/v1","kind":"`+kind+`","name":"g","uid":"u"}]}}`)
		pluralIn(fmt.Sprintf("gz%d", i), resourceName(gizmos))
		// The CRD goes; a ConfigMap still names its Gizmo: its names stay.
		tg.del(gizmos, "ns", "g")
		tg.g.forget(gizmos)
		pluralIn(strings.ToLower(kind), resourceName(gizmos))
		tg.del(configMaps, "ns", "c")
		require.Len(t, tg.g.aliases, baseline, "cycle %d: nothing names gizmos any more", i)
	}

	// Names that change, and a kind two resources have (a CRD renamed).
	gizmos, gizmoz := gr("scope.io", "gizmos"), gr("scope.io", "gizmoz")
	tg.g.learn(gizmos, "Gizmo", true, "gizmo", "gz1")
	tg.g.learn(gizmos, "Gizmo", true, "gizmo", "gz2")
	assert.NotContains(t, tg.g.aliases, "gz1.scope.io")
	pluralIn2 := func(name string, plural schema.GroupResource) {
		t.Helper()
		_, err := tg.Unreferenced(gr("scope.io", name))
		assert.ErrorContains(t, err, "by their plural: "+resourceName(plural))
	}
	pluralIn2("gz2", gizmos)
	tg.g.learn(gizmoz, "Gizmo", true, "gizmo")
	tg.g.learn(gizmos, "Gizmo", true, "gizmo", "gz2") // discovery tells of gizmos again, last
	pluralIn2("gizmo", gizmos)
	tg.g.forget(gizmos)
	pluralIn2("gizmo", gizmoz)
	assert.NotContains(t, tg.g.aliases, "gz2.scope.io")
	tg.g.forget(gizmoz)
	assert.Len(t, tg.g.aliases, baseline)
}

// An owner reference from a cluster-scoped object to a namespaced kind cannot resolve (the
// garbage collector reports it, OwnerRefInvalidNamespace, and never collects the object):
// it dangles, Missing whatever is cached, and names no object of any namespace. A
// namespaced owner in another namespace than its dependent's is not the owner either.
func TestOwnerReferencesAcrossScopesAndNamespaces(t *testing.T) {
	tg := newTestGraph(t, nil)
	deployments := gr("apps", "deployments")
	tg.put(deployments, `{"metadata":{"name":"web","namespace":"a","uid":"d1"}}`)
	tg.put(clusterRoles, `{"metadata":{"name":"cr","uid":"c1","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"d1"}]}}`)
	tg.put(configMaps, `{"metadata":{"name":"cm","namespace":"b","uid":"m1","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"d1"}]}}`)
	tg.put(configMaps, `{"metadata":{"name":"cm","namespace":"a","uid":"m2","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"d1"}]}}`)
	assert.Equal(t, lines(`
		clusterroles.rbac.authorization.k8s.io/cr -[owner]-> deployments.apps/web (Missing: a cluster-scoped object cannot name a namespaced one without its namespace)
		configmaps/b/cm -[owner]-> deployments.apps/b/web (Missing: not found)
	`), strs(tg.Dangling()))
	assert.Equal(t, lines(`
		configmaps/a/cm -[owner]-> deployments.apps/a/web
	`), strs(tg.Referrers(oref(deployments, "a", "web"), 1)))
	unused, err := tg.Unreferenced(deployments)
	require.NoError(t, err)
	assert.Empty(t, unused)
	tg.del(clusterRoles, "", "cr")
	assert.Len(t, tg.Dangling(), 1)
	assert.Equal(t, 1, tg.Stats().Missing)
}

// An HPA's Object metrics name the object they describe (an Ingress's requests per second),
// by apiVersion, kind and name, as its scale target does.
func TestHPAObjectMetricsNameTheirObjects(t *testing.T) {
	tg := newTestGraph(t, nil)
	hpas := gr("autoscaling", "horizontalpodautoscalers")
	tg.put(hpas, `{"metadata":{"name":"hpa","namespace":"ns"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},
	  "metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}},
	    {"type":"Object","object":{"describedObject":{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","name":"main"},
	      "metric":{"name":"requests-per-second"},"target":{"type":"Value","value":"10k"}}}]}}`)
	tg.put(ingresses, `{"metadata":{"name":"main","namespace":"ns"}}`)
	assert.Equal(t, lines(`
		horizontalpodautoscalers.autoscaling/ns/hpa -[horizontalpodautoscalers.autoscaling:metric-object]-> ingresses.networking.k8s.io/ns/main
		horizontalpodautoscalers.autoscaling/ns/hpa -[horizontalpodautoscalers.autoscaling:target]-> deployments.apps/ns/web (Missing: not found)
	`), strs(tg.References(oref(hpas, "ns", "hpa"), 1)))
}

// A cluster-scoped object that names a namespaced kind without a namespace names nothing;
// but once the resource comes back cluster-scoped (its CRD deleted and created again) it
// names the object of that name, as a graph that read it then finds. The graph dropped such
// a reference when it read it, and when an edge it had turned into one, so that the edge
// never came (back): the target looked unused and the source used nothing.
func TestClusterScopedReferenceFollowsItsTargetsScope(t *testing.T) {
	targets, holders := gr("void.io", "targets"), gr("void.io", "holders")
	rules := append(BuiltinRules(),
		Rule{Name: "holders:target", From: holders, Path: "{.spec.target}", To: targets},
		Rule{Name: "holders:ref", From: holders, Path: "{.spec.ref}", To: schema.GroupResource{Group: "void.io"},
			KindField: "kind", NameField: "name"})
	tg := newTestGraph(t, rules)
	tg.g.learn(holders, "Holder", false)
	tg.g.learn(targets, "Target", true)
	tg.put(holders, `{"metadata":{"name":"h"},"spec":{"target":"t","ref":{"kind":"Target","name":"t"}}}`)
	refsOfH := func() []string { return strs(tg.References(oref(holders, "", "h"), 1)) }
	nothing := func() {
		t.Helper()
		assert.Empty(t, refsOfH())
		assert.Empty(t, strs(tg.Dangling()))
		assert.Empty(t, strs(tg.Referrers(oref(targets, "ns", "t"), 1)))
		assert.Zero(t, tg.Stats().Unresolved)
		assert.Zero(t, tg.Stats().Edges)
	}
	nothing()

	// The CRD is deleted and created again cluster-scoped.
	tg.g.forget(targets)
	tg.g.learn(targets, "Target", false)
	assert.Equal(t, lines(`
		holders.void.io/h -[holders:ref]-> targets.void.io/t (Missing: not found)
		holders.void.io/h -[holders:target]-> targets.void.io/t (Missing: not found)
	`), refsOfH())
	tg.put(targets, `{"metadata":{"name":"t"}}`)
	unused, err := tg.Unreferenced(targets)
	require.NoError(t, err)
	assert.Empty(t, unused)
	assert.Len(t, tg.Referrers(oref(targets, "", "t"), 1), 2)

	// And namespaced again: the edges go, and come back with the cluster scope.
	tg.del(targets, "", "t")
	tg.g.forget(targets)
	tg.g.learn(targets, "Target", true)
	nothing()
	tg.g.forget(targets)
	tg.g.learn(targets, "Target", false)
	assert.Len(t, refsOfH(), 2)

	// The holder deleted leaves nothing waiting.
	tg.g.learn(targets, "Target", true)
	tg.del(holders, "", "h")
	tg.g.mu.RLock()
	defer tg.g.mu.RUnlock()
	assert.Empty(t, tg.g.pending)
}

// A rule that says its targets are cluster-scoped (NamespaceCluster) while the resource it
// names is namespaced references nothing, from a namespaced object too; the reason says
// the rule is at fault, not the object's scope.
func TestClusterRuleToANamespacedResource(t *testing.T) {
	rules := append(BuiltinRules(), Rule{Name: "cm:secret", From: configMaps, Path: "{.data.secret}",
		To: gr("", "secrets"), Namespace: NamespaceCluster})
	tg := newTestGraph(t, rules)
	tg.put(gr("", "secrets"), `{"metadata":{"name":"s","namespace":"a","uid":"s1"}}`)
	tg.put(configMaps, `{"metadata":{"name":"cm","namespace":"a","uid":"m1"},"data":{"secret":"s"}}`)
	assert.Equal(t, lines(`
		configmaps/a/cm -[cm:secret]-> secrets/s (Missing: the rule says its targets are cluster-scoped (Namespace: Cluster), and secrets are namespaced)
	`), strs(tg.Dangling()))
}
