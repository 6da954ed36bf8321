package informer

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kindex/kindex/discovery"
)

// A watch-all set says it starts without API groups only for the failed groups its filter
// may select.
func TestUnavailableForTheFilter(t *testing.T) {
	down := &discovery.PartialDiscoveryError{Groups: []*discovery.GroupUnavailableError{
		{Group: "metrics.k8s.io", Err: errors.New("503")}, {Group: "widgets.example.com", Err: errors.New("stale")}}}
	for _, tc := range []struct {
		filter discovery.Filter
		want   []string
	}{
		{discovery.Filter{}, []string{"metrics.k8s.io", "widgets.example.com"}},
		{discovery.Filter{ExcludeGroups: []string{"metrics.k8s.io"}}, []string{"widgets.example.com"}},
		{discovery.Filter{IncludeGroups: []string{"apps"}}, nil},
		{discovery.Filter{IncludeGroups: []string{"apps", "metrics.k8s.io"}}, []string{"metrics.k8s.io"}},
		{discovery.Filter{IncludeResources: []string{"gadgets.widgets.example.com", "pods"}}, []string{"widgets.example.com"}},
		{discovery.Filter{IncludeResources: []string{"configmaps"}}, nil},
		// A resource of a subgroup is not of the failed parent group, nor the reverse.
		{discovery.Filter{IncludeResources: []string{"foos.sub.widgets.example.com"}}, nil},
		{discovery.Filter{IncludeResources: []string{"foos.example.com"}}, nil},
	} {
		assert.Equal(t, tc.want, unavailableFor(tc.filter, down), "%+v", tc.filter)
	}
	one := fmt.Errorf("wrapped: %w", &discovery.GroupUnavailableError{Group: "metrics.k8s.io", Err: errors.New("503")})
	assert.Equal(t, []string{"metrics.k8s.io"}, unavailableFor(discovery.Filter{}, one))
	assert.Nil(t, unavailableFor(discovery.Filter{IncludeGroups: []string{"apps"}}, one))
	assert.Equal(t, []string{"*"}, unavailableFor(discovery.Filter{IncludeGroups: []string{"apps"}}, errors.New("other")))
}
