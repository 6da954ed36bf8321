package discovery_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kindex/kindex/discovery"
)

// A CRD that retires its version for another in one update (v1 served: false, v2 served
// and stored) changes its resource's version: subscribers get one Changed event from v1 to
// v2. The apiserver's discovery shows for a moment neither version; applied, that moment
// was a Removed then an Added, and watch-all sets told their handlers every object deleted.
// The deletion of the CRD afterwards is Removed, at once.
func TestRetiredVersionIsOneChange(t *testing.T) {
	ctx := context.Background()
	c, _ := startClient(t, cp.AdminConfig(), discovery.Options{})
	ev := subscribe(t, c)
	for i := range 3 { // the moment is short: several tries make it likelier to fall between rounds
		spec := uniqueCRD(t, "Retired")
		crd := cp.InstallCRD(t, spec.build())
		ev.waitFor(t, spec.gr(), 10*time.Second, "Added", func(e timedEvent) bool { return e.Type == discovery.Added })

		crds := cp.APIExtensions(t).ApiextensionsV1().CustomResourceDefinitions()
		cur, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		require.NoError(t, err)
		v2 := *cur.Spec.Versions[0].DeepCopy()
		v2.Name = "v2"
		cur.Spec.Versions[0].Served, cur.Spec.Versions[0].Storage = false, false
		cur.Spec.Versions = append(cur.Spec.Versions, v2)
		_, err = crds.Update(ctx, cur, metav1.UpdateOptions{})
		require.NoError(t, err)
		ev.waitFor(t, spec.gr(), 10*time.Second, "Changed to v2", func(e timedEvent) bool {
			return e.Type == discovery.Changed && e.Resource.GVR.Version == "v2"
		})
		var types []string
		for _, e := range ev.forGR(spec.gr()) {
			types = append(types, e.Type.String()+" "+e.Resource.GVR.Version)
		}
		require.Equal(t, []string{"Added v1", "Changed v2"}, types, "try %d", i)

		// Deleted, it is Removed (after a Changed without create while it terminates).
		cp.DeleteCRD(t, crd.Name)
		ev.waitFor(t, spec.gr(), bound, "Removed", func(e timedEvent) bool { return e.Type == discovery.Removed })
		after := ev.forGR(spec.gr())[2:]
		for _, e := range after[:len(after)-1] {
			assert.Equal(t, discovery.Changed, e.Type, "try %d: %v", i, after)
		}
		assert.Equal(t, discovery.Removed, after[len(after)-1].Type)
	}
}
