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

// A local APIService implies nothing about discovery until it is deleted: the aggregator
// marks it Available at once, while a CRD group's discovery lists only Established CRDs. A
// CRD left unestablished by an apiserver crash (until the apiserver's 5-minute informer
// resync) made the expectation "its version is served" fail for 30 s and the group given up.
func TestAPIServiceExpectations(t *testing.T) {
	served := &fetchResult{seq: 1, full: true, groups: map[string]*fetchedGroup{}}
	addGroup(served, fakeGroup, "v1", []Resource{mkRes(fakeGroup, "v1", "widgets", "Widget")})
	withVersion := emptySnapshot().merge(served)
	without := emptySnapshot()

	for _, available := range []bool{true, false} {
		_, expect := apiServiceExpectation(apiService(true, available), false)
		assert.Nil(t, expect, "a local APIService (Available %v) implies nothing", available)
	}
	_, expect := apiServiceExpectation(apiService(false, true), false)
	assert.True(t, expect(withVersion) && !expect(without), "an Available remote APIService's version answers")
	_, expect = apiServiceExpectation(apiService(false, false), false)
	assert.True(t, !expect(withVersion) && expect(without), "an unavailable remote APIService's version does not")
	for _, local := range []bool{true, false} {
		_, expect = apiServiceExpectation(apiService(local, true), true)
		assert.True(t, !expect(withVersion) && expect(without), "a deleted APIService (local %v) is gone", local)
	}
}
