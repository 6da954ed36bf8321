package informer

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// clusterIDTimeout bounds the request that identifies the cluster.
const clusterIDTimeout = 5 * time.Second

// clusterIdentity names the cluster behind the factory's address for snapshot identities:
// the UID of its kube-system namespace, which the API server creates when it first starts on
// an empty etcd. A cluster recreated at the same address (a test or development cluster
// deleted and created again) has another, so a snapshot of the old one is not resumed on
// the new one, where a watch from its resourceVersion could be accepted (the new etcd
// passed that number) and the old cluster's objects would never be deleted. An identity
// that may not read kube-system (403) or a server without it (404) names the cluster "":
// its snapshots are then tied to the address alone (package documentation, "Warm
// restart"). Another error leaves the cluster unknown: a snapshot is then neither
// resumed nor written, and the next use asks again.
type clusterIdentity struct {
	ask func(ctx context.Context) (string, error)

	mu    sync.Mutex
	known bool
	uid   string
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

func newClusterIdentity(client dynamic.Interface) *clusterIdentity {
	return &clusterIdentity{ask: func(ctx context.Context) (string, error) {
		ns, err := client.Resource(namespacesGVR).Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return string(ns.GetUID()), nil
	}}
}

// id returns the cluster's identity, asking the server the first time (and again after an
// error other than 403 or 404). The lock is not held across the request.
func (c *clusterIdentity) id(ctx context.Context) (string, error) {
	if c == nil {
		return "", nil
	}
	c.mu.Lock()
	known, uid := c.known, c.uid
	c.mu.Unlock()
	if known {
		return uid, nil
	}
	ctx, cancel := context.WithTimeout(ctx, clusterIDTimeout)
	defer cancel()
	uid, err := c.ask(ctx)
	switch {
	case err == nil:
	case apierrors.IsForbidden(err), apierrors.IsNotFound(err):
		uid = ""
	default:
		return "", fmt.Errorf("cannot identify the cluster (GET namespace %s): %w", metav1.NamespaceSystem, err)
	}
	c.mu.Lock()
	c.known, c.uid = true, uid
	c.mu.Unlock()
	return uid, nil
}

// fullIdentity is the identity a snapshot file is written and opened with: the informer's
// (which also names the file, so that a recreated cluster's snapshot replaces the old one)
// and the cluster's.
func (s *snapState) fullIdentity(ctx context.Context) (string, error) {
	uid, err := s.cfg.cluster.id(ctx)
	if err != nil {
		return "", err
	}
	return s.identity + "\ncluster=" + uid, nil
}
