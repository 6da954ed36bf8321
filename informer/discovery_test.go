package informer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// staticFollower is a discovery client that says whether it follows the server.
type staticFollower struct {
	*fakeDiscovery
	following bool
}

func (d staticFollower) Following() bool { return d.following }

// Timed re-checks of parked entries ask discovery afresh only when the client follows
// nothing, and then once per group per RecheckInitial, however many entries ask.
func TestFreshRecheckDueOncePerGroupWhenNotFollowing(t *testing.T) {
	c := &core{disc: staticFollower{fakeDiscovery: newFakeDiscovery(), following: false}, in: hooks{RecheckInitial: time.Hour}}
	assert.True(t, c.freshRecheckDue("example.com"), "first entry of a group asks afresh")
	for range 100 {
		assert.False(t, c.freshRecheckDue("example.com"), "the others read the refreshed cache")
	}
	assert.True(t, c.freshRecheckDue("other.example.com"), "another group asks for itself")

	c.in.RecheckInitial = 0 // as if RecheckInitial had passed
	assert.True(t, c.freshRecheckDue("example.com"), "due again after RecheckInitial")

	for _, d := range []Discovery{staticFollower{fakeDiscovery: newFakeDiscovery(), following: true}, newFakeDiscovery()} {
		c := &core{disc: d, in: hooks{}}
		assert.False(t, c.freshRecheckDue("example.com"), "%T: a following client's cache is kept current by its events", d)
	}
}
