package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { testenv.Main(m, &cp, testenv.Options{}) }

// writeKubeconfig writes a kubeconfig with one context for cfg (a bearer token and a CA, as
// the test control plane's configs have) whose namespace is ns.
func writeKubeconfig(t testing.TB, cfg *rest.Config, ns string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test", Namespace: ns}
	kc.CurrentContext = "test"
	dir, err := os.MkdirTemp(cp.Dir(), "kubeconfig-") // outlives subtests; goes with the control plane
	require.NoError(t, err)
	path := filepath.Join(dir, "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*kc, path))
	return path
}

// result is what one run printed.
type result struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// kquery runs the command with the kubeconfig and returns what it printed.
func kquery(t testing.TB, kubeconfig string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut testsupport.Buffer
	start := time.Now()
	code := run(ctx, append([]string{"--kubeconfig", kubeconfig}, args...), &out, &errOut)
	return result{code: code, stdout: out.String(), stderr: errOut.String(), took: time.Since(start)}
}

// applier creates objects from YAML documents with the admin client: the object, then its
// status through the status subresource where the resource has one.
type applier struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func newApplier(t testing.TB) *applier {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cp.AdminConfig())
	require.NoError(t, err)
	return &applier{dyn: cp.Dynamic(t), mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

func (a *applier) resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, schema.GroupVersionResource, error) {
	gvk := obj.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		a.mapper.(meta.ResettableRESTMapper).Reset()
		if m, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return nil, schema.GroupVersionResource{}, err
		}
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return a.dyn.Resource(m.Resource).Namespace(obj.GetNamespace()), m.Resource, nil
	}
	obj.SetNamespace("")
	return a.dyn.Resource(m.Resource), m.Resource, nil
}

// apply creates each document of docs in namespace ns (namespaced resources), then sets
// its status. Objects that exist are left as they are.
func (a *applier) apply(t testing.TB, ns, docs string) {
	t.Helper()
	ctx := context.Background()
	for _, doc := range strings.Split(docs, "\n---\n") {
		var m map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &m), doc)
		if m == nil {
			continue
		}
		obj := &unstructured.Unstructured{Object: m}
		if obj.GetNamespace() == "" {
			obj.SetNamespace(ns)
		}
		ri, gvr, err := a.resource(obj)
		require.NoError(t, err, "%s %s", obj.GetKind(), obj.GetName())
		status, hasStatus := m["status"]
		created, err := ri.Create(ctx, obj, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		require.NoError(t, err, "create %s %s", gvr.Resource, obj.GetName())
		if hasStatus {
			created.Object["status"] = status
			_, err := ri.UpdateStatus(ctx, created, metav1.UpdateOptions{})
			if !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) { // no status subresource: written with the object
				require.NoError(t, err, "status of %s %s", gvr.Resource, obj.GetName())
			}
		}
		if obj.GetKind() == "CustomResourceDefinition" {
			a.waitServed(t, created)
		}
		if len(obj.GetFinalizers()) > 0 { // kept Terminating by its finalizer
			require.NoError(t, ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{}))
		}
	}
}

// waitServed waits until the resource a CRD defines answers a list.
func (a *applier) waitServed(t testing.TB, crd *unstructured.Unstructured) {
	t.Helper()
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	version, _, _ := unstructured.NestedString(versions[0].(map[string]any), "name")
	gvr := schema.GroupVersionResource{Group: group, Version: version, Resource: plural}
	testenv.Eventually(t, time.Minute, func() bool {
		_, err := a.dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{Limit: 1})
		return err == nil
	}, "CRD %s served", crd.GetName())
	a.mapper.(meta.ResettableRESTMapper).Reset()
}

// namespace creates a namespace with a fixed name (golden outputs show it) once.
func namespace(t testing.TB, name string) {
	t.Helper()
	_, err := cp.Dynamic(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(context.Background(),
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}},
		metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
}

var (
	parityOnce sync.Once
	parityErr  error
)

// seedParity creates testdata/parity.yaml in the namespace kquery-parity, once.
func seedParity(t *testing.T) {
	t.Helper()
	parityOnce.Do(func() {
		parityErr = errSeed // until the end is reached (a failed require ends the goroutine)
		b, err := os.ReadFile("testdata/parity.yaml")
		require.NoError(t, err)
		namespace(t, "kquery-parity")
		newApplier(t).apply(t, "kquery-parity", string(b))
		parityErr = nil
	})
	require.NoError(t, parityErr)
}

var errSeed = apierrors.NewBadRequest("seeding failed")
