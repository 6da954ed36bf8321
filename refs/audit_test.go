package refs_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/refs"
)

// auditRules are rules a user would write for cert-manager, External Secrets and Argo CD.
const auditRules = `
- name: certificates:secret
  from: certificates.cert-manager.io
  path: "{.spec.secretName}"
  to: secrets
- name: certificates:issuer
  from: certificates.cert-manager.io
  path: "{.spec.issuerRef}"
  toGroup: cert-manager.io
  nameField: name
  kindField: kind
  groupField: group
  defaultKind: Issuer
- name: issuers:ca-secret
  from: issuers.cert-manager.io
  path: "{.spec.ca.secretName}"
  to: secrets
- name: externalsecrets:target
  from: externalsecrets.external-secrets.io
  path: "{.spec.target.name}"
  to: secrets
- name: externalsecrets:store
  from: externalsecrets.external-secrets.io
  path: "{.spec.secretStoreRef}"
  toGroup: external-secrets.io
  nameField: name
  kindField: kind
  kinds: [SecretStore, ClusterSecretStore]
  defaultKind: SecretStore
- name: applications:project
  from: applications.argoproj.io
  path: "{.spec.project}"
  to: appprojects.argoproj.io
- name: applications:destination-namespace
  from: applications.argoproj.io
  path: "{.spec.destination.namespace}"
  to: namespaces
`

// auditCRD describes a CRD of the audit: group, kind, plural, scope.
type auditCRD struct {
	group, kind, plural string
	namespaced          bool
}

var auditCRDs = []auditCRD{
	{"cert-manager.io", "Certificate", "certificates", true},
	{"cert-manager.io", "Issuer", "issuers", true},
	{"cert-manager.io", "ClusterIssuer", "clusterissuers", false},
	{"cert-manager.io", "VaultIssuer", "vaultissuers", true},
	{"external-secrets.io", "ExternalSecret", "externalsecrets", true},
	{"external-secrets.io", "SecretStore", "secretstores", true},
	{"external-secrets.io", "ClusterSecretStore", "clustersecretstores", false},
	{"argoproj.io", "Application", "applications", true},
	{"argoproj.io", "AppProject", "appprojects", true},
}

func (c auditCRD) gvr() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: c.group, Version: "v1", Resource: c.plural}
}

func (c auditCRD) install(t *testing.T) {
	crd := testenv.NewCRD(c.group, c.kind, c.plural)
	if !c.namespaced {
		crd.Spec.Scope = apiextv1.ClusterScoped
	}
	cp.InstallCRD(t, crd)
}

func crdOf(kind string) auditCRD {
	for _, c := range auditCRDs {
		if c.kind == kind {
			return c
		}
	}
	panic(kind)
}

// oracleRes is a resource the oracle lists.
type oracleRes struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
}

var coreAudit = []oracleRes{
	{gvr("", "v1", "pods"), "Pod", true},
	{gvr("", "v1", "services"), "Service", true},
	{gvr("", "v1", "secrets"), "Secret", true},
	{gvr("", "v1", "configmaps"), "ConfigMap", true},
	{gvr("", "v1", "serviceaccounts"), "ServiceAccount", true},
	{gvr("", "v1", "namespaces"), "Namespace", false},
	{gvr("policy", "v1", "poddisruptionbudgets"), "PodDisruptionBudget", true},
}

// oracle computes, from the apiserver's objects, the edges the graph should hold among the
// objects of the audit's namespaces and the cluster-scoped objects of its suffix.
type oracle struct {
	t      *testing.T
	nss    []string // namespaces of the audit
	suffix string   // cluster-scoped objects of the audit end with it
	res    []oracleRes
	byKind map[schema.GroupKind]oracleRes
	objs   map[string]*unstructured.Unstructured // by node key
	edges  []oEdge
}

type oEdge struct {
	from, to string // node keys: "resource.group/ns/name"; Unknown: "?group/name"
	rule     string
	state    refs.State
	follow   bool // References go on through it (target present, UID as required)
	rfollow  bool // Referrers go on through it (unless the target is present with another UID)
}

func (e oEdge) String() string { return fmt.Sprintf("%s -[%s]-> %s %s", e.from, e.rule, e.to, e.state) }

func nodeKey(group, resource, ns, name string) string {
	return refs.ObjectRef{Group: group, Resource: resource, Namespace: ns, Name: name}.String()
}

// installed lists the audit CRDs the server serves now.
func installedCRDs(t *testing.T) []auditCRD {
	var out []auditCRD
	client := cp.APIExtensions(t).ApiextensionsV1().CustomResourceDefinitions()
	for _, c := range auditCRDs {
		got, err := client.Get(context.Background(), c.plural+"."+c.group, metav1.GetOptions{})
		if err == nil && got.DeletionTimestamp == nil {
			c.namespaced = got.Spec.Scope == apiextv1.NamespaceScoped
			c.kind = got.Spec.Names.Kind
			out = append(out, c)
		}
	}
	return out
}

func newOracle(t *testing.T, nss []string, suffix string) *oracle {
	o := &oracle{t: t, nss: nss, suffix: suffix, objs: map[string]*unstructured.Unstructured{},
		byKind: map[schema.GroupKind]oracleRes{}}
	o.res = append(o.res, coreAudit...)
	for _, c := range installedCRDs(t) {
		o.res = append(o.res, oracleRes{c.gvr(), c.kind, c.namespaced})
	}
	for _, r := range o.res {
		o.byKind[schema.GroupKind{Group: r.gvr.Group, Kind: r.kind}] = r
		o.list(r)
	}
	o.compute()
	return o
}

func (o *oracle) list(r oracleRes) {
	dyn := cp.Dynamic(o.t).Resource(r.gvr)
	var items []unstructured.Unstructured
	if r.namespaced {
		for _, ns := range o.nss {
			l, err := dyn.Namespace(ns).List(context.Background(), metav1.ListOptions{})
			require.NoError(o.t, err)
			items = append(items, l.Items...)
		}
	} else {
		l, err := dyn.List(context.Background(), metav1.ListOptions{})
		require.NoError(o.t, err)
		for _, it := range l.Items {
			if strings.HasSuffix(it.GetName(), o.suffix) || slices.Contains(o.nss, it.GetName()) {
				items = append(items, it)
			}
		}
	}
	for i := range items {
		u := &items[i]
		o.objs[nodeKey(r.gvr.Group, r.gvr.Resource, u.GetNamespace(), u.GetName())] = u
	}
}

// target returns the edge to the object of kind gk named ns/name, requiring uid if set.
func (o *oracle) target(from, rule string, gk schema.GroupKind, ns, name, uid string) oEdge {
	r, ok := o.byKind[gk]
	if !ok {
		return oEdge{from: from, rule: rule, to: "?" + gk.Group + "/" + name, state: refs.Unknown}
	}
	if !r.namespaced {
		ns = ""
	}
	to := nodeKey(r.gvr.Group, r.gvr.Resource, ns, name)
	u, present := o.objs[to]
	switch {
	case !present:
		return oEdge{from: from, rule: rule, to: to, state: refs.Missing, rfollow: true}
	case uid != "" && string(u.GetUID()) != uid:
		return oEdge{from: from, rule: rule, to: to, state: refs.Missing}
	}
	return oEdge{from: from, rule: rule, to: to, state: refs.Present, follow: true, rfollow: true}
}

func nested(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

func (o *oracle) compute() {
	keys := make([]string, 0, len(o.objs))
	for k := range o.objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	add := func(e oEdge) {
		for _, x := range o.edges {
			if x.from == e.from && x.rule == e.rule && x.to == e.to {
				return
			}
		}
		o.edges = append(o.edges, e)
	}
	for _, k := range keys {
		u := o.objs[k]
		ns := u.GetNamespace()
		gk := u.GroupVersionKind().GroupKind()
		for _, ow := range u.GetOwnerReferences() {
			gv, _ := schema.ParseGroupVersion(ow.APIVersion)
			add(o.target(k, "owner", schema.GroupKind{Group: gv.Group, Kind: ow.Kind}, ns, ow.Name, string(ow.UID)))
		}
		named := func(rule, kind, group, name string) {
			if name != "" {
				add(o.target(k, rule, schema.GroupKind{Group: group, Kind: kind}, ns, name, ""))
			}
		}
		switch gk.Kind {
		case "Pod":
			named("pods:serviceaccount", "ServiceAccount", "", nested(u, "spec", "serviceAccountName"))
		case "Service":
			sel, _, _ := unstructured.NestedStringMap(u.Object, "spec", "selector")
			if len(sel) == 0 || nested(u, "spec", "type") == "ExternalName" {
				continue
			}
			for _, pk := range keys {
				p := o.objs[pk]
				if p.GetKind() == "Pod" && p.GetNamespace() == ns && labels.SelectorFromSet(sel).Matches(labels.Set(p.GetLabels())) {
					add(oEdge{from: k, rule: "services:selector", to: pk, state: refs.Present, follow: true, rfollow: true})
				}
			}
		case "PodDisruptionBudget":
			m, found, _ := unstructured.NestedMap(u.Object, "spec", "selector")
			if !found {
				continue
			}
			var ls metav1.LabelSelector
			require.NoError(o.t, runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ls))
			sel, err := metav1.LabelSelectorAsSelector(&ls)
			require.NoError(o.t, err)
			for _, pk := range keys {
				p := o.objs[pk]
				if p.GetKind() == "Pod" && p.GetNamespace() == ns && sel.Matches(labels.Set(p.GetLabels())) {
					add(oEdge{from: k, rule: "poddisruptionbudgets.policy:selector", to: pk, state: refs.Present, follow: true, rfollow: true})
				}
			}
		case "Certificate":
			named("certificates:secret", "Secret", "", nested(u, "spec", "secretName"))
			kind, group := nested(u, "spec", "issuerRef", "kind"), nested(u, "spec", "issuerRef", "group")
			if kind == "" {
				kind = "Issuer"
			}
			if group == "" {
				group = "cert-manager.io"
			}
			named("certificates:issuer", kind, group, nested(u, "spec", "issuerRef", "name"))
		case "Issuer":
			named("issuers:ca-secret", "Secret", "", nested(u, "spec", "ca", "secretName"))
		case "ExternalSecret":
			named("externalsecrets:target", "Secret", "", nested(u, "spec", "target", "name"))
			kind := nested(u, "spec", "secretStoreRef", "kind")
			if kind == "" {
				kind = "SecretStore"
			}
			if kind == "SecretStore" || kind == "ClusterSecretStore" {
				named("externalsecrets:store", kind, "external-secrets.io", nested(u, "spec", "secretStoreRef", "name"))
			}
		case "Application":
			named("applications:project", "AppProject", "argoproj.io", nested(u, "spec", "project"))
			named("applications:destination-namespace", "Namespace", "", nested(u, "spec", "destination", "namespace"))
		}
	}
}

// walk is the oracle's References (reverse false) or Referrers (reverse true) of start.
func (o *oracle) walk(start string, depth int, reverse bool) []string {
	seen := map[string]bool{start: true}
	frontier := []string{start}
	var out []string
	for d := 1; len(frontier) > 0 && (depth < 1 || d <= depth); d++ {
		var next []string
		for _, n := range frontier {
			for _, e := range o.edges {
				near, far, follow := e.from, e.to, e.follow
				if reverse {
					near, far, follow = e.to, e.from, e.rfollow
				}
				if near != n {
					continue
				}
				out = append(out, fmt.Sprintf("%d %s", d, e))
				if follow && !seen[far] {
					seen[far] = true
					next = append(next, far)
				}
			}
		}
		frontier = next
	}
	sort.Strings(out)
	return out
}

// gEdge renders a graph edge as the oracle does.
func gEdge(e refs.Edge) string {
	to := e.To.String()
	if e.State == refs.Unknown {
		to = "?" + e.To.Group + "/" + e.To.Name
	}
	return fmt.Sprintf("%s -[%s]-> %s %s", e.From, e.Rule, to, e.State)
}

func gWalk(edges []refs.Edge) []string {
	out := make([]string, 0, len(edges))
	for _, e := range edges {
		out = append(out, fmt.Sprintf("%d %s", e.Depth, gEdge(e)))
	}
	sort.Strings(out)
	return out
}

// refOf parses a node key back into an ObjectRef.
func refOfKey(k string) refs.ObjectRef {
	parts := strings.Split(k, "/")
	res, group, _ := strings.Cut(parts[0], ".")
	r := refs.ObjectRef{Group: group, Resource: res, Name: parts[len(parts)-1]}
	if len(parts) == 3 {
		r.Namespace = parts[1]
	}
	return r
}

// mine reports whether a graph edge's source is one of the audit's objects.
func (o *oracle) mine(r refs.ObjectRef) bool {
	return slices.Contains(o.nss, r.Namespace) || (r.Namespace == "" && (strings.HasSuffix(r.Name, o.suffix) || slices.Contains(o.nss, r.Name)))
}

// byKindReferrers compares Referrers(r, 1) of a reference by kind with the oracle's.
func (o *oracle) byKindReferrers(g *refs.Graph, r refs.ObjectRef) []string {
	var want []string
	if res, ok := o.byKind[schema.GroupKind{Group: r.Group, Kind: r.Kind}]; ok {
		ns := r.Namespace
		if !res.namespaced {
			ns = ""
		}
		want = o.walk(nodeKey(res.gvr.Group, res.gvr.Resource, ns, r.Name), 1, true)
	} else {
		for _, e := range o.edges {
			if e.to == "?"+r.Group+"/"+r.Name && (r.Namespace == "" || strings.Contains(e.from, "/"+r.Namespace+"/")) {
				want = append(want, fmt.Sprintf("1 %s", e))
			}
		}
		sort.Strings(want)
	}
	edges, err := g.Referrers(r, 1)
	var bad []string
	if err != nil && len(want) > 0 {
		bad = append(bad, fmt.Sprintf("Referrers(kind %s): %v", r, err))
	}
	if got := gWalk(edges); !equal(want, got) {
		bad = append(bad, fmt.Sprintf("Referrers(kind %s, 1):\n want %q\n got  %q", r, want, got))
	}
	return bad
}

// namespaced reports whether the node key k is of a namespaced resource.
func (o *oracle) namespaced(k string) bool {
	r := refOfKey(k)
	for _, x := range o.res {
		if x.gvr.GroupResource() == r.GroupResource() {
			return x.namespaced
		}
	}
	return false
}

// diff compares the graph with the oracle; it returns the differences, none if they agree.
func (o *oracle) diff(g *refs.Graph, extra []refs.ObjectRef) []string {
	var bad []string
	// Dangling.
	var want, got []string
	for _, e := range o.edges {
		if e.state != refs.Present {
			want = append(want, e.String())
		}
	}
	for _, e := range g.Dangling() {
		if o.mine(e.From) {
			got = append(got, gEdge(e))
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if !equal(want, got) {
		bad = append(bad, fmt.Sprintf("Dangling:\n want %q\n got  %q", want, got))
	}
	// References and Referrers of every object and every target, at several depths.
	nodes := map[string]bool{}
	for k := range o.objs {
		nodes[k] = true
	}
	for _, e := range o.edges {
		// A cluster-scoped object's owner reference to a namespaced kind names an object of no
		// namespace, which a query cannot name (ErrNamespaceRequired, as documented).
		if !strings.HasPrefix(e.to, "?") && !(strings.Count(e.to, "/") == 1 && o.namespaced(e.to)) {
			nodes[e.to] = true
		}
	}
	for _, r := range extra {
		if r.Resource == "" {
			bad = append(bad, o.byKindReferrers(g, r)...)
			continue
		}
		nodes[r.String()] = true
	}
	for n := range nodes {
		ref := refOfKey(n)
		for _, depth := range []int{0, 1, 2, 50} {
			if _, ok := o.objs[n]; ok {
				edges, err := g.References(ref, depth)
				if err != nil {
					bad = append(bad, fmt.Sprintf("References(%s, %d): %v", n, depth, err))
				}
				if w, gt := o.walk(n, depth, false), gWalk(edges); !equal(w, gt) {
					bad = append(bad, fmt.Sprintf("References(%s, %d):\n want %q\n got  %q", n, depth, w, gt))
				}
			}
			edges, err := g.Referrers(ref, depth)
			if err != nil {
				bad = append(bad, fmt.Sprintf("Referrers(%s, %d): %v", n, depth, err))
			}
			if w, gt := o.walk(n, depth, true), gWalk(edges); !equal(w, gt) {
				bad = append(bad, fmt.Sprintf("Referrers(%s, %d):\n want %q\n got  %q", n, depth, w, gt))
			}
		}
	}
	// Unreferenced of every resource.
	for _, r := range o.res {
		gr := r.gvr.GroupResource()
		var want, got []string
		for k, u := range o.objs {
			if u.GetKind() != r.kind || u.GroupVersionKind().Group != r.gvr.Group {
				continue
			}
			used := false // an edge that requires another UID is no use of this object
			for _, e := range o.edges {
				used = used || (e.to == k && e.state == refs.Present)
			}
			if !used {
				want = append(want, k)
			}
		}
		objs, err := g.Unreferenced(gr)
		if err != nil {
			bad = append(bad, fmt.Sprintf("Unreferenced(%s): %v", gr, err))
		}
		for _, x := range objs {
			if o.mine(x) {
				got = append(got, x.String())
			}
		}
		sort.Strings(want)
		sort.Strings(got)
		if !equal(want, got) {
			bad = append(bad, fmt.Sprintf("Unreferenced(%s):\n want %q\n got  %q", gr, want, got))
		}
	}
	sort.Strings(bad)
	return bad
}

// agree waits until the graph agrees with a fresh oracle, then fails with the differences.
func agree(t *testing.T, g *refs.Graph, nss []string, suffix, step string, extra ...refs.ObjectRef) {
	t.Helper()
	var bad []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		o := newOracle(t, nss, suffix)
		if bad = o.diff(g, extra); len(bad) == 0 || time.Now().After(deadline) {
			if len(bad) == 0 {
				t.Logf("%s: agree (%d objects, %d edges)", step, len(o.objs), len(o.edges))
			}
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(bad) > 0 {
		t.Errorf("%s: graph and oracle disagree:\n%s", step, strings.Join(bad, "\n"))
	}
}

type auditEnv struct {
	t        *testing.T
	c        string
	ns       []string
	argo     string
	g        *refs.Graph
	creating []string
}

func (a *auditEnv) create(gv schema.GroupVersionResource, js string) *unstructured.Unstructured {
	a.t.Helper()
	js = strings.NewReplacer("{c}", a.c, "{ns1}", a.ns[0], "{ns2}", a.ns[1], "{argo}", a.argo).Replace(js)
	u := &unstructured.Unstructured{}
	require.NoError(a.t, u.UnmarshalJSON([]byte(js)), js)
	res := cp.Dynamic(a.t).Resource(gv)
	var got *unstructured.Unstructured
	var err error
	if u.GetNamespace() != "" {
		got, err = res.Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{})
	} else {
		got, err = res.Create(context.Background(), u, metav1.CreateOptions{})
		a.t.Cleanup(func() { _ = res.Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}) })
	}
	require.NoError(a.t, err, js)
	return got
}

func (a *auditEnv) update(gv schema.GroupVersionResource, ns, name string, mutate func(u *unstructured.Unstructured)) {
	a.t.Helper()
	updateObject(a.t, gv, ns, name, mutate)
}

func (a *auditEnv) del(gv schema.GroupVersionResource, ns, name string) {
	a.t.Helper()
	err := cp.Dynamic(a.t).Resource(gv).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
	if !apierrors.IsNotFound(err) {
		require.NoError(a.t, err)
	}
}

func (a *auditEnv) agree(step string, extra ...refs.ObjectRef) {
	a.t.Helper()
	agree(a.t, a.g, append([]string{a.argo}, a.ns...), a.c, step, extra...)
}

func auditObj(kind, group string, rest string) string {
	av := "v1"
	if group != "" {
		av = group + "/v1"
	}
	return `{"apiVersion":"` + av + `","kind":"` + kind + `",` + rest + `}`
}

// TestAuditRealisticCRDs checks the graph against an oracle computed from the apiserver's
// objects, through the churn users cause.
func TestAuditRealisticCRDs(t *testing.T) { auditRealisticCRDs(t, true) }

// TestAuditRealisticCRDsInstalledAfterStart starts the graph before the CRDs exist.
func TestAuditRealisticCRDsInstalledAfterStart(t *testing.T) { auditRealisticCRDs(t, false) }

func auditRealisticCRDs(t *testing.T, crdsFirst bool) {
	rules, err := refs.ParseRules([]byte(auditRules))
	require.NoError(t, err)
	var g *refs.Graph
	if !crdsFirst {
		g = startGraph(t, refs.Options{Rules: append(refs.BuiltinRules(), rules...)})
	}
	for _, c := range auditCRDs {
		if c.kind != "VaultIssuer" {
			c.install(t)
		}
	}
	t.Cleanup(func() {
		for _, c := range auditCRDs {
			cp.DeleteCRD(t, c.plural+"."+c.group)
		}
	})
	if crdsFirst {
		g = startGraph(t, refs.Options{Rules: append(refs.BuiltinRules(), rules...)})
	}
	a := &auditEnv{t: t, g: g}
	a.ns = []string{cp.Namespace(t), cp.Namespace(t)}
	a.argo = cp.Namespace(t)
	a.c = a.ns[0][strings.LastIndexByte(a.ns[0], '-'):]
	cert, issuer, cissuer := crdOf("Certificate").gvr(), crdOf("Issuer").gvr(), crdOf("ClusterIssuer").gvr()
	es, store, cstore := crdOf("ExternalSecret").gvr(), crdOf("SecretStore").gvr(), crdOf("ClusterSecretStore").gvr()
	app, proj := crdOf("Application").gvr(), crdOf("AppProject").gvr()

	// The same names in two namespaces.
	for _, ns := range []string{"{ns1}", "{ns2}"} {
		a.create(secretsR, auditObj("Secret", "", `"metadata":{"name":"tls","namespace":"`+ns+`"}`))
		a.create(secretsR, auditObj("Secret", "", `"metadata":{"name":"ca-key","namespace":"`+ns+`"}`))
		a.create(cert, auditObj("Certificate", "cert-manager.io", `"metadata":{"name":"web","namespace":"`+ns+`"},
		  "spec":{"secretName":"tls","issuerRef":{"name":"ca","kind":"Issuer","group":"cert-manager.io"}}`))
		a.create(cert, auditObj("Certificate", "cert-manager.io", `"metadata":{"name":"api","namespace":"`+ns+`"},
		  "spec":{"secretName":"api-tls","issuerRef":{"name":"root{c}","kind":"ClusterIssuer"}}`))
		a.create(cert, auditObj("Certificate", "cert-manager.io", `"metadata":{"name":"vault","namespace":"`+ns+`"},
		  "spec":{"secretName":"vault-tls","issuerRef":{"name":"v","kind":"VaultIssuer"}}`))
		a.create(cert, auditObj("Certificate", "cert-manager.io", `"metadata":{"name":"pca","namespace":"`+ns+`"},
		  "spec":{"secretName":"tls","issuerRef":{"name":"pca","kind":"AWSPCAClusterIssuer","group":"awspca.cert-manager.io"}}`))
		a.create(es, auditObj("ExternalSecret", "external-secrets.io", `"metadata":{"name":"db","namespace":"`+ns+`"},
		  "spec":{"target":{"name":"db-creds"},"secretStoreRef":{"name":"vault"}}`))
		a.create(es, auditObj("ExternalSecret", "external-secrets.io", `"metadata":{"name":"db2","namespace":"`+ns+`"},
		  "spec":{"target":{"name":"db-creds2"},"secretStoreRef":{"name":"global{c}","kind":"ClusterSecretStore"}}`))
		a.create(es, auditObj("ExternalSecret", "external-secrets.io", `"metadata":{"name":"other","namespace":"`+ns+`"},
		  "spec":{"target":{"name":"x"},"secretStoreRef":{"name":"y","kind":"Fake"}}`))
		a.create(podsR, auditObj("Pod", "", `"metadata":{"name":"web-1","namespace":"`+ns+`","labels":{"app":"web","tier":"fe"}},
		  "spec":{"serviceAccountName":"web","containers":[{"name":"c","image":"i"}]}`))
		a.create(podsR, auditObj("Pod", "", `"metadata":{"name":"api-1","namespace":"`+ns+`","labels":{"app":"api"}},
		  "spec":{"containers":[{"name":"c","image":"i"}]}`))
		a.create(servicesR, auditObj("Service", "", `"metadata":{"name":"web","namespace":"`+ns+`"},
		  "spec":{"selector":{"app":"web"},"ports":[{"port":80}]}`))
	}
	a.create(issuer, auditObj("Issuer", "cert-manager.io", `"metadata":{"name":"ca","namespace":"{ns1}"},"spec":{"ca":{"secretName":"ca-key"}}`))
	a.create(cissuer, auditObj("ClusterIssuer", "cert-manager.io", `"metadata":{"name":"root{c}"},"spec":{"ca":{"secretName":"ca-key"}}`))
	a.create(store, auditObj("SecretStore", "external-secrets.io", `"metadata":{"name":"vault","namespace":"{ns1}"},"spec":{}`))
	a.create(cstore, auditObj("ClusterSecretStore", "external-secrets.io", `"metadata":{"name":"global{c}"},"spec":{}`))
	a.create(proj, auditObj("AppProject", "argoproj.io", `"metadata":{"name":"default","namespace":"{argo}"},"spec":{}`))
	a.create(app, auditObj("Application", "argoproj.io", `"metadata":{"name":"a1","namespace":"{argo}"},
	  "spec":{"project":"default","destination":{"namespace":"{ns1}"}}`))
	a.create(app, auditObj("Application", "argoproj.io", `"metadata":{"name":"a2","namespace":"{argo}"},
	  "spec":{"project":"team","destination":{"namespace":"gone{c}"}}`))
	// An ownerReferences loop of three ConfigMaps.
	var uids []string
	for _, n := range []string{"l0", "l1", "l2"} {
		u := a.create(configMapsR, auditObj("ConfigMap", "", `"metadata":{"name":"`+n+`","namespace":"{ns1}"}`))
		uids = append(uids, string(u.GetUID()))
	}
	for i, n := range []string{"l0", "l1", "l2"} {
		j := (i + 1) % 3
		a.update(configMapsR, a.ns[0], n, func(u *unstructured.Unstructured) {
			u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: fmt.Sprintf("l%d", j), UID: typesUID(uids[j])}})
		})
	}
	gone := refs.ObjectRef{Resource: "secrets", Namespace: a.ns[0], Name: "never"}
	vault := refs.ObjectRef{Group: "cert-manager.io", Kind: "VaultIssuer", Namespace: a.ns[0], Name: "v"}
	pca := refs.ObjectRef{Group: "awspca.cert-manager.io", Kind: "AWSPCAClusterIssuer", Name: "pca"}
	a.agree("initial", gone, vault, pca)

	t.Run("referenced secret deleted and re-created", func(t *testing.T) {
		a.del(secretsR, a.ns[0], "tls")
		a.agree("tls deleted")
		a.create(secretsR, auditObj("Secret", "", `"metadata":{"name":"tls","namespace":"{ns1}"}`))
		a.agree("tls re-created")
	})
	t.Run("owner in loop deleted and re-created with a new UID", func(t *testing.T) {
		a.del(configMapsR, a.ns[0], "l1")
		a.agree("l1 deleted", refs.ObjectRef{Resource: "configmaps", Namespace: a.ns[0], Name: "l1"})
		a.create(configMapsR, auditObj("ConfigMap", "", `"metadata":{"name":"l1","namespace":"{ns1}"}`))
		a.agree("l1 re-created")
	})
	t.Run("rule fields changed", func(t *testing.T) {
		a.update(cert, a.ns[0], "web", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "ca-key", "spec", "secretName")
			_ = unstructured.SetNestedField(u.Object, "ClusterIssuer", "spec", "issuerRef", "kind")
			_ = unstructured.SetNestedField(u.Object, "root"+a.c, "spec", "issuerRef", "name")
		})
		a.update(cert, a.ns[1], "web", func(u *unstructured.Unstructured) {
			unstructured.RemoveNestedField(u.Object, "spec", "issuerRef", "kind")
			unstructured.RemoveNestedField(u.Object, "spec", "issuerRef", "group")
		})
		a.update(es, a.ns[0], "db", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "ClusterSecretStore", "spec", "secretStoreRef", "kind")
			_ = unstructured.SetNestedField(u.Object, "global"+a.c, "spec", "secretStoreRef", "name")
		})
		a.update(es, a.ns[1], "other", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "SecretStore", "spec", "secretStoreRef", "kind")
		})
		a.update(app, a.argo, "a2", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, a.ns[1], "spec", "destination", "namespace")
			_ = unstructured.SetNestedField(u.Object, "default", "spec", "project")
		})
		a.agree("fields changed")
	})
	t.Run("labels and selectors changed", func(t *testing.T) {
		a.update(podsR, a.ns[0], "api-1", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "web"}) })
		a.update(podsR, a.ns[0], "web-1", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "old"}) })
		a.update(servicesR, a.ns[1], "web", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"app": "api"}, "spec", "selector")
		})
		a.agree("labels changed")
		a.update(servicesR, a.ns[1], "web", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "ExternalName", "spec", "type")
			_ = unstructured.SetNestedField(u.Object, "example.com", "spec", "externalName")
		})
		a.agree("ExternalName")
	})
	t.Run("kind installed later", func(t *testing.T) {
		crdOf("VaultIssuer").install(a.t)
		a.agree("VaultIssuer installed", vault)
		a.create(crdOf("VaultIssuer").gvr(), auditObj("VaultIssuer", "cert-manager.io", `"metadata":{"name":"v","namespace":"{ns2}"},"spec":{}`))
		a.agree("VaultIssuer created")
	})
	t.Run("CRD deleted while referenced, then re-created", func(t *testing.T) {
		cp.DeleteCRD(t, "issuers.cert-manager.io")
		cp.DeleteCRD(t, "clustersecretstores.external-secrets.io")
		a.agree("CRDs deleted", refs.ObjectRef{Group: "cert-manager.io", Resource: "issuers", Namespace: a.ns[0], Name: "ca"},
			refs.ObjectRef{Group: "cert-manager.io", Kind: "Issuer", Namespace: a.ns[0], Name: "ca"},
			refs.ObjectRef{Group: "external-secrets.io", Kind: "ClusterSecretStore", Name: "global" + a.c})
		crdOf("Issuer").install(a.t)
		crdOf("ClusterSecretStore").install(a.t)
		a.agree("CRDs re-created")
		a.create(issuer, auditObj("Issuer", "cert-manager.io", `"metadata":{"name":"ca","namespace":"{ns2}"},"spec":{"ca":{"secretName":"ca-key"}}`))
		a.create(cstore, auditObj("ClusterSecretStore", "external-secrets.io", `"metadata":{"name":"global{c}"},"spec":{}`))
		a.agree("objects re-created")
	})
	t.Run("selectors emptied, selected Pods and selectors deleted", func(t *testing.T) {
		pdbR := gvr("policy", "v1", "poddisruptionbudgets")
		a.create(pdbR, auditObj("PodDisruptionBudget", "policy", `"metadata":{"name":"web","namespace":"{ns1}"},
		  "spec":{"minAvailable":1,"selector":{"matchExpressions":[{"key":"app","operator":"In","values":["web","old"]}]}}`))
		a.create(pdbR, auditObj("PodDisruptionBudget", "policy", `"metadata":{"name":"all","namespace":"{ns1}"},
		  "spec":{"minAvailable":1,"selector":{}}`))
		a.create(pdbR, auditObj("PodDisruptionBudget", "policy", `"metadata":{"name":"notweb","namespace":"{ns1}"},
		  "spec":{"minAvailable":1,"selector":{"matchExpressions":[{"key":"app","operator":"NotIn","values":["web"]},{"key":"tier","operator":"DoesNotExist"}]}}`))
		a.agree("PDBs created")
		a.update(podsR, a.ns[0], "web-1", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "web", "tier": "x"}) })
		a.update(servicesR, a.ns[0], "web", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedStringMap(u.Object, map[string]string{}, "spec", "selector")
		})
		a.agree("service selector emptied")
		a.update(servicesR, a.ns[0], "web", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"tier": "x"}, "spec", "selector")
		})
		a.del(podsR, a.ns[0], "api-1")
		a.agree("selected pod deleted")
		a.create(podsR, auditObj("Pod", "", `"metadata":{"name":"api-1","namespace":"{ns1}","labels":{"tier":"x","app":"web"}},
		  "spec":{"containers":[{"name":"c","image":"i"}]}`))
		a.del(pdbR, a.ns[0], "web")
		a.agree("pod re-created, PDB deleted")
	})
	t.Run("self-owned object and secret owned by a certificate whose CRD goes", func(t *testing.T) {
		u := a.create(configMapsR, auditObj("ConfigMap", "", `"metadata":{"name":"self","namespace":"{ns1}"}`))
		a.update(configMapsR, a.ns[0], "self", func(x *unstructured.Unstructured) {
			x.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "self", UID: u.GetUID()}})
		})
		c, err := cp.Dynamic(t).Resource(cert).Namespace(a.ns[0]).Get(context.Background(), "api", metav1.GetOptions{})
		require.NoError(t, err)
		a.create(secretsR, auditObj("Secret", "", `"metadata":{"name":"api-tls","namespace":"{ns1}",
		  "ownerReferences":[{"apiVersion":"cert-manager.io/v1","kind":"Certificate","name":"api","uid":"`+string(c.GetUID())+`"}]}`))
		a.agree("owned")
		cp.DeleteCRD(t, "certificates.cert-manager.io")
		a.agree("Certificate CRD deleted", refs.ObjectRef{Group: "cert-manager.io", Kind: "Certificate", Namespace: a.ns[0], Name: "api"})
		crdOf("Certificate").install(a.t)
		a.agree("Certificate CRD re-created")
		a.create(cert, auditObj("Certificate", "cert-manager.io", `"metadata":{"name":"api","namespace":"{ns1}"},
		  "spec":{"secretName":"api-tls","issuerRef":{"name":"ca"}}`))
		a.agree("Certificate re-created")
	})
	t.Run("rapid churn", func(t *testing.T) {
		for i := range 10 {
			a.del(secretsR, a.ns[0], "tls")
			a.create(secretsR, auditObj("Secret", "", `"metadata":{"name":"tls","namespace":"{ns1}"}`))
			a.update(podsR, a.ns[0], "web-1", func(u *unstructured.Unstructured) {
				u.SetLabels(map[string]string{"app": []string{"web", "api"}[i%2], "tier": "x"})
			})
		}
		a.del(secretsR, a.ns[0], "tls")
		a.agree("churned")
		// A CRD deleted and created again at once, its object too.
		cp.DeleteCRD(t, "clustersecretstores.external-secrets.io")
		crdOf("ClusterSecretStore").install(a.t)
		a.create(cstore, auditObj("ClusterSecretStore", "external-secrets.io", `"metadata":{"name":"global{c}"},"spec":{}`))
		a.agree("CRD bounced")
	})
	t.Run("CRD scope flipped while referenced", func(t *testing.T) {
		cp.DeleteCRD(t, "clusterissuers.cert-manager.io")
		ci := crdOf("ClusterIssuer")
		ci.namespaced = true
		ci.install(a.t)
		a.create(cissuer, auditObj("ClusterIssuer", "cert-manager.io", `"metadata":{"name":"root{c}","namespace":"{ns1}"},"spec":{}`))
		a.agree("ClusterIssuer namespaced")
		cp.DeleteCRD(t, "clusterissuers.cert-manager.io")
		crdOf("ClusterIssuer").install(a.t)
		a.create(cissuer, auditObj("ClusterIssuer", "cert-manager.io", `"metadata":{"name":"root{c}"},"spec":{"ca":{"secretName":"ca-key"}}`))
		a.agree("ClusterIssuer cluster-scoped again")
	})
	t.Run("CRD re-created with another kind", func(t *testing.T) {
		cp.DeleteCRD(t, "secretstores.external-secrets.io")
		ss := crdOf("SecretStore")
		ss.kind = "Store"
		ss.install(a.t)
		a.create(store, auditObj("Store", "external-secrets.io", `"metadata":{"name":"vault","namespace":"{ns1}"},"spec":{}`))
		a.agree("SecretStore is now Store", refs.ObjectRef{Group: "external-secrets.io", Kind: "SecretStore", Namespace: a.ns[0], Name: "vault"})
		cp.DeleteCRD(t, "secretstores.external-secrets.io")
		crdOf("SecretStore").install(a.t)
		a.create(store, auditObj("SecretStore", "external-secrets.io", `"metadata":{"name":"vault","namespace":"{ns1}"},"spec":{}`))
		a.agree("SecretStore again")
	})
	t.Run("CRD gains a preferred version", func(t *testing.T) {
		client := cp.APIExtensions(t).ApiextensionsV1().CustomResourceDefinitions()
		crd, err := client.Get(context.Background(), "applications.argoproj.io", metav1.GetOptions{})
		require.NoError(t, err)
		v2 := *crd.Spec.Versions[0].DeepCopy()
		v2.Name = "v2"
		crd.Spec.Versions[0].Storage = false
		v2.Storage = true
		crd.Spec.Versions = append(crd.Spec.Versions, v2)
		_, err = client.Update(context.Background(), crd, metav1.UpdateOptions{})
		require.NoError(t, err)
		app2 := schema.GroupVersionResource{Group: "argoproj.io", Version: "v2", Resource: "applications"}
		require.Eventually(t, func() bool {
			_, err := cp.Dynamic(t).Resource(app2).Namespace(a.argo).List(context.Background(), metav1.ListOptions{})
			return err == nil
		}, 30*time.Second, 100*time.Millisecond)
		a.agree("v2 served")
		a.update(app2, a.argo, "a1", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "team", "spec", "project")
		})
		a.create(app2, `{"apiVersion":"argoproj.io/v2","kind":"Application","metadata":{"name":"a3","namespace":"`+a.argo+`"},
		  "spec":{"project":"default","destination":{"namespace":"`+a.ns[0]+`"}}}`)
		a.agree("v2 objects")
	})
	t.Run("owners across scopes", func(t *testing.T) {
		ci, err := cp.Dynamic(t).Resource(cissuer).Get(context.Background(), "root"+a.c, metav1.GetOptions{})
		require.NoError(t, err)
		is, err := cp.Dynamic(t).Resource(issuer).Namespace(a.ns[0]).Get(context.Background(), "ca", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			is = a.create(issuer, auditObj("Issuer", "cert-manager.io", `"metadata":{"name":"ca","namespace":"{ns1}"},"spec":{}`))
		} else {
			require.NoError(t, err)
		}
		a.create(configMapsR, auditObj("ConfigMap", "", `"metadata":{"name":"by-cluster","namespace":"{ns1}",
		  "ownerReferences":[{"apiVersion":"cert-manager.io/v1","kind":"ClusterIssuer","name":"root{c}","uid":"`+string(ci.GetUID())+`"}]}`))
		a.create(cstore, auditObj("ClusterSecretStore", "external-secrets.io", `"metadata":{"name":"owned{c}",
		  "ownerReferences":[{"apiVersion":"cert-manager.io/v1","kind":"Issuer","name":"ca","uid":"`+string(is.GetUID())+`"}]},"spec":{}`))
		a.agree("cross-scope owners")
	})
	t.Run("namespace deleted", func(t *testing.T) {
		ctx := context.Background()
		dyn := cp.Dynamic(t)
		for _, r := range append(coreAudit[:5:5], oracleRes{gvr: cert}, oracleRes{gvr: es}, oracleRes{gvr: issuer}, oracleRes{gvr: crdOf("VaultIssuer").gvr()}) {
			require.NoError(t, dyn.Resource(r.gvr).Namespace(a.ns[1]).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))
		}
		cs := cp.Clientset(t)
		require.NoError(t, cs.CoreV1().Namespaces().Delete(ctx, a.ns[1], metav1.DeleteOptions{}))
		nsObj, err := cs.CoreV1().Namespaces().Get(ctx, a.ns[1], metav1.GetOptions{})
		require.NoError(t, err)
		nsObj.Spec.Finalizers = nil
		_, err = cs.CoreV1().Namespaces().Finalize(ctx, nsObj, metav1.UpdateOptions{})
		require.NoError(t, err)
		a.agree("namespace deleted", refs.ObjectRef{Group: "cert-manager.io", Resource: "certificates", Namespace: a.ns[1], Name: "web"})
	})
	t.Run("a graph started now", func(t *testing.T) {
		b := *a
		b.g = startGraph(t, refs.Options{Rules: append(refs.BuiltinRules(), rules...)})
		b.agree("fresh graph")
	})
}

func typesUID(s string) types.UID { return types.UID(s) }

// A rule whose DefaultKind is not one of its Kinds drops every value that names no kind:
// the default can never apply. The rule file is refused when read, as other contradictory
// rules are, rather than silently naming nothing for those values.
func TestAuditDefaultKindOutsideKinds(t *testing.T) {
	_, err := refs.ParseRules([]byte(`
- name: certificates:issuer
  from: certificates.cert-manager.io
  path: "{.spec.issuerRef}"
  toGroup: cert-manager.io
  nameField: name
  kindField: kind
  kinds: [ClusterIssuer]
  defaultKind: Issuer
`))
	require.ErrorIs(t, err, refs.ErrInvalidRule)
	require.ErrorContains(t, err, "DefaultKind")
}

// A query that writes the group inside Resource, as kubectl writes names
// ("issuers.cert-manager.io"), or leaves out the group of a resource or kind served in another
// one, was told that "issuers.cert-manager.io is not served": the very name of a served
// resource. The error says where the group goes, or which groups serve the name.
func TestAuditMisplacedGroupErrors(t *testing.T) {
	for _, c := range auditCRDs[:3] {
		c.install(t)
	}
	t.Cleanup(func() {
		for _, c := range auditCRDs[:3] {
			cp.DeleteCRD(t, c.plural+"."+c.group)
		}
	})
	g := startGraph(t, refs.Options{})
	for _, c := range []struct {
		obj  refs.ObjectRef
		want string
	}{
		{refs.ObjectRef{Resource: "issuers.cert-manager.io", Namespace: "ns", Name: "ca"}, `Group "cert-manager.io", Resource "issuers"`},
		{refs.ObjectRef{Resource: "issuers", Namespace: "ns", Name: "ca"}, `issuers is served in group cert-manager.io`},
		{refs.ObjectRef{Kind: "Issuer", Namespace: "ns", Name: "ca"}, `kind Issuer is served in group cert-manager.io`},
	} {
		_, err := g.References(c.obj, 1)
		require.ErrorIs(t, err, refs.ErrUnknownResource)
		require.ErrorContains(t, err, c.want)
		_, err = g.Referrers(c.obj, 1)
		require.ErrorIs(t, err, refs.ErrUnknownResource)
		require.ErrorContains(t, err, c.want)
	}
	_, err := g.Unreferenced(schema.GroupResource{Resource: "issuers.cert-manager.io"})
	require.ErrorContains(t, err, `Group "cert-manager.io", Resource "issuers"`)
}
