// Package demoenv gives kindex's examples something to run against: a local control plane
// (kube-apiserver and etcd from `make controlplane`, started with internal/testenv) and a
// deterministic seed of namespaces, ConfigMaps and custom resources of the demo CRD
// widgets.demo.kindex.io.
//
// It is a helper of the examples and their tests, not part of what a user copies: the
// examples themselves take any cluster through a kubeconfig.
package demoenv
