package demoenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kindex/kindex/internal/testenv"
)

// Local is a control plane running on loopback: an etcd and a kube-apiserver started from the
// binaries `make controlplane` caches, in a temporary directory.
type Local struct {
	// Config is an admin (system:masters) config for the apiserver.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for Config, in the control plane's
	// directory, for trying the other examples against it while it runs.
	Kubeconfig string
	cp         *testenv.ControlPlane
}

// StartLocal starts a control plane and waits until the apiserver is ready (about 5 s). If
// ctx ends first (Ctrl-C), the processes started so far are stopped and ctx's error is
// returned. Progress lines go to progress (nil: silent).
func StartLocal(ctx context.Context, progress io.Writer) (*Local, error) {
	if progress == nil {
		progress = io.Discard
	}
	fmt.Fprintf(progress, "starting a local control plane (kube-apiserver %s, etcd %s) from %s\n",
		testenv.KubeAPIServerVersion, testenv.EtcdVersion, testenv.BinDir())
	start := time.Now()
	type result struct {
		cp  *testenv.ControlPlane
		err error
	}
	ch := make(chan result, 1)
	go func() {
		cp, err := testenv.Start(testenv.Options{})
		ch <- result{cp, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-ctx.Done():
		// testenv.Start cannot be interrupted; wait for it, then stop what it started.
		if r = <-ch; r.cp != nil {
			r.cp.Stop()
		}
		return nil, ctx.Err()
	}
	if r.err != nil {
		return nil, r.err
	}
	l := &Local{Config: r.cp.AdminConfig(), cp: r.cp}
	l.Kubeconfig = filepath.Join(r.cp.Dir(), "kubeconfig")
	if err := WriteKubeconfig(l.Kubeconfig, l.Config, "default"); err != nil {
		r.cp.Stop()
		return nil, err
	}
	fmt.Fprintf(progress, "control plane ready at %s in %v\n", r.cp.Host(), time.Since(start).Round(100*time.Millisecond))
	return l, nil
}

// Stop stops the apiserver and etcd and removes their directory. It is safe to call twice.
func (l *Local) Stop() { l.cp.Stop() }

// WriteKubeconfig writes a kubeconfig file with one context, "kindex", for cfg (a bearer
// token and a CA, as the local control plane's configs have) and namespace.
func WriteKubeconfig(path string, cfg *rest.Config, namespace string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kindex"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["kindex"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["kindex"] = &clientcmdapi.Context{Cluster: "kindex", AuthInfo: "kindex", Namespace: namespace}
	kc.CurrentContext = "kindex"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*kc, path)
}
