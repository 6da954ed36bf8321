package discovery

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func apiService(local, available bool) *apiregv1.APIService {
	svc := &apiregv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1." + fakeGroup},
		Spec:       apiregv1.APIServiceSpec{Group: fakeGroup, Version: "v1"},
	}
	if !local {
		svc.Spec.Service = &apiregv1.ServiceReference{Namespace: "ns", Name: "svc"}
	}
	status := apiregv1.ConditionFalse
	if available {
		status = apiregv1.ConditionTrue
	}
	svc.Status.Conditions = []apiregv1.APIServiceCondition{{Type: apiregv1.Available, Status: status}}
	return svc
}

// An Available local APIService's version is not failed, listed or not: the aggregator
// marks it Available at once, while a CRD group's discovery lists only Established CRDs. A
// CRD left unestablished by an apiserver crash (until the apiserver's 5-minute informer
// resync) made the expectation "its version is listed" fail for 30 s and the group given up.
func TestAPIServiceExpectations(t *testing.T) {
	served := &fetchResult{seq: 1, full: true, groups: map[string]*fetchedGroup{}}
	addGroup(served, fakeGroup, "v1", []Resource{mkRes(fakeGroup, "v1", "widgets", "Widget")})
	withVersion := emptySnapshot().merge(served)
	without := emptySnapshot()
	failed := &fetchResult{seq: 2, groups: map[string]*fetchedGroup{}}
	failed.group(fakeGroup).failed["v1"] = assert.AnError
	versionFailed := withVersion.merge(failed)
	failed = &fetchResult{seq: 2, groups: map[string]*fetchedGroup{}}
	failed.group(fakeGroup).failed[""] = assert.AnError
	groupFailed := withVersion.merge(failed)

	_, expect := apiServiceExpectation(apiService(true, false), false)
	assert.Nil(t, expect, "an unavailable local APIService implies nothing")
	_, expect = apiServiceExpectation(apiService(true, true), false)
	assert.True(t, expect(withVersion), "an Available local APIService, listed")
	assert.True(t, expect(without), "an Available local APIService, not listed (a CRD not Established)")
	assert.False(t, expect(versionFailed), "an Available local APIService is not failed")
	assert.False(t, expect(groupFailed), "nor is its group")

	_, expect = apiServiceExpectation(apiService(false, true), false)
	assert.True(t, expect(withVersion) && !expect(without), "an Available remote APIService's version answers")
	_, expect = apiServiceExpectation(apiService(false, false), false)
	assert.True(t, !expect(withVersion) && expect(without), "an unavailable remote APIService's version does not")
	for _, local := range []bool{true, false} {
		_, expect = apiServiceExpectation(apiService(local, true), true)
		assert.True(t, !expect(withVersion) && expect(without), "a deleted APIService (local %v) is gone", local)
	}
}
