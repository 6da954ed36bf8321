package main

import (
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/dynamicinformer"
)

// scaleIndexes are the five JSONPath indexes of the scale target (make bench-scale): what
// tools that hold every Pod of a cluster look Pods up by.
var scaleIndexes = map[string]string{
	"node":    "{.spec.nodeName}",
	"phase":   "{.status.phase}",
	"image":   "{.spec.containers[*].image}",
	"app":     "{.metadata.labels.app}",
	"account": "{.spec.serviceAccountName}",
}

func init() {
	// The compact mode with five JSONPath indexes kept from the first object on.
	register("kindex-compact-indexed", func(cfg *rest.Config, ns string) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, dynamicinformer.Options{Namespace: ns, Indexes: scaleIndexes}, dynamicinformer.CompactOptions{})
	})
}
