package discovery

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// s55CRD is fakeCRD (Established, plural widgets) with the given versions, served or not.
func s55CRD(served map[string]bool, order ...string) *apiextv1.CustomResourceDefinition {
	crd := fakeCRD()
	crd.Spec.Versions = nil
	for i, v := range order {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextv1.CustomResourceDefinitionVersion{Name: v, Served: served[v], Storage: i == 0})
	}
	return crd
}

// s55Snapshot is a discovery snapshot where fakeGroup lists widgets in the versions given;
// with none, fakeGroup lists only another resource (gadgets, in v1) when other is set, and
// is absent otherwise.
func s55Snapshot(other bool, versions ...string) *snapshot {
	r := &fetchResult{seq: 1, full: true, groups: map[string]*fetchedGroup{}}
	var byVersion []any
	for _, v := range versions {
		byVersion = append(byVersion, v, []Resource{mkRes(fakeGroup, v, "widgets", "Widget")})
	}
	if other {
		if len(versions) == 0 {
			byVersion = append(byVersion, "v1", []Resource{})
		}
		v := byVersion[0].(string)
		byVersion[1] = append(byVersion[1].([]Resource), mkRes(fakeGroup, v, "gadgets", "Gadget"))
	}
	if len(byVersion) > 0 {
		addGroup(r, fakeGroup, byVersion...)
	}
	return emptySnapshot().merge(r)
}

// An Established CRD that serves no version is listed by no discovery document (the
// apiserver drops its group when no CRD of the group serves a version): expecting it to
// appear never held, and the group was re-discovered forever. Its expectation is that the
// resource is not listed, which an absent group satisfies.
func TestS55CRDExpectationNoServedVersion(t *testing.T) {
	absent := s55Snapshot(false)
	groupWithOther := s55Snapshot(true)
	listedV1 := s55Snapshot(false, "v1")
	listedBoth := s55Snapshot(true, "v1", "v2")

	group, expect := crdExpectation(s55CRD(nil, "v1", "v2"), false)
	assert.Equal(t, fakeGroup, group)
	require.NotNil(t, expect, "an Established CRD implies what discovery shows")
	assert.True(t, expect(absent), "no served version: the group may be absent")
	assert.True(t, expect(groupWithOther), "no served version: the group may list other resources")
	assert.False(t, expect(listedV1), "no served version: the resource must not be listed (served before)")
	assert.False(t, expect(listedBoth))
}

// Some versions served, some not: exactly the served ones are expected.
func TestS55CRDExpectationSomeVersionsServed(t *testing.T) {
	_, expect := crdExpectation(s55CRD(map[string]bool{"v1": true}, "v1", "v2"), false)
	require.NotNil(t, expect)
	assert.True(t, expect(s55Snapshot(false, "v1")), "v1 served, v2 not listed")
	assert.True(t, expect(s55Snapshot(true, "v1")), "with another resource in the group")
	assert.False(t, expect(s55Snapshot(false)), "the served version must be listed")
	assert.False(t, expect(s55Snapshot(true)), "the served version must be listed, not only the group")
	assert.False(t, expect(s55Snapshot(false, "v1", "v2")), "the unserved version must not be listed")
	assert.False(t, expect(s55Snapshot(false, "v2")), "the wrong version listed")

	// Served again: the expectation applies as before.
	_, expect = crdExpectation(s55CRD(map[string]bool{"v1": true, "v2": true}, "v1", "v2"), false)
	assert.True(t, expect(s55Snapshot(false, "v1", "v2")))
	assert.False(t, expect(s55Snapshot(false, "v1")))
	assert.False(t, expect(s55Snapshot(false)))
}

// The follower sends nothing for a CRD that serves no version when discovery does not list
// it, and keeps no group pending; a CRD that serves one is re-discovered.
func TestS55FollowerNoServedVersionSendsNothing(t *testing.T) {
	srv := newFakeServer(t) // fakeGroup not served
	clk := testingclock.NewFakeClock(time.Now())
	_, f := runFollower(t, srv, clk)
	before := srv.groupRequests()
	crd := s55CRD(nil, "v1")
	group, expect := crdExpectation(crd, false)
	f.mark(group, "crd/"+crd.Name, expect)
	pending, _ := f.pendingState(group)
	assert.False(t, pending, "nothing to wait for")
	require.Eventually(t, clk.HasWaiters, 5*time.Second, time.Millisecond)
	stepWhenWaiting(t, clk, time.Minute)
	require.Eventually(t, clk.HasWaiters, 5*time.Second, time.Millisecond)
	assert.Equal(t, before, srv.groupRequests(), "no re-discovery of the group")

	// Control: the same CRD serving v1 does make the follower re-discover the group.
	crd = s55CRD(map[string]bool{"v1": true}, "v1")
	group, expect = crdExpectation(crd, false)
	f.mark(group, "crd/"+crd.Name, expect)
	require.Eventually(t, func() bool { return srv.groupRequests() > before }, 5*time.Second, time.Millisecond)
}
