package shard

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"

	"github.com/kindex/kindex/informer"
)

// failLeaseUpdate answers the next PUT of one Lease with a 500 once armed, as an API
// server failing one renewal would.
type failLeaseUpdate struct {
	rt    http.RoundTripper
	name  string
	armed *atomic.Bool
}

func (f failLeaseUpdate) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/leases/"+f.name) && f.armed.CompareAndSwap(true, false) {
		return &http.Response{StatusCode: http.StatusInternalServerError, Status: "500 Internal Server Error",
			Header: http.Header{"Content-Type": []string{"text/plain"}}, Body: http.NoBody, Request: r}, nil
	}
	return f.rt.RoundTrip(r)
}

// A member whose loop stops for longer than a LeaseDuration without any of its lists
// failing (its process paused: here its goroutine is held in its logger) saw nothing of an
// outage when it runs again: the others kept renewing meanwhile, and a Lease that nobody
// renewed while it was paused is that of a replica that died. It counts that one out at
// once, as the others already do, instead of counting it live for another LeaseDuration
// from its first list, which gave it a range the others give to nobody and left it out of
// the range they own.
func TestMemberPausedDoesNotReviveADeadMember(t *testing.T) {
	cp := plain
	ns := cp.Namespace(t)
	var failRenew, hold atomic.Bool
	release := make(chan struct{})
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	cfg := cp.AdminConfig()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return failLeaseUpdate{rt: rt, name: "g-b", armed: &failRenew}
	})
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)

	a := startMember(t, cp.Clientset(t), ns, "g", "a")
	// b's loop stops in its logger at the line of the renewal that fails, after the list that
	// follows it: as a process paused between two rounds.
	logger := funcr.New(func(_, args string) {
		if strings.Contains(args, "Cannot renew the shard Lease") && hold.CompareAndSwap(true, false) {
			<-release
		}
	}, funcr.Options{})
	const lease = 3 * time.Second
	b, err := New(Options{Client: client, Namespace: ns, Group: "g", Identity: "b", LeaseDuration: lease,
		RenewPeriod: 100 * time.Millisecond, Logger: logger})
	require.NoError(t, err)
	bctx, bcancel := context.WithCancel(context.Background())
	bdone := make(chan struct{})
	go func() { _ = b.Run(bctx); close(bdone) }()
	t.Cleanup(func() { bcancel(); <-bdone })
	c := startMember(t, cp.Clientset(t), ns, "g", "c")

	all := []string{"a", "b", "c"}
	require.Eventually(t, func() bool {
		_, ok := b.Assignment()
		return ok && slices.Equal(a.m.Members(), all) && slices.Equal(b.Members(), all) && slices.Equal(c.m.Members(), all)
	}, 20*time.Second, 20*time.Millisecond, "three members")

	hold.Store(true)
	failRenew.Store(true)
	require.Eventually(t, func() bool { return !hold.Load() }, 10*time.Second, 10*time.Millisecond, "b's loop is held")
	paused := time.Now()
	// c dies while b is paused: its Lease stays until it expires.
	c.m.mu.Lock()
	c.m.crash = true
	c.m.mu.Unlock()
	c.stop()
	<-c.done
	require.Eventually(t, func() bool {
		return slices.Equal(a.m.Members(), []string{"a"}) && time.Since(paused) > lease+500*time.Millisecond
	}, 20*time.Second, 20*time.Millisecond, "a counts b and c out")

	released = true
	close(release)
	resumed := time.Now()
	two := Split(informer.ShardByUID, 2)
	// b renews and lists at once; c's Lease expired seconds ago. Well before a LeaseDuration
	// has passed since b runs again, both members see the group as [a b] and own half each.
	agree := func() bool {
		as, aok := a.m.Assignment()
		bs, bok := b.Assignment()
		return aok && bok && slices.Equal(a.m.Members(), []string{"a", "b"}) && slices.Equal(b.Members(), []string{"a", "b"}) &&
			as.Equal(two[0]) && bs.Equal(two[1])
	}
	if !assert.Eventually(t, agree, lease/2, 20*time.Millisecond, "a and b split the space in two") {
		t.Fatalf("%v after b ran again (c died %v before that), a sees %v, b sees %v",
			time.Since(resumed).Round(time.Millisecond), resumed.Sub(paused).Round(time.Millisecond), a.m.Members(), b.Members())
	}
}
