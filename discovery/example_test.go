package discovery_test

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/discovery"
)

// Resolving what a user typed, and telling the three kinds of failure apart.
func Example() {
	ctx := context.Background()
	var cfg *rest.Config // from clientcmd or rest.InClusterConfig
	c, err := discovery.New(cfg, discovery.Options{})
	if err != nil {
		panic(err)
	}
	if err := c.Start(ctx); err != nil { // follow CRDs and APIServices until ctx ends
		panic(err)
	}
	defer c.Wait()

	r, err := c.Resolve(ctx, "deploy.apps")
	var amb *discovery.AmbiguousError
	switch {
	case err == nil:
		fmt.Println(r.GVR, r.Namespaced)
	case meta.IsNoMatchError(err):
		fmt.Println("no such resource")
	case errors.As(err, &amb):
		fmt.Println("qualify it with a group; candidates:", amb.Candidates)
	case errors.Is(err, discovery.ErrGroupUnavailable):
		fmt.Println("unknown until the group recovers:", err)
	}
}

// Watch-everything consumers subscribe first, then list, so that no change is missed.
func ExampleClient_Subscribe() {
	ctx := context.Background()
	var c *discovery.Client // from discovery.New, started
	unsubscribe, err := c.Subscribe(func(e discovery.Event) {
		switch e.Type {
		case discovery.Added:
			fmt.Println("start an informer for", e.Resource.GVR)
		case discovery.Changed:
			fmt.Println("restart", e.Old.GVR, "as", e.Resource.GVR)
		case discovery.Removed:
			fmt.Println("stop the informer for", e.Resource.GVR)
		}
	})
	if err != nil { // a nil handler
		return
	}
	defer unsubscribe()
	resources, err := c.Resources(ctx, discovery.Filter{ExcludeGroups: []string{"events.k8s.io"}})
	var partial *discovery.PartialDiscoveryError
	if errors.As(err, &partial) {
		fmt.Println("unavailable for now:", partial.FailedGroups())
	}
	for _, r := range resources {
		fmt.Println("start an informer for", r.GVR)
	}
}

func ExampleFilter_Matches() {
	f := discovery.Filter{
		IncludeGroups:    []string{"apps"},
		IncludeResources: []string{"pods"},
		ExcludeResources: []string{"replicasets.apps"},
	}
	for _, gr := range []schema.GroupResource{
		{Resource: "pods"}, {Resource: "services"},
		{Group: "apps", Resource: "deployments"}, {Group: "apps", Resource: "replicasets"},
	} {
		r := discovery.Resource{GVR: gr.WithVersion("v1")}
		fmt.Println(gr, f.Matches(r))
	}
	// Output:
	// pods true
	// services false
	// deployments.apps true
	// replicasets.apps false
}
