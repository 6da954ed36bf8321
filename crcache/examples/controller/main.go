// Command controller is a controller-runtime controller on kindex's cache: it reconciles the
// demo's Widgets (widgets.demo.kindex.io) and the Pods each owns through a workqueue, with
// controller-runtime's builder, manager and client; only the manager's NewCache differs.
//
// Against the demo control plane (`make demo DEMO_FLAGS=-hold`, then export the KUBECONFIG it
// prints), from the crcache directory:
//
//	go run ./examples/controller -namespace kindex-demo-1
//
// Flags: -kubeconfig (controller-runtime's), -context, -namespace ("" for all), -report (10s;
// 0 for none), -install-crd (true: install the Widget CRD if it is missing).
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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	o, kubectx, installCRD := defineFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	// controller-runtime's config: its -kubeconfig flag, $KUBECONFIG, ~/.kube/config.
	cfg, err := config.GetConfigWithContext(*kubectx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if *installCRD {
		if err := ensureCRD(ctx, cfg); err != nil {
			fmt.Fprintln(os.Stderr, "controller:", err)
			os.Exit(1)
		}
	}
	if err := run(ctx, cfg, *o); err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}
}

// defineFlags defines the command's flags on fs, next to the -kubeconfig flag
// controller-runtime defines on the command line.
func defineFlags(fs *flag.FlagSet) (o *options, kubectx *string, installCRD *bool) {
	o = &options{out: os.Stdout}
	kubectx = fs.String("context", "", "kubeconfig context")
	fs.StringVar(&o.namespace, "namespace", "kindex-demo-1", `namespace to reconcile ("" for all)`)
	fs.DurationVar(&o.report, "report", 10*time.Second, "interval of the cache report (0: none)")
	installCRD = fs.Bool("install-crd", true, "install the Widget CRD if it is missing")
	return o, kubectx, installCRD
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
