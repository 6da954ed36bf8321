package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kindex/kindex/internal/demoenv"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) {
	testenv.Main(m, &cp, testenv.Options{ExtraAPIServerArgs: []string{"--feature-gates=ShardedListAndWatch=true"}})
}

var line = regexp.MustCompile(`replica=(\S+) members=(\d+) settled=(\w+) objects=(\d+) filter=(\w*)`)

// TestShardedReplicasCount runs three replicas of the command in this process: once
// settled, each holds a share and the shares add up to the total.
func TestShardedReplicasCount(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, demoenv.WriteKubeconfig(kubeconfig, cp.AdminConfig(), "default"))
	ns := cp.Namespace(t)
	const total = 90
	cs := cp.Clientset(t)
	for i := range total {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	outs := make([]*testsupport.Buffer, 3)
	for i := range outs {
		outs[i] = &testsupport.Buffer{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			code := run(ctx, []string{"--kubeconfig", kubeconfig, "--lease-namespace", ns, "--identity", fmt.Sprintf("r%d", i),
				"--interval", "200ms", "--lease-duration", "3s", "-n", ns, "configmaps"}, outs[i], outs[i])
			assert.Equal(t, 0, code, outs[i].String())
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	last := func(out string) []string {
		m := line.FindAllStringSubmatch(out, -1)
		if len(m) == 0 {
			return nil
		}
		return m[len(m)-1]
	}
	require.Eventually(t, func() bool {
		sum := 0
		for _, o := range outs {
			l := last(o.String())
			if l == nil || l[2] != "3" || l[3] != "true" || l[5] != "server" {
				return false
			}
			n, _ := strconv.Atoi(l[4])
			sum += n
		}
		return sum == total
	}, 30*time.Second, 100*time.Millisecond, "three settled replicas whose counts add up to %d", total)
	for _, o := range outs {
		l := last(o.String())
		n, _ := strconv.Atoi(l[4])
		assert.Greater(t, n, 0, "every replica holds a share: %s", strings.TrimSpace(l[0]))
		t.Log(l[0])
	}
}

// TestShardedRefusesZeroLeaseDuration: a Lease duration of 0 would leave the replica no
// time to hand its range over on SIGTERM (Member.Leave waits at most one Lease duration):
// the command refuses it before it joins a group.
func TestShardedRefusesZeroLeaseDuration(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, demoenv.WriteKubeconfig(kubeconfig, cp.AdminConfig(), "default"))
	ns := cp.Namespace(t)
	var out testsupport.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	code := run(ctx, []string{"--kubeconfig", kubeconfig, "--lease-namespace", ns, "--identity", "a", "--lease-duration", "0s",
		"-n", ns, "configmaps"}, &out, &out)
	assert.Equal(t, 1, code)
	assert.Contains(t, out.String(), "usage:")
}
