package discovery

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

type resOpt func(*Resource)

func short(s ...string) resOpt { return func(r *Resource) { r.ShortNames = s } }
func cats(s ...string) resOpt  { return func(r *Resource) { r.Categories = s } }
func verbs(s ...string) resOpt { return func(r *Resource) { r.Verbs = s } }
func cluster() resOpt          { return func(r *Resource) { r.Namespaced = false } }

func mkRes(group, version, plural, kind string, opts ...resOpt) Resource {
	r := Resource{
		GVR:        schema.GroupVersionResource{Group: group, Version: version, Resource: plural},
		GVK:        schema.GroupVersionKind{Group: group, Version: version, Kind: kind},
		Namespaced: true,
		Singular:   strings.ToLower(kind),
		Verbs:      allVerbs,
	}
	for _, o := range opts {
		o(&r)
	}
	return r
}

// addGroup adds a healthy group whose versions are given in priority order.
func addGroup(r *fetchResult, name string, byVersion ...any) *fetchedGroup {
	g := r.group(name)
	for i := 0; i < len(byVersion); i += 2 {
		v := byVersion[i].(string)
		g.versions = append(g.versions, v)
		g.resources[v] = byVersion[i+1].([]Resource)
	}
	return g
}

// testCluster is a small imitation of a real server: the clashes are the real ones (core vs
// events.k8s.io, autoscaling's two versions) plus CRDs made to clash.
func testCluster() *fetchResult {
	r := &fetchResult{seq: 1, full: true, groups: map[string]*fetchedGroup{}}
	addGroup(r, "", "v1", []Resource{
		mkRes("", "v1", "pods", "Pod", short("po"), cats("all")),
		mkRes("", "v1", "services", "Service", short("svc"), cats("all")),
		mkRes("", "v1", "events", "Event", short("ev")),
		mkRes("", "v1", "endpoints", "Endpoints", short("ep")),
		mkRes("", "v1", "namespaces", "Namespace", short("ns"), cluster()),
		mkRes("", "v1", "bindings", "Binding", verbs("create")),
	})
	addGroup(r, "apps", "v1", []Resource{
		mkRes("apps", "v1", "deployments", "Deployment", short("deploy"), cats("all")),
		mkRes("apps", "v1", "replicasets", "ReplicaSet", short("rs"), cats("all")),
	})
	addGroup(r, "events.k8s.io", "v1", []Resource{mkRes("events.k8s.io", "v1", "events", "Event", short("ev"))})
	addGroup(r, "autoscaling",
		"v2", []Resource{mkRes("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", short("hpa"), cats("all"))},
		"v1", []Resource{mkRes("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", short("hpa"), cats("all"))})
	addGroup(r, "a.example.com", "v1", []Resource{mkRes("a.example.com", "v1", "widgets", "Widget", short("wd"), cats("kindex-only"))})
	addGroup(r, "b.example.com", "v1", []Resource{mkRes("b.example.com", "v1", "widgets", "Widget", short("wd"))})
	// A CRD that reuses every name of core pods, and one whose plural is a built-in short name.
	addGroup(r, "other.io", "v1", []Resource{
		mkRes("other.io", "v1", "pods", "Pod", short("po", "deploy")),
		mkRes("other.io", "v1", "svc", "Svc"),
	})
	addGroup(r, "multi.example.com",
		"v2", []Resource{mkRes("multi.example.com", "v2", "things", "Thing", short("thg"))},
		"v1", []Resource{
			mkRes("multi.example.com", "v1", "things", "Thing", short("thg")),
			mkRes("multi.example.com", "v1", "oldies", "Oldie"),
		})
	broken := r.group("broken.example.com")
	broken.failed["v1alpha1"] = errors.New("stale GroupVersion discovery: broken.example.com/v1alpha1")
	return r
}

func TestParseInput(t *testing.T) {
	tests := []struct {
		in   string
		want []query
	}{
		{"pods", []query{{name: "pods"}}},
		{" Pod ", nil}, // nothing is trimmed: no name holds a space
		{"deploy.apps", []query{{name: "deploy", group: "apps", groupSet: true}}},
		{"Deployment.v1.apps", []query{
			{name: "Deployment", version: "v1", group: "apps", groupSet: true},
			{name: "Deployment", group: "v1.apps", groupSet: true},
		}},
		{"widgets.a.Example.com", []query{
			{name: "widgets", version: "a", group: "example.com", groupSet: true},
			{name: "widgets", group: "a.example.com", groupSet: true},
		}},
		{"apps/v1/deployments", []query{{name: "deployments", version: "v1", group: "apps", groupSet: true}}},
		{"v1/pods", []query{{name: "pods", version: "v1", groupSet: true}, {name: "pods", group: "v1", groupSet: true}}},
		{"", nil},
		{"   ", nil},
		{"pods.", []query{{name: "pods"}}},
		{"Pod.V1.", []query{{name: "Pod", version: "v1"}}},
		{"pods..", nil},
		{"a.b.c.", nil},
		{".", nil},
		{".apps", nil},
		{"a..b", nil},
		{"/pods", nil},
		{"v1/", nil},
		{"a/b/c/d", nil},
		{"po ds", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, parseInput(tt.in))
		})
	}
}

func TestResolveInput(t *testing.T) {
	s := emptySnapshot().merge(testCluster())
	gvr := func(g, v, r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: g, Version: v, Resource: r}
	}
	pods := gvr("", "v1", "pods")
	deployments := gvr("apps", "v1", "deployments")
	tests := []struct {
		in      string
		want    schema.GroupVersionResource
		wantErr string // "nomatch", "ambiguous", "unavailable"
		cands   int
	}{
		{in: "po", want: pods},
		{in: "pods", want: pods},
		{in: "pod", want: pods},
		{in: "Pod", want: pods},
		{in: "PODS", want: pods},
		{in: "v1/pods", want: pods},
		{in: "pods.v1.", want: pods},
		{in: "Pod.v1.", want: pods},
		{in: "po.", want: pods},
		// kubectl reads an empty group as any group.
		{in: "deployments.v1.", want: deployments},
		{in: "deploy.", want: deployments},
		{in: "Deployment.v1.", want: deployments},
		{in: "deployments.v2.", wantErr: "nomatch"},
		{in: "pods.v2.", wantErr: "nomatch"},
		{in: "deployments.apps", want: deployments},
		{in: "deploy.apps", want: deployments},
		{in: "Deployment.apps", want: deployments},
		{in: "Deployment.v1.apps", want: deployments},
		{in: "deployments.v1.apps", want: deployments},
		{in: "apps/v1/deployments", want: deployments},
		{in: "apps/v1/Deployment", want: deployments},
		{in: "apps/deployments", want: deployments},
		{in: "deploy", want: deployments},
		{in: "deployments.v2.apps", wantErr: "nomatch"},
		{in: "deployments.nosuch.io", wantErr: "nomatch"},
		// A group given by its start, as kubectl's REST mapper reads it.
		{in: "deployments.app", want: deployments},
		{in: "deploy.ap", want: deployments},
		{in: "things.multi", want: gvr("multi.example.com", "v2", "things")},
		{in: "widgets.a", want: gvr("a.example.com", "v1", "widgets")},
		{in: "widgets.example", wantErr: "nomatch"}, // no group starts so
		{in: "Event.events", want: gvr("events.k8s.io", "v1", "events")},
		{in: "deployments.app.v1", wantErr: "nomatch"},
		// Core wins over events.k8s.io for every shared name; the group selects the other.
		{in: "events", want: gvr("", "v1", "events")},
		{in: "ev", want: gvr("", "v1", "events")},
		{in: "Event", want: gvr("", "v1", "events")},
		{in: "events.events.k8s.io", want: gvr("events.k8s.io", "v1", "events")},
		{in: "ev.events.k8s.io", want: gvr("events.k8s.io", "v1", "events")},
		// Preferred version, unless one is given.
		{in: "hpa", want: gvr("autoscaling", "v2", "horizontalpodautoscalers")},
		{in: "hpa.v1.autoscaling", want: gvr("autoscaling", "v1", "horizontalpodautoscalers")},
		{in: "autoscaling/v1/horizontalpodautoscalers", want: gvr("autoscaling", "v1", "horizontalpodautoscalers")},
		{in: "things", want: gvr("multi.example.com", "v2", "things")},
		// A resource served only by a non-preferred version resolves to that version.
		{in: "oldies", want: gvr("multi.example.com", "v1", "oldies")},
		{in: "oldies.v2.multi.example.com", wantErr: "nomatch"},
		// Built-ins are never shadowed by a CRD, in any tier.
		{in: "pods.other.io", want: gvr("other.io", "v1", "pods")},
		{in: "po.other.io", want: gvr("other.io", "v1", "pods")},
		{in: "svc", want: gvr("", "v1", "services")},
		{in: "svc.other.io", want: gvr("other.io", "v1", "svc")},
		// CRDs that clash with each other are ambiguous, listing the candidates.
		{in: "widgets", wantErr: "ambiguous", cands: 2},
		{in: "wd", wantErr: "ambiguous", cands: 2},
		{in: "Widget", wantErr: "ambiguous", cands: 2},
		{in: "widgets.a.example.com", want: gvr("a.example.com", "v1", "widgets")},
		{in: "wd.b.example.com", want: gvr("b.example.com", "v1", "widgets")},
		{in: "Widget.v1.b.example.com", want: gvr("b.example.com", "v1", "widgets")},
		// Categories: one member resolves, several are ambiguous.
		{in: "kindex-only", want: gvr("a.example.com", "v1", "widgets")},
		{in: "all", wantErr: "ambiguous", cands: 5},
		// Resources that do not support list still resolve.
		{in: "bindings", want: gvr("", "v1", "bindings")},
		// Subresources are not resources; junk is no match.
		{in: "pods/status", wantErr: "nomatch"},
		{in: "nosuch", wantErr: "nomatch"},
		{in: "", wantErr: "nomatch"},
		{in: "a/b/c/d", wantErr: "nomatch"},
		// A group whose discovery failed is unavailable, not absent.
		{in: "foos.broken.example.com", wantErr: "unavailable"},
		{in: "foos.v1alpha1.broken.example.com", wantErr: "unavailable"},
		{in: "broken.example.com/v1alpha1/foos", wantErr: "unavailable"},
		{in: "foos", wantErr: "nomatch"},
		// No name holds a space or control character, and none is trimmed (kubectl trims none).
		{in: "pods\n", wantErr: "nomatch"},
		{in: " pods", wantErr: "nomatch"},
		{in: "po ds", wantErr: "nomatch"},
		{in: "pods\x00", wantErr: "nomatch"},
		{in: "pods.\u00a0apps", wantErr: "nomatch"},
		{in: "pods\xff", wantErr: "nomatch"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := s.resolveInput(tt.in)
			switch tt.wantErr {
			case "":
				require.NoError(t, err)
				assert.Equal(t, tt.want, r.GVR)
				assert.Equal(t, tt.want.Version, r.GVK.Version)
			case "nomatch":
				require.Error(t, err)
				assert.True(t, meta.IsNoMatchError(err), "want a no-match error, got %v", err)
				assert.False(t, errors.Is(err, ErrGroupUnavailable))
			case "ambiguous":
				require.Error(t, err)
				assert.True(t, meta.IsAmbiguousError(err), "want ambiguous, got %v", err)
				var amb *AmbiguousError
				require.ErrorAs(t, err, &amb)
				assert.Len(t, amb.Candidates, tt.cands)
				assert.False(t, meta.IsNoMatchError(err))
			case "unavailable":
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrGroupUnavailable)
				var gu *GroupUnavailableError
				require.ErrorAs(t, err, &gu)
				assert.Equal(t, "broken.example.com", gu.Group)
				assert.False(t, meta.IsNoMatchError(err))
			}
		})
	}
}

func TestErrorMessages(t *testing.T) {
	s := emptySnapshot().merge(testCluster())
	_, err := s.resolveInput("wd")
	require.EqualError(t, err, `discovery: "wd" is ambiguous, it matches widgets.a.example.com, widgets.b.example.com; qualify it with the group (for example "widgets.a.example.com")`)
	_, err = s.resolveInput("deployments.v2.apps")
	require.EqualError(t, err, `discovery: the server doesn't have a resource type "deployments.v2.apps": no matches for apps/v2, Resource=deployments`)
	_, err = s.resolveInput("a..b")
	require.EqualError(t, err, `discovery: "a..b" cannot name a resource (the forms are name, name.group, name.version.group, name.version., group/version/name and version/name): no matches for /, Resource=a..b`)
	_, err = s.resolveInput("deployments.apps\n")
	require.EqualError(t, err, "discovery: \"deployments.apps\\n\" cannot name a resource: byte 16 is a space, a control character or invalid UTF-8: no matches for /, Resource=deployments.apps\n")
	_, err = s.resolveInput("fl.broken.example.com")
	require.EqualError(t, err, `discovery: API group "broken.example.com" is unavailable (versions v1alpha1): stale GroupVersion discovery: broken.example.com/v1alpha1`)
}

func TestResolveGVKAndGVR(t *testing.T) {
	s := emptySnapshot().merge(testCluster())
	gvk := func(g, v, k string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: g, Version: v, Kind: k}
	}
	gvr := func(g, v, r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: g, Version: v, Resource: r}
	}

	kinds := []struct {
		in      schema.GroupVersionKind
		want    schema.GroupVersionResource
		wantErr string
	}{
		{in: gvk("", "v1", "Pod"), want: gvr("", "v1", "pods")},
		{in: gvk("", "", "Pod"), want: gvr("", "v1", "pods")},
		{in: gvk("", "", "pod"), want: gvr("", "v1", "pods")},
		{in: gvk("apps", "", "Deployment"), want: gvr("apps", "v1", "deployments")},
		{in: gvk("autoscaling", "", "HorizontalPodAutoscaler"), want: gvr("autoscaling", "v2", "horizontalpodautoscalers")},
		{in: gvk("autoscaling", "v1", "HorizontalPodAutoscaler"), want: gvr("autoscaling", "v1", "horizontalpodautoscalers")},
		{in: gvk("other.io", "v1", "Pod"), want: gvr("other.io", "v1", "pods")},
		// The group is exact: "" is the core group, not "any group".
		{in: gvk("", "", "Deployment"), wantErr: "nomatch"},
		{in: gvk("apps", "v1", "Deploy"), wantErr: "nomatch"},
		{in: gvk("apps", "v9", "Deployment"), wantErr: "nomatch"},
		{in: gvk("broken.example.com", "", "Foo"), wantErr: "unavailable"},
	}
	for _, tt := range kinds {
		t.Run("gvk "+tt.in.String(), func(t *testing.T) {
			r, err := s.resolveGVK(tt.in)
			switch tt.wantErr {
			case "":
				require.NoError(t, err)
				assert.Equal(t, tt.want, r.GVR)
			case "nomatch":
				var nk *meta.NoKindMatchError
				assert.ErrorAs(t, err, &nk)
				assert.True(t, meta.IsNoMatchError(err))
			case "unavailable":
				assert.ErrorIs(t, err, ErrGroupUnavailable)
			}
		})
	}

	resources := []struct {
		in      schema.GroupVersionResource
		want    schema.GroupVersionResource
		wantErr string
	}{
		{in: gvr("", "", "pods"), want: gvr("", "v1", "pods")},
		{in: gvr("", "v1", "pod"), want: gvr("", "v1", "pods")},
		{in: gvr("apps", "", "deployments"), want: gvr("apps", "v1", "deployments")},
		{in: gvr("multi.example.com", "v1", "things"), want: gvr("multi.example.com", "v1", "things")},
		{in: gvr("multi.example.com", "", "things"), want: gvr("multi.example.com", "v2", "things")},
		{in: gvr("", "", "deployments"), wantErr: "nomatch"},
		{in: gvr("apps", "", "deploy"), wantErr: "nomatch"}, // short names are for Resolve
		{in: gvr("", "", "pods/status"), wantErr: "nomatch"},
		{in: gvr("broken.example.com", "v1alpha1", "foos"), wantErr: "unavailable"},
	}
	for _, tt := range resources {
		t.Run("gvr "+tt.in.String(), func(t *testing.T) {
			r, err := s.resolveGVR(tt.in)
			switch tt.wantErr {
			case "":
				require.NoError(t, err)
				assert.Equal(t, tt.want, r.GVR)
			case "nomatch":
				var nr *meta.NoResourceMatchError
				assert.ErrorAs(t, err, &nr)
			case "unavailable":
				assert.ErrorIs(t, err, ErrGroupUnavailable)
			}
		})
	}
}

func TestResolveCategory(t *testing.T) {
	s := emptySnapshot().merge(testCluster())
	all, err := s.resolveCategory("ALL")
	require.NoError(t, err)
	var names []string
	for _, r := range all {
		names = append(names, qualifiedName(r.GVR.GroupResource()))
	}
	// Priority order: core first, then the server's group order.
	assert.Equal(t, []string{"pods", "services", "deployments.apps", "replicasets.apps", "horizontalpodautoscalers.autoscaling"}, names[:5])
	assert.Len(t, names, 5)

	// With a failed group, a category nobody has may live there: unavailable, not absent.
	_, err = s.resolveCategory("nosuch")
	assert.ErrorIs(t, err, ErrGroupUnavailable)
	healthy := testCluster()
	delete(healthy.groups, "broken.example.com")
	_, err = emptySnapshot().merge(healthy).resolveCategory("nosuch")
	assert.True(t, meta.IsNoMatchError(err), "%v", err)
}

func TestResultsAreCopies(t *testing.T) {
	s := emptySnapshot().merge(testCluster())
	r, err := s.resolveInput("pods")
	require.NoError(t, err)
	r.Verbs[0] = "mutated"
	r.ShortNames[0] = "mutated"
	again, err := s.resolveInput("po")
	require.NoError(t, err)
	assert.Equal(t, "create", again.Verbs[0])
}

// FuzzParseInput: parsing and resolving never panic; a miss is a no-match error that names
// the input (quoted, cut to 256 bytes) in a message of bounded size, whatever the input's.
func FuzzParseInput(f *testing.F) {
	for _, s := range []string{"po", "deploy.apps", "Deployment.v1.apps", "apps/v1/deployments", "v1/pods", "a..b", "/", ".",
		"wd", "fl.broken.example.com", "deployments.v2.apps", strings.Repeat("x", 2000), "é" + strings.Repeat(".é", 200)} {
		f.Add(s)
	}
	s := emptySnapshot().merge(testCluster())
	f.Fuzz(func(t *testing.T, in string) {
		for _, q := range parseInput(in) {
			if q.name == "" || strings.ContainsAny(q.name, "./") {
				t.Fatalf("bad query %+v from %q", q, in)
			}
			if !q.groupSet && q.group != "" {
				t.Fatalf("group without groupSet: %+v", q) // a version may come alone ("pods.v1.": any group)
			}
		}
		_, err := s.resolveInput(in)
		if err == nil {
			return
		}
		if !isMiss(err) && !meta.IsAmbiguousError(err) {
			t.Fatalf("unexpected error kind for %q: %v", in, err)
		}
		msg := err.Error()
		if len(msg) > 4096 {
			t.Fatalf("a message of %d bytes for an input of %d", len(msg), len(in))
		}
		if !errors.Is(err, ErrGroupUnavailable) && !strings.Contains(msg, quote(in)) {
			t.Fatalf("the error does not name the input %s: %s", quote(in), msg)
		}
	})
}

// A 100 KB resource name made a 200 KB message (quoted once, and again in client-go's error);
// the input is quoted cut to 256 bytes, and such input is refused without a request.
func TestHugeInputIsQuotedShort(t *testing.T) {
	huge := strings.Repeat("x", 100_000)
	s := emptySnapshot().merge(testCluster())
	for _, in := range []string{huge, "pods." + huge, strings.Repeat("ab.", 300) + "c"} {
		_, err := s.resolveInput(in)
		require.True(t, meta.IsNoMatchError(err), "%.200v", err)
		assert.Less(t, len(err.Error()), 1200, "%.300s", err.Error())
		assert.Contains(t, err.Error(), `"`+in[:256]+`"...`)
	}

	c, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{}) // no server there
	require.NoError(t, err)
	_, err = c.Resolve(t.Context(), huge)
	require.True(t, meta.IsNoMatchError(err), "refused before any request: %.200v", err)
	assert.Less(t, len(err.Error()), 1200)
	_, err = c.ResolveGVR(t.Context(), schema.GroupVersionResource{Group: "apps", Resource: huge})
	require.True(t, meta.IsNoMatchError(err), "%.200v", err)
	assert.Less(t, len(err.Error()), 1200)
	_, err = c.ResolveGVK(t.Context(), schema.GroupVersionKind{Kind: huge})
	require.True(t, meta.IsNoMatchError(err), "%.200v", err)
	assert.Less(t, len(err.Error()), 1200)
	_, err = c.ResolveCategory(t.Context(), huge)
	require.True(t, meta.IsNoMatchError(err), "%.200v", err)
	assert.Less(t, len(err.Error()), 1200)

	// Cut at a character boundary.
	assert.Equal(t, `"`+strings.Repeat("é", 128)+`"...`, quote(strings.Repeat("é", 1000)))
	assert.Equal(t, `"a\nb"`, quote("a\nb"))
}
