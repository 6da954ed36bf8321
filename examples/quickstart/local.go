package main

// The demo plumbing: a local control plane and the seed. Nothing here is needed to use
// kindex; quickstart.go is the part to read.

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/internal/demoenv"
)

// startLocal starts a control plane on loopback, seeds it and returns its admin config and
// the function that stops it.
func startLocal(ctx context.Context, o options, out io.Writer) (*rest.Config, func(), error) {
	fmt.Fprintln(out, "== 0. local control plane")
	l, err := demoenv.StartLocal(ctx, out)
	if err != nil {
		return nil, func() {}, err
	}
	stop := func() {
		fmt.Fprintln(out, "stopping the local control plane")
		l.Stop()
	}
	if _, _, err := seed(ctx, l.Config, options{keep: true}, out); err != nil {
		return nil, stop, err
	}
	if o.hold {
		fmt.Fprintf(out, "the control plane keeps running until Ctrl-C; try the other examples with\n  export KUBECONFIG=%s\n", l.Kubeconfig)
	}
	return l.Config, stop, nil
}

// seed writes the demo CRD and objects; unless o.keep, the returned function deletes them.
func seed(ctx context.Context, cfg *rest.Config, o options, out io.Writer) (*rest.Config, func(), error) {
	fmt.Fprintf(out, "seeding the CRD %s, 3 namespaces, 60 ConfigMaps and 240 widgets\n", demoenv.WidgetResource)
	start := time.Now()
	s, err := demoenv.Apply(ctx, cfg, demoenv.Options{Progress: out})
	if err != nil {
		return nil, func() {}, err
	}
	fmt.Fprintf(out, "seeded %d objects in %v\n", s.Objects(), time.Since(start).Round(10*time.Millisecond))
	if o.keep {
		return cfg, func() {}, nil
	}
	return cfg, func() {
		// ctx may be cancelled (Ctrl-C): clean up with a fresh, bounded one.
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Cleanup(cctx); err != nil {
			fmt.Fprintf(out, "cleanup: %v\n", err)
			return
		}
		fmt.Fprintln(out, "deleted the demo namespaces (and the CRD, if the seed created it)")
	}, nil
}
