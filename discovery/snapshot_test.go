package discovery

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
)

func full(seq uint64) *fetchResult {
	return &fetchResult{seq: seq, full: true, groups: map[string]*fetchedGroup{}}
}

func partialRound(seq uint64) *fetchResult {
	return &fetchResult{seq: seq, groups: map[string]*fetchedGroup{}}
}

func eventsByType(events []Event) map[EventType][]string {
	out := map[EventType][]string{}
	for _, e := range events {
		out[e.Type] = append(out[e.Type], qualifiedName(e.Resource.GVR.GroupResource()))
	}
	return out
}

func TestFirstDiscoveryIsAdded(t *testing.T) {
	old := emptySnapshot()
	n := old.merge(testCluster())
	events := diff(old, n)
	assert.Len(t, events, len(n.all))
	for _, e := range events {
		assert.Equal(t, Added, e.Type)
	}
	assert.True(t, n.discovered)
	assert.Equal(t, "", n.order[0], "core group first")
}

func TestFailedGroupCarriesResourcesOver(t *testing.T) {
	r1 := full(1)
	addGroup(r1, "", "v1", []Resource{mkRes("", "v1", "pods", "Pod")})
	addGroup(r1, "agg.example.com", "v1", []Resource{
		mkRes("agg.example.com", "v1", "flows", "Flow", short("fl")),
		mkRes("agg.example.com", "v1", "pipes", "Pipe"),
	})
	s1 := emptySnapshot().merge(r1)

	// The group's only version goes stale: nothing is Removed; the resources are unknown.
	r2 := full(2)
	addGroup(r2, "", "v1", []Resource{mkRes("", "v1", "pods", "Pod")})
	r2.group("agg.example.com").failed["v1"] = errors.New("stale")
	s2 := s1.merge(r2)
	assert.Empty(t, diff(s1, s2), "a failed group must produce no event")

	_, err := s2.resolveInput("fl")
	var gu *GroupUnavailableError
	require.ErrorAs(t, err, &gu)
	assert.ErrorIs(t, err, ErrGroupUnavailable)
	assert.Equal(t, "agg.example.com", gu.Group)
	require.NotNil(t, gu.LastKnown)
	assert.Equal(t, "flows", gu.LastKnown.GVR.Resource)
	assert.EqualError(t, gu.Unwrap(), "stale")
	_, err = s2.resolveInput("pipes.agg.example.com")
	assert.ErrorIs(t, err, ErrGroupUnavailable)
	_, err = s2.resolveInput("nosuch.agg.example.com")
	assert.ErrorIs(t, err, ErrGroupUnavailable, "a failed group may serve anything")
	_, err = s2.resolveInput("pods")
	assert.NoError(t, err)

	perr := s2.partialError()
	var pe *PartialDiscoveryError
	require.ErrorAs(t, perr, &pe)
	assert.Equal(t, []string{"agg.example.com"}, pe.FailedGroups())
	assert.Contains(t, perr.Error(), `"agg.example.com"`)
	assert.ErrorIs(t, perr, ErrGroupUnavailable)

	// Still failing on the next round: still carried over, still no event.
	s3 := s2.merge(r2Copy(r2, 3))
	assert.Empty(t, diff(s2, s3))
	assert.NotNil(t, s3.byGR[gu.LastKnown.GVR.GroupResource()])

	// It recovers without pipes: pipes is Removed only now, flows was never touched.
	r4 := full(4)
	addGroup(r4, "", "v1", []Resource{mkRes("", "v1", "pods", "Pod")})
	addGroup(r4, "agg.example.com", "v1", []Resource{mkRes("agg.example.com", "v1", "flows", "Flow", short("fl"))})
	s4 := s3.merge(r4)
	assert.Equal(t, map[EventType][]string{Removed: {"pipes.agg.example.com"}}, eventsByType(diff(s3, s4)))
	_, err = s4.resolveInput("fl")
	assert.NoError(t, err)
	assert.NoError(t, s4.partialError())
}

func r2Copy(r *fetchResult, seq uint64) *fetchResult {
	c := *r
	c.seq = seq
	return &c
}

func TestPartialVersionFailure(t *testing.T) {
	r1 := full(1)
	addGroup(r1, "x.example.com",
		"v2", []Resource{mkRes("x.example.com", "v2", "as", "A")},
		"v1", []Resource{mkRes("x.example.com", "v1", "as", "A"), mkRes("x.example.com", "v1", "bs", "B")})
	s1 := emptySnapshot().merge(r1)

	// v1 fails: as is still served by v2; bs is carried over as unknown.
	r2 := full(2)
	addGroup(r2, "x.example.com", "v2", []Resource{mkRes("x.example.com", "v2", "as", "A")})
	r2.groups["x.example.com"].failed["v1"] = errors.New("v1 down")
	s2 := s1.merge(r2)
	assert.Empty(t, diff(s1, s2))
	r, err := s2.resolveInput("as")
	require.NoError(t, err)
	assert.Equal(t, "v2", r.GVR.Version)
	_, err = s2.resolveInput("bs")
	assert.ErrorIs(t, err, ErrGroupUnavailable)
	_, err = s2.resolveInput("as.v1.x.example.com")
	var gu *GroupUnavailableError
	require.ErrorAs(t, err, &gu)
	assert.Equal(t, []string{"v1"}, gu.Versions)
	// A healthy version that lacks the resource is a plain miss.
	_, err = s2.resolveInput("bs.v2.x.example.com")
	assert.True(t, meta.IsNoMatchError(err), "%v", err)
}

func TestPreferredVersionChangeIsChanged(t *testing.T) {
	r1 := full(1)
	addGroup(r1, "c.example.com", "v1", []Resource{mkRes("c.example.com", "v1", "things", "Thing")})
	s1 := emptySnapshot().merge(r1)

	r2 := partialRound(2)
	addGroup(r2, "c.example.com",
		"v2", []Resource{mkRes("c.example.com", "v2", "things", "Thing")},
		"v1", []Resource{mkRes("c.example.com", "v1", "things", "Thing")})
	s2 := s1.merge(r2)
	events := diff(s1, s2)
	require.Len(t, events, 1)
	assert.Equal(t, Changed, events[0].Type)
	assert.Equal(t, "v2", events[0].Resource.GVR.Version)
	require.NotNil(t, events[0].Old)
	assert.Equal(t, "v1", events[0].Old.GVR.Version)

	// Verbs compared as sets: a reordering is not a change.
	r3 := partialRound(3)
	reordered := mkRes("c.example.com", "v2", "things", "Thing", verbs("watch", "list", "get", "create", "delete", "deletecollection", "patch", "update"))
	addGroup(r3, "c.example.com", "v2", []Resource{reordered}, "v1", []Resource{mkRes("c.example.com", "v1", "things", "Thing")})
	assert.Empty(t, diff(s2, s2.merge(r3)))
}

func TestAbsentGroupIsRemoved(t *testing.T) {
	r1 := full(1)
	addGroup(r1, "", "v1", []Resource{mkRes("", "v1", "pods", "Pod")})
	addGroup(r1, "gone.example.com", "v1", []Resource{mkRes("gone.example.com", "v1", "ghosts", "Ghost")})
	s1 := emptySnapshot().merge(r1)

	r2 := partialRound(2)
	r2.group("gone.example.com").absent = true
	s2 := s1.merge(r2)
	assert.Equal(t, map[EventType][]string{Removed: {"ghosts.gone.example.com"}}, eventsByType(diff(s1, s2)))
	assert.NotContains(t, s2.order, "gone.example.com")

	// A full round that no longer lists a group removes it too.
	s1b := emptySnapshot().merge(r1)
	r3 := full(3)
	addGroup(r3, "", "v1", []Resource{mkRes("", "v1", "pods", "Pod")})
	assert.Equal(t, map[EventType][]string{Removed: {"ghosts.gone.example.com"}}, eventsByType(diff(s1b, s1b.merge(r3))))
}

func TestOlderRoundNeverOverwritesNewer(t *testing.T) {
	r1 := full(1)
	addGroup(r1, "", "v1", []Resource{mkRes("", "v1", "pods", "Pod")})
	s1 := emptySnapshot().merge(r1)

	// A per-group round that started later (seq 5) adds a CRD group...
	r5 := partialRound(5)
	addGroup(r5, "new.example.com", "v1", []Resource{mkRes("new.example.com", "v1", "news", "New")})
	s5 := s1.merge(r5)

	// ...and a full round that started before it (seq 4) finishes afterwards, without it.
	r4 := full(4)
	addGroup(r4, "", "v1", []Resource{mkRes("", "v1", "pods", "Pod"), mkRes("", "v1", "services", "Service")})
	s4 := s5.merge(r4)
	assert.NotNil(t, s4.byGR[mkRes("new.example.com", "v1", "news", "New").GVR.GroupResource()], "the newer group state is kept")
	assert.NotNil(t, s4.byGR[mkRes("", "v1", "services", "Service").GVR.GroupResource()], "the rest of the older round applies")
	assert.Equal(t, uint64(4), s4.fullSeq)

	// A stale per-group round is ignored for that group.
	r3 := partialRound(3)
	r3.group("new.example.com").absent = true
	assert.Empty(t, diff(s4, s4.merge(r3)))
}

func TestIsBuiltinGroup(t *testing.T) {
	for g, want := range map[string]bool{
		"": true, "apps": true, "batch": true, "events.k8s.io": true, "metrics.k8s.io": true,
		"foo.kubernetes.io": true, "example.com": false, "k8s.io.example.com": false, "stable.example.com": false,
	} {
		assert.Equal(t, want, isBuiltinGroup(g), g)
	}
}

func TestFilterMatches(t *testing.T) {
	pods := mkRes("", "v1", "pods", "Pod")
	deploy := mkRes("apps", "v1", "deployments", "Deployment")
	widgets := mkRes("a.example.com", "v1", "widgets", "Widget")
	tests := []struct {
		name string
		f    Filter
		want []bool // pods, deployments, widgets
	}{
		{"empty includes all", Filter{}, []bool{true, true, true}},
		{"include group", Filter{IncludeGroups: []string{"apps"}}, []bool{false, true, false}},
		{"include core group", Filter{IncludeGroups: []string{""}}, []bool{true, false, false}},
		{"include resource", Filter{IncludeResources: []string{"pods", "widgets.a.example.com"}}, []bool{true, false, true}},
		{"includes are a union", Filter{IncludeGroups: []string{"apps"}, IncludeResources: []string{"pods"}}, []bool{true, true, false}},
		{"exclude group", Filter{ExcludeGroups: []string{"apps"}}, []bool{true, false, true}},
		{"exclude wins", Filter{IncludeGroups: []string{"apps", ""}, ExcludeResources: []string{"pods"}}, []bool{false, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, []bool{tt.f.Matches(pods), tt.f.Matches(deploy), tt.f.Matches(widgets)})
		})
	}
}
