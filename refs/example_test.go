package refs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kindex/kindex/refs"
)

// A program follows references across a whole cluster: built-in rules plus one for a custom
// resource, then the questions people ask before they change or delete something.
func ExampleNew() {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		panic(err)
	}
	rules := append(refs.BuiltinRules(), refs.Rule{
		Name: "certificates:issuer", From: schema.GroupResource{Group: "cert-manager.io", Resource: "certificates"},
		Path: "{.spec.issuerRef}", To: schema.GroupResource{Group: "cert-manager.io"}, // the group of refs naming none
		KindField: "kind", GroupField: "group", NameField: "name", DefaultKind: "Issuer", // the kind of refs naming none
	})
	g, err := refs.New(cfg, refs.Options{Rules: rules})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := g.Start(ctx); err != nil {
		panic(err)
	}
	defer g.Shutdown()
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := g.WaitForSync(wctx); err != nil {
		fmt.Println("not everything synced; answers about it are Unknown:", err)
	}

	// What uses this Secret, and what uses those, to any depth?
	secret := refs.ObjectRef{Resource: "secrets", Namespace: "shop", Name: "db-password"}
	users, err := g.Referrers(secret, 0)
	if err != nil && !errors.Is(err, refs.ErrIncomplete) {
		panic(err) // refs.ErrUnknownResource: a resource the graph does not know ("secret")
	}
	fmt.Print(refs.Tree(secret, users, true))
	// What does this Deployment depend on?
	deploy := refs.ObjectRef{Group: "apps", Resource: "deployments", Namespace: "shop", Name: "web"}
	used, _ := g.References(deploy, 0) // an *IncompleteError: deployments not all cached
	fmt.Print(refs.Tree(deploy, used, false))
	// What is referenced and missing?
	for _, e := range g.Dangling() {
		if e.State == refs.Missing {
			fmt.Println(e)
		}
	}
	// Which ConfigMaps does nothing use?
	unused, err := g.Unreferenced(schema.GroupResource{Resource: "configmaps"})
	if errors.Is(err, refs.ErrIncomplete) {
		fmt.Println("some resources are not synced:", err)
	}
	for _, o := range unused {
		fmt.Println("unused:", o)
	}
	// Which Services select no Pod?
	empty, _ := g.EmptySelectors(schema.GroupResource{Resource: "services"})
	for _, o := range empty {
		fmt.Println("selects nothing:", o)
	}
}

// Tree arranges the edges of a walk (here written by hand; References returns such edges)
// for printing.
func ExampleTree() {
	pod := refs.ObjectRef{Resource: "pods", Namespace: "shop", Name: "web-1"}
	rs := refs.ObjectRef{Group: "apps", Resource: "replicasets", Namespace: "shop", Name: "web-1"}
	deploy := refs.ObjectRef{Group: "apps", Resource: "deployments", Namespace: "shop", Name: "web"}
	sa := refs.ObjectRef{Resource: "serviceaccounts", Namespace: "shop", Name: "web"}
	cm := refs.ObjectRef{Resource: "configmaps", Namespace: "shop", Name: "web-config"}
	edges := []refs.Edge{
		{Rule: "owner", From: pod, To: rs, Depth: 1, State: refs.Present},
		{Rule: "pods:serviceaccount", From: pod, To: sa, Depth: 1, State: refs.Present},
		{Rule: "pods:volume-configmap", From: pod, To: cm, Depth: 1, State: refs.Missing, Reason: "not found"},
		{Rule: "owner", From: rs, To: deploy, Depth: 2, State: refs.Present},
		{Rule: "replicasets.apps:serviceaccount", From: rs, To: sa, Depth: 2, State: refs.Present},
	}
	fmt.Print(refs.Tree(pod, edges, false))
	// Output:
	// pods/shop/web-1
	// ├── [owner] replicasets.apps/shop/web-1
	// │   ├── [owner] deployments.apps/shop/web
	// │   └── [replicasets.apps:serviceaccount] serviceaccounts/shop/web (shown above)
	// ├── [pods:serviceaccount] serviceaccounts/shop/web
	// └── [pods:volume-configmap] configmaps/shop/web-config (Missing: not found)
}

// Rules for custom resources are data: a JSONPath expression and how its values name
// targets. CheckRules reports the first one that cannot be used.
func ExampleCheckRules() {
	widgets := schema.GroupResource{Group: "example.com", Resource: "widgets"}
	secrets := schema.GroupResource{Resource: "secrets"}
	good := []refs.Rule{
		// {.spec.secretRef.name} names a Secret in the widget's namespace.
		{Name: "widgets:secret", From: widgets, Path: "{.spec.secretRef.name}", To: secrets, Namespace: refs.NamespaceSame},
		// Pods a widget selects by label.
		{Name: "widgets:selector", From: widgets, Path: "{.spec.selector}", To: schema.GroupResource{Resource: "pods"},
			Selector: refs.SelectorLabelSelector},
	}
	fmt.Println(refs.CheckRules(good))
	bad := []refs.Rule{{Name: "widgets:broken", From: widgets, Path: "{.spec.secretRef.name", To: secrets}}
	err := refs.CheckRules(bad)
	fmt.Println(errors.Is(err, refs.ErrInvalidRule))
	// Output:
	// <nil>
	// true
}
