//go:build tools

// Package controlplane is a build-only module: it pins the kube-apiserver source that
// the kindex integration tests run. It exists so that the library's own go.mod never requires
// k8s.io/kubernetes. Build with `make controlplane` from the repository root.
package controlplane

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
