package testenv

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// WatchGone reports whether a watch from resourceVersion rv fails with 410 Gone (or
// Expired), as an error or as an ERROR event, within 2 seconds: after CompactEtcd, wait for
// it with Eventually before counting on a watcher's 410. start is a typed or dynamic
// client's Watch, for example cs.CoreV1().ConfigMaps(ns).Watch.
func WatchGone(ctx context.Context, start func(context.Context, metav1.ListOptions) (watch.Interface, error), rv string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	w, err := start(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		return apierrors.IsGone(err) || apierrors.IsResourceExpired(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			err := apierrors.FromObject(ev.Object)
			return apierrors.IsGone(err) || apierrors.IsResourceExpired(err)
		}
	}
	return false
}
