// Command controller is a controller-runtime controller on kindex's cache: it reconciles the
// demo's Widgets (widgets.demo.kindex.io) and the Pods each owns through a workqueue, with
// controller-runtime's builder, manager and client; only the manager's NewCache differs.
//
// Against the demo control plane (`make demo DEMO_FLAGS=-hold`, then export the KUBECONFIG it
// prints), from the crcache directory:
//
//	go run ./examples/controller -namespace kindex-demo-1
//
// Flags: -kubeconfig, -context, -namespace ("" for all), -report (10s; 0 for none),
// -install-crd (true: install the Widget CRD if it is missing).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	var (
		o          = options{out: os.Stdout}
		kubeconfig string
		kubectx    string
		installCRD bool
	)
	flag.StringVar(&kubeconfig, "kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, then ~/.kube/config)")
	flag.StringVar(&kubectx, "context", "", "kubeconfig context")
	flag.StringVar(&o.namespace, "namespace", "kindex-demo-1", `namespace to reconcile ("" for all)`)
	flag.DurationVar(&o.report, "report", 10*time.Second, "interval of the cache report (0: none)")
	flag.BoolVar(&installCRD, "install-crd", true, "install the Widget CRD if it is missing")
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseDevMode(true)))

	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubectx}).ClientConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if installCRD {
		if err := ensureCRD(ctx, cfg); err != nil {
			fmt.Fprintln(os.Stderr, "controller:", err)
			os.Exit(1)
		}
	}
	if err := run(ctx, cfg, o); err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}
}

// ensureCRD creates the Widget CRD unless it exists, and waits until it is Established.
func ensureCRD(ctx context.Context, cfg *rest.Config) error {
	cs, err := apiextclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crds := cs.ApiextensionsV1().CustomResourceDefinitions()
	crd := WidgetCRD()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create CRD %s: %w", crd.Name, err)
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextv1.Established && c.Status == apiextv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}
