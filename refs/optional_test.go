package refs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// optionalPod names, by every reference Kubernetes lets be optional, a target marked
// optional ("-opt"), and by the same fields one that is not ("-req"); in containers, init
// containers and ephemeral containers.
const optionalPod = `{"metadata":{"name":"p","namespace":"ns"},"spec":{
  "volumes":[
    {"name":"a","configMap":{"name":"cm-vol-opt","optional":true}},
    {"name":"b","configMap":{"name":"cm-vol-req","optional":false}},
    {"name":"c","secret":{"secretName":"sec-vol-opt","optional":true}},
    {"name":"d","secret":{"secretName":"sec-vol-req"}},
    {"name":"e","projected":{"sources":[
      {"configMap":{"name":"cm-proj-opt","optional":true}},{"configMap":{"name":"cm-proj-req"}},
      {"secret":{"name":"sec-proj-opt","optional":true}},{"secret":{"name":"sec-proj-req","optional":"true"}}]}}],
  "containers":[{"name":"app",
    "env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"cm-env-opt","key":"a","optional":true}}},
           {"name":"B","valueFrom":{"secretKeyRef":{"name":"sec-env-opt","key":"b","optional":true}}},
           {"name":"C","valueFrom":{"secretKeyRef":{"name":"sec-env-req","key":"c"}}}],
    "envFrom":[{"configMapRef":{"name":"cm-envfrom-opt","optional":true}},{"secretRef":{"name":"sec-envfrom-req"}}]}],
  "initContainers":[{"name":"init",
    "env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"cm-env-req","key":"a"}}}],
    "envFrom":[{"secretRef":{"name":"sec-envfrom-opt","optional":true}}]}],
  "ephemeralContainers":[{"name":"debug","envFrom":[{"configMapRef":{"name":"cm-envfrom-req","optional":false}}]}]}}`

// Optional references are edges like the others, Optional and Missing while their target
// is absent, but they do not dangle; required ones beside them still do.
func TestOptionalReferencesAreEdgesThatDoNotDangle(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(pods, optionalPod)
	p := oref(pods, "ns", "p")
	assert.Equal(t, lines(`
		pods/ns/p -[pods:volume-configmap]-> configmaps/ns/cm-vol-opt (optional) (Missing: not found)
		pods/ns/p -[pods:volume-configmap]-> configmaps/ns/cm-vol-req (Missing: not found)
		pods/ns/p -[pods:volume-secret]-> secrets/ns/sec-vol-opt (optional) (Missing: not found)
		pods/ns/p -[pods:volume-secret]-> secrets/ns/sec-vol-req (Missing: not found)
		pods/ns/p -[pods:projected-configmap]-> configmaps/ns/cm-proj-opt (optional) (Missing: not found)
		pods/ns/p -[pods:projected-configmap]-> configmaps/ns/cm-proj-req (Missing: not found)
		pods/ns/p -[pods:projected-secret]-> secrets/ns/sec-proj-opt (optional) (Missing: not found)
		pods/ns/p -[pods:projected-secret]-> secrets/ns/sec-proj-req (Missing: not found)
		pods/ns/p -[pods:env-configmap]-> configmaps/ns/cm-env-opt (optional) (Missing: not found)
		pods/ns/p -[pods:env-configmap]-> configmaps/ns/cm-env-req (Missing: not found)
		pods/ns/p -[pods:env-secret]-> secrets/ns/sec-env-opt (optional) (Missing: not found)
		pods/ns/p -[pods:env-secret]-> secrets/ns/sec-env-req (Missing: not found)
		pods/ns/p -[pods:envfrom-configmap]-> configmaps/ns/cm-envfrom-opt (optional) (Missing: not found)
		pods/ns/p -[pods:envfrom-configmap]-> configmaps/ns/cm-envfrom-req (Missing: not found)
		pods/ns/p -[pods:envfrom-secret]-> secrets/ns/sec-envfrom-opt (optional) (Missing: not found)
		pods/ns/p -[pods:envfrom-secret]-> secrets/ns/sec-envfrom-req (Missing: not found)
	`), strs(tg.References(p, 1)))
	for _, e := range tg.References(p, 1) {
		assert.Equal(t, Missing, e.State, e.String())
		assert.Equal(t, e.To.Name[len(e.To.Name)-4:] == "-opt", e.Optional, e.String())
	}
	// Only the required references dangle; a string "true" is not the boolean.
	assert.Equal(t, lines(`
		pods/ns/p -[pods:volume-configmap]-> configmaps/ns/cm-vol-req (Missing: not found)
		pods/ns/p -[pods:volume-secret]-> secrets/ns/sec-vol-req (Missing: not found)
		pods/ns/p -[pods:projected-configmap]-> configmaps/ns/cm-proj-req (Missing: not found)
		pods/ns/p -[pods:projected-secret]-> secrets/ns/sec-proj-req (Missing: not found)
		pods/ns/p -[pods:env-configmap]-> configmaps/ns/cm-env-req (Missing: not found)
		pods/ns/p -[pods:env-secret]-> secrets/ns/sec-env-req (Missing: not found)
		pods/ns/p -[pods:envfrom-configmap]-> configmaps/ns/cm-envfrom-req (Missing: not found)
		pods/ns/p -[pods:envfrom-secret]-> secrets/ns/sec-envfrom-req (Missing: not found)
	`), strs(tg.Dangling()))
	// Referrers of a missing optional target show the optional edge.
	assert.Equal(t, []string{"pods/ns/p -[pods:volume-configmap]-> configmaps/ns/cm-vol-opt (optional) (Missing: not found)"},
		strs(tg.Referrers(oref(configMaps, "ns", "cm-vol-opt"), 1)))
	st := tg.Stats()
	assert.Equal(t, 16, st.Edges)
	assert.Equal(t, 16, st.Missing, "a missing optional target is missing all the same")

	// The optional targets appear: Present, still optional; and in use.
	tg.put(configMaps, `{"metadata":{"name":"cm-vol-opt","namespace":"ns"}}`)
	tg.put(secrets, `{"metadata":{"name":"sec-env-opt","namespace":"ns"}}`)
	tg.put(configMaps, `{"metadata":{"name":"unused","namespace":"ns"}}`)
	var present []string
	for _, e := range tg.References(p, 1) {
		if e.State == Present {
			assert.True(t, e.Optional, e.String())
			present = append(present, e.String())
		}
	}
	assert.Equal(t, lines(`
		pods/ns/p -[pods:volume-configmap]-> configmaps/ns/cm-vol-opt (optional)
		pods/ns/p -[pods:env-secret]-> secrets/ns/sec-env-opt (optional)
	`), lines(joinLines(present)))
	unused, err := tg.Unreferenced(configMaps)
	require.NoError(t, err)
	assert.Equal(t, []string{"configmaps/ns/unused"}, refStrs(unused), "an optional reference uses its target")
	assert.Len(t, tg.Dangling(), 8)

	// The tree marks optional edges.
	tree := Tree(p, tg.References(p, 1), false).String()
	assert.Contains(t, tree, "[pods:volume-configmap] configmaps/ns/cm-vol-opt (optional)\n")
	assert.Contains(t, tree, "[pods:env-configmap] configmaps/ns/cm-env-opt (optional) (Missing: not found)\n")
	assert.Contains(t, tree, "[pods:env-configmap] configmaps/ns/cm-env-req (Missing: not found)\n")
}

func joinLines(ls []string) string {
	out := ""
	for _, l := range ls {
		out += l + "\n"
	}
	return out
}

// One target named by one rule both optionally and not is one edge, not optional,
// whichever comes first; named optionally by one rule and not by another, it is two edges
// and only the required one dangles.
func TestTargetNamedOptionallyAndNotIsRequired(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(pods, `{"metadata":{"name":"a","namespace":"ns"},"spec":{"volumes":[
		{"name":"x","configMap":{"name":"cm","optional":true}},{"name":"y","configMap":{"name":"cm"}}]}}`)
	tg.put(pods, `{"metadata":{"name":"b","namespace":"ns"},"spec":{"volumes":[
		{"name":"x","configMap":{"name":"cm"}},{"name":"y","configMap":{"name":"cm","optional":true}}]}}`)
	tg.put(pods, `{"metadata":{"name":"c","namespace":"ns"},"spec":{"volumes":[{"name":"x","configMap":{"name":"cm","optional":true}}],
		"containers":[{"name":"c","env":[{"name":"E","valueFrom":{"configMapKeyRef":{"name":"cm","key":"k"}}}]}]}}`)
	tg.put(pods, `{"metadata":{"name":"d","namespace":"ns"},"spec":{"volumes":[
		{"name":"x","configMap":{"name":"cm","optional":true}},{"name":"y","configMap":{"name":"cm","optional":true}}]}}`)
	assert.Equal(t, lines(`
		pods/ns/a -[pods:volume-configmap]-> configmaps/ns/cm (Missing: not found)
		pods/ns/b -[pods:volume-configmap]-> configmaps/ns/cm (Missing: not found)
		pods/ns/c -[pods:env-configmap]-> configmaps/ns/cm (Missing: not found)
	`), strs(tg.Dangling()))
	assert.Equal(t, lines(`
		pods/ns/a -[pods:volume-configmap]-> configmaps/ns/cm (Missing: not found)
		pods/ns/b -[pods:volume-configmap]-> configmaps/ns/cm (Missing: not found)
		pods/ns/c -[pods:env-configmap]-> configmaps/ns/cm (Missing: not found)
		pods/ns/c -[pods:volume-configmap]-> configmaps/ns/cm (optional) (Missing: not found)
		pods/ns/d -[pods:volume-configmap]-> configmaps/ns/cm (optional) (Missing: not found)
	`), strs(tg.Referrers(oref(configMaps, "ns", "cm"), 1)))
	assert.Equal(t, 5, tg.Stats().Edges)

	// Many values (past the sizes where lists become sets) merge alike.
	vols := `{"name":"x","configMap":{"name":"cm","optional":true}}`
	for i := 0; i < 20; i++ {
		vols += `,{"name":"o","configMap":{"name":"cm","optional":true}},{"name":"o","configMap":{"name":"cm-` + string(rune('a'+i)) + `","optional":true}}`
	}
	tg.put(pods, `{"metadata":{"name":"e","namespace":"ns"},"spec":{"volumes":[`+vols+`,{"name":"y","configMap":{"name":"cm"}}]}}`)
	assert.Contains(t, strs(tg.Dangling()), "pods/ns/e -[pods:volume-configmap]-> configmaps/ns/cm (Missing: not found)")
	assert.Len(t, tg.Dangling(), 4)
	assert.Len(t, tg.References(oref(pods, "ns", "e"), 1), 21)
}

// An update that only marks a reference optional, or required again, changes the edge.
func TestUpdateThatFlipsOptionalChangesTheEdge(t *testing.T) {
	tg := newTestGraph(t, nil)
	pod := func(opt string) string {
		return `{"metadata":{"name":"p","namespace":"ns"},"spec":{"volumes":[{"name":"v","secret":{"secretName":"s","optional":` + opt + `}}]}}`
	}
	tg.put(pods, pod("true"))
	assert.Empty(t, tg.Dangling())
	tg.put(pods, pod("false"))
	assert.Equal(t, []string{"pods/ns/p -[pods:volume-secret]-> secrets/ns/s (Missing: not found)"}, strs(tg.Dangling()))
	assert.Equal(t, []string{"pods/ns/p -[pods:volume-secret]-> secrets/ns/s (Missing: not found)"}, strs(tg.Referrers(oref(secrets, "ns", "s"), 1)))
	tg.put(pods, pod("true"))
	assert.Empty(t, tg.Dangling())
	assert.Equal(t, []string{"pods/ns/p -[pods:volume-secret]-> secrets/ns/s (optional) (Missing: not found)"}, strs(tg.Referrers(oref(secrets, "ns", "s"), 1)))
	st := tg.Stats()
	assert.Equal(t, 1, st.Edges)
	assert.Equal(t, 1, st.Missing)
	// The Pod goes: nothing is left behind.
	tg.del(pods, "ns", "p")
	assert.Empty(t, tg.g.entries)
}

// Workload templates' optional references are optional too, and the JSON bytes read
// alike.
func TestOptionalInTemplatesAndBytes(t *testing.T) {
	tg := newTestGraph(t, nil)
	spec := `{"volumes":[{"name":"v","secret":{"secretName":"s","optional":true}}],
	  "containers":[{"name":"c","envFrom":[{"configMapRef":{"name":"cm","optional":true}}]}]}`
	tg.put(gr("apps", "deployments"), `{"metadata":{"name":"d","namespace":"ns"},"spec":{"template":{"spec":`+spec+`}}}`)
	tg.put(gr("batch", "cronjobs"), `{"metadata":{"name":"cj","namespace":"ns"},"spec":{"jobTemplate":{"spec":{"template":{"spec":`+spec+`}}}}}`)
	tg.upsert(tg.g.rulesOf(gr("apps", "statefulsets")), newRawObject([]byte(`{"metadata":{"name":"st","namespace":"ns"},"spec":{"template":{"spec":`+spec+`}}}`)))
	assert.Empty(t, tg.Dangling())
	assert.Equal(t, lines(`
		cronjobs.batch/ns/cj -[cronjobs.batch:envfrom-configmap]-> configmaps/ns/cm (optional) (Missing: not found)
		deployments.apps/ns/d -[deployments.apps:envfrom-configmap]-> configmaps/ns/cm (optional) (Missing: not found)
		statefulsets.apps/ns/st -[statefulsets.apps:envfrom-configmap]-> configmaps/ns/cm (optional) (Missing: not found)
	`), strs(tg.Referrers(oref(configMaps, "ns", "cm"), 1)))
	assert.Len(t, tg.Referrers(oref(secrets, "ns", "s"), 1), 3)

	compiled, err := compileRules(BuiltinRules())
	require.NoError(t, err)
	info := newGraph(compiled).rulesOf(pods)
	dec, err := read(info, obj(t, optionalPod))
	require.NoError(t, err)
	raw, err := read(info, newRawObject([]byte(optionalPod)))
	require.NoError(t, err)
	assert.Equal(t, dec, raw)
	n := 0
	for _, r := range dec.raws {
		if r.opt {
			n++
		}
	}
	assert.Equal(t, 8, n)
}

// A user rule marks references optional by a field of its own name; an optional reference
// waiting for its kind is shown by Referrers and does not dangle.
func TestUserRuleOptionalFieldAndPendingKinds(t *testing.T) {
	widgets := gr("example.com", "widgets")
	rules := append(BuiltinRules(),
		Rule{Name: "widgets:secret", From: widgets, Path: "{.spec.secrets[*]}", To: secrets, NameField: "ref", OptionalField: "ifPresent"},
		Rule{Name: "widgets:target", From: widgets, Path: "{.spec.targets[*]}", KindField: "kind", GroupField: "group", NameField: "name",
			OptionalField: "optional", To: gr("example.com", "")})
	tg := newTestGraph(t, rules)
	tg.g.learn(widgets, "Widget", true)
	tg.put(widgets, `{"metadata":{"name":"w","namespace":"ns"},"spec":{
		"secrets":[{"ref":"a","ifPresent":true},{"ref":"b","optional":true}],
		"targets":[{"kind":"Gizmo","name":"g1","optional":true},{"kind":"Gizmo","name":"g2"}]}}`)
	assert.Equal(t, lines(`
		widgets.example.com/ns/w -[widgets:secret]-> secrets/ns/b (Missing: not found)
		widgets.example.com/ns/w -[widgets:target]-> Gizmo.example.com/ns/g2 (Unknown: no served resource known to have kind Gizmo.example.com)
	`), strs(tg.Dangling()))
	byKind, err := tg.Graph.Referrers(ObjectRef{Group: "example.com", Kind: "Gizmo", Namespace: "ns", Name: "g1"}, 1)
	require.NoError(t, err)
	require.Len(t, byKind, 1)
	assert.True(t, byKind[0].Optional)
	assert.Equal(t, Unknown, byKind[0].State)
	// The kind is served: the optional edge resolves, optional still.
	tg.g.learn(gr("example.com", "gizmos"), "Gizmo", true)
	assert.Equal(t, lines(`
		widgets.example.com/ns/w -[widgets:secret]-> secrets/ns/b (Missing: not found)
		widgets.example.com/ns/w -[widgets:target]-> gizmos.example.com/ns/g2 (Missing: not found)
	`), strs(tg.Dangling()))
	assert.Contains(t, strs(tg.References(oref(widgets, "ns", "w"), 1)),
		"widgets.example.com/ns/w -[widgets:target]-> gizmos.example.com/ns/g1 (optional) (Missing: not found)")
}
