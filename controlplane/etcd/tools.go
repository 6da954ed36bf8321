//go:build tools

// Package etcd is a build-only module pinning the etcd server the integration tests run.
package etcd

import _ "go.etcd.io/etcd/server/v3"
