package refs

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// dump renders everything the graph answers: every present object's references and
// referrers, the dangling edges, unreferenced ConfigMaps and empty Services, and the stats.
func dump(g *Graph) []string {
	var out []string
	g.g.mu.RLock()
	var objs []ObjectRef
	for _, set := range g.g.objs {
		for e := range set {
			objs = append(objs, g.g.ref(e))
		}
	}
	g.g.mu.RUnlock()
	for _, o := range objs {
		used, _ := g.References(o, 1)
		for _, e := range used {
			out = append(out, "ref "+e.String())
		}
		users, _ := g.Referrers(o, 1)
		for _, e := range users {
			out = append(out, "by "+e.String())
		}
	}
	for _, e := range g.Dangling() {
		out = append(out, "dangling "+e.String())
	}
	unused, _ := g.Unreferenced(configMaps)
	for _, r := range unused {
		out = append(out, "unused "+r.String())
	}
	empty, _ := g.EmptySelectors(services)
	for _, r := range empty {
		out = append(out, "empty "+r.String())
	}
	st := g.Stats()
	st.Events = 0
	out = append(out, fmt.Sprintf("stats %+v", st))
	sort.Strings(out)
	return out
}

// TestIncrementalMatchesRebuild applies random adds, updates and deletes (labels,
// selectors, volumes, owners with UIDs, kinds learned late) and checks after each event
// that the graph answers exactly what a graph built from scratch from the surviving
// objects answers.
func TestIncrementalMatchesRebuild(t *testing.T) {
	widgets := gr("example.com", "widgets")
	rules := append(BuiltinRules(), Rule{Name: "widgets:configmap", From: widgets, Path: "{.spec.configRef}", To: configMaps},
		Rule{Name: "pods:widget", From: pods, Path: "{.spec.widgetRefs[*]}", KindField: "kind", NameField: "name",
			OptionalField: "optional", To: gr("example.com", "")})
	type object struct {
		res schema.GroupResource
		js  string
	}
	nss := []string{"a", "b"}
	pick := func(r *rand.Rand, xs ...string) string { return xs[r.IntN(len(xs))] }
	gen := func(r *rand.Rand, i int) (schema.GroupResource, string, string, string) {
		ns, n := pick(r, nss...), fmt.Sprint(r.IntN(4))
		uid := pick(r, "1", "2")
		switch i % 6 {
		case 0, 1:
			owner := ""
			if r.IntN(2) == 0 {
				owner = fmt.Sprintf(`,"ownerReferences":[{"apiVersion":%q,"kind":%q,"name":"%d","uid":%q}]`,
					pick(r, "v1", "example.com/v1"), pick(r, "ConfigMap", "Widget"), r.IntN(4), pick(r, "1", "2"))
			}
			// Volumes of ConfigMaps, optional or not (one ConfigMap may be named both ways), and
			// references to widgets, optional or not, that wait for their kind until it is learned.
			opt := func() string { return pick(r, "true", "false", `"true"`) }
			return pods, ns, "p" + n, fmt.Sprintf(`{"metadata":{"name":"p%s","namespace":%q,"uid":%q,"labels":{"app":%q}%s},
			  "spec":{"volumes":[{"name":"v","configMap":{"name":"%d","optional":%s}},{"name":"w","configMap":{"name":"%d","optional":%s}}],
			  "widgetRefs":[{"kind":"Widget","name":"%d","optional":%s}],"serviceAccountName":%q}}`,
				n, ns, uid, pick(r, "x", "y", "z"), owner, r.IntN(4), opt(), r.IntN(4), opt(), r.IntN(4), opt(), pick(r, "", "sa"))
		case 2:
			sel := pick(r, `{"app":"x"}`, `{"app":"y"}`, `{}`, `null`)
			return services, ns, "s" + n, fmt.Sprintf(`{"metadata":{"name":"s%s","namespace":%q},"spec":{"selector":%s}}`, n, ns, sel)
		case 3:
			return configMaps, ns, n, fmt.Sprintf(`{"metadata":{"name":"%s","namespace":%q,"uid":%q}}`, n, ns, uid)
		case 4:
			return widgets, ns, n, fmt.Sprintf(`{"metadata":{"name":"%s","namespace":%q,"uid":%q},"spec":{"configRef":"%d"}}`, n, ns, uid, r.IntN(4))
		default:
			sel := pick(r, `{"matchLabels":{"app":"x"}}`, `{"matchExpressions":[{"key":"app","operator":"In","values":["y","z"]}]}`, `{}`)
			return gr("policy", "poddisruptionbudgets"), ns, "pdb" + n, fmt.Sprintf(`{"metadata":{"name":"pdb%s","namespace":%q},"spec":{"selector":%s}}`, n, ns, sel)
		}
	}
	for seed := uint64(1); seed <= 8; seed++ {
		r := rand.New(rand.NewPCG(seed, 0))
		tg := newTestGraph(t, rules)
		live := map[string]object{}
		learned := false
		for step := 0; step < 120; step++ {
			res, ns, name, js := gen(r, r.IntN(6))
			id := resourceName(res) + "/" + ns + "/" + name
			switch {
			case step == 60:
				tg.g.learn(widgets, "Widget", true) // the CRD appears half way
				learned = true
			case r.IntN(4) == 0:
				if _, ok := live[id]; ok {
					tg.del(res, ns, name)
					delete(live, id)
				}
			default:
				tg.put(res, js)
				live[id] = object{res, js}
			}
			fresh := newTestGraph(t, rules)
			if learned {
				fresh.g.learn(widgets, "Widget", true)
			}
			ids := make([]string, 0, len(live))
			for id := range live {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			for _, id := range ids {
				fresh.put(live[id].res, live[id].js)
			}
			require.Equal(t, dump(fresh.Graph), dump(tg.Graph), "seed %d step %d", seed, step)
		}
	}
}
