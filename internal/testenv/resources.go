package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// waitTimeout bounds every wait in the helpers below.
const waitTimeout = 60 * time.Second

// Clientset returns a typed admin client.
func (cp *ControlPlane) Clientset(t testing.TB) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(cp.AdminConfig())
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return c
}

// Dynamic returns a dynamic admin client.
func (cp *ControlPlane) Dynamic(t testing.TB) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(cp.AdminConfig())
	if err != nil {
		t.Fatalf("dynamic client: %v", err)
	}
	return c
}

// APIExtensions returns an admin client for CustomResourceDefinitions.
func (cp *ControlPlane) APIExtensions(t testing.TB) apiextclient.Interface {
	t.Helper()
	c, err := apiextclient.NewForConfig(cp.AdminConfig())
	if err != nil {
		t.Fatalf("apiextensions client: %v", err)
	}
	return c
}

var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

// UniqueName returns a DNS-1123 label derived from the test name with a random suffix.
func UniqueName(t testing.TB) string {
	base := strings.Trim(nonName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 40 {
		base = strings.Trim(base[len(base)-40:], "-")
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return base + "-" + hex.EncodeToString(b)
}

// Namespace creates a namespace unique to this test; it is deleted when the test ends.
func (cp *ControlPlane) Namespace(t testing.TB) string {
	t.Helper()
	cs := cp.Clientset(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: UniqueName(t)}}
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		// No namespace controller runs, so the namespace stays Terminating; its objects remain
		// but no other test sees them, because every test has its own namespace.
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// InstallCRD creates crd and waits until it is Established and its resource answers a
// list. The CRD is deleted when the test ends, if the test has not deleted it.
func (cp *ControlPlane) InstallCRD(t testing.TB, crd *apiextv1.CustomResourceDefinition) *apiextv1.CustomResourceDefinition {
	t.Helper()
	ctx := context.Background()
	client := cp.APIExtensions(t).ApiextensionsV1().CustomResourceDefinitions()
	created, err := client.Create(ctx, crd, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create CRD %s: %v", crd.Name, err)
	}
	t.Cleanup(func() { _ = client.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}) })
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		got, err := client.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextv1.Established && c.Status == apiextv1.ConditionTrue {
				created = got
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not Established: %v", crd.Name, err)
	}
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: storageVersion(crd), Resource: crd.Spec.Names.Plural}
	dyn := cp.Dynamic(t)
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("CRD %s resource %s not served: %v", crd.Name, gvr, err)
	}
	return created
}

func storageVersion(crd *apiextv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return crd.Spec.Versions[0].Name
}

// DeleteCRD deletes the named CRD and waits until it is gone.
func (cp *ControlPlane) DeleteCRD(t testing.TB, name string) {
	t.Helper()
	ctx := context.Background()
	client := cp.APIExtensions(t).ApiextensionsV1().CustomResourceDefinitions()
	if err := client.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("delete CRD %s: %v", name, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := client.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("CRD %s not deleted: %v", name, err)
	}
}

// NewCRD returns a namespaced CRD named <plural>.<group> with one served and stored version
// whose schema preserves unknown fields, so that tests may put anything in spec and status.
func NewCRD(group, kind, plural string, versions ...string) *apiextv1.CustomResourceDefinition {
	if len(versions) == 0 {
		versions = []string{"v1"}
	}
	preserve := true
	crd := &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: group,
			Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{
				Plural:   plural,
				Singular: strings.ToLower(kind),
				Kind:     kind,
				ListKind: kind + "List",
			},
		},
	}
	for i, v := range versions {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextv1.CustomResourceDefinitionVersion{
			Name:    v,
			Served:  true,
			Storage: i == 0,
			Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
				Type:                   "object",
				XPreserveUnknownFields: &preserve,
			}},
		})
	}
	return crd
}

// Grant binds rules to user: cluster-wide when namespace is empty, else in that namespace,
// and returns once the apiserver's authorizer allows what the rules grant (it follows RBAC
// objects through informers, so a grant takes effect a moment after its objects exist): a
// test that times how fast kindex notices a grant measures from when the grant can be
// noticed. It returns a function that revokes the grant and returns once the authorizer
// refuses again what the rules granted (or, if another grant still allows it, after a few
// seconds); the grant is also revoked, without that wait, when the test ends.
func (cp *ControlPlane) Grant(t testing.TB, user, namespace string, rules ...rbacv1.PolicyRule) (revoke func()) {
	t.Helper()
	ctx := context.Background()
	cs := cp.Clientset(t)
	name := UniqueName(t)
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	var del func() error
	if namespace == "" {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   subjects,
		}
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ClusterRole: %v", err)
		}
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ClusterRoleBinding: %v", err)
		}
		del = func() error {
			_ = cs.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
			return cs.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		}
	} else {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Rules: rules}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   subjects,
		}
		if _, err := cs.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Role: %v", err)
		}
		if _, err := cs.RbacV1().RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create RoleBinding: %v", err)
		}
		del = func() error {
			_ = cs.RbacV1().Roles(namespace).Delete(ctx, name, metav1.DeleteOptions{})
			return cs.RbacV1().RoleBindings(namespace).Delete(ctx, name, metav1.DeleteOptions{})
		}
	}
	var revoked bool
	remove := func() bool {
		if revoked {
			return false
		}
		revoked = true
		if err := del(); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("revoke grant %s: %v", name, err)
		}
		return true
	}
	t.Cleanup(func() { remove() })
	checks := accessChecks(user, namespace, rules)
	if err := cp.awaitAccess(cs, checks, true, waitTimeout); err != nil {
		t.Fatalf("grant %s: %v", name, err)
	}
	return func() {
		if remove() {
			// Another grant may still allow the same: then this wait ends without failing.
			_ = cp.awaitAccess(cs, checks, false, revokeWait)
		}
	}
}

// revokeWait bounds how long a revoke waits for the authorizer to refuse what it allowed.
const revokeWait = 5 * time.Second

// accessChecks are the access reviews that tell whether rules are in effect for user: one
// per resource rule, for its first verb, API group, resource and resource name (a rule
// grants all of its combinations at once). Non-resource rules are not checked.
func accessChecks(user, namespace string, rules []rbacv1.PolicyRule) []authorizationv1.SubjectAccessReview {
	var out []authorizationv1.SubjectAccessReview
	for _, r := range rules {
		if len(r.Verbs) == 0 || len(r.Resources) == 0 {
			continue
		}
		attrs := &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: r.Verbs[0], Resource: r.Resources[0]}
		if len(r.APIGroups) > 0 {
			attrs.Group = r.APIGroups[0]
		}
		if res, sub, ok := strings.Cut(attrs.Resource, "/"); ok {
			attrs.Resource, attrs.Subresource = res, sub
		}
		if len(r.ResourceNames) > 0 {
			attrs.Name = r.ResourceNames[0]
		}
		out = append(out, authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, ResourceAttributes: attrs}})
	}
	return out
}

// awaitAccess polls the access reviews until each is allowed (allowed true) or each is
// refused (false), or timeout passes.
func (cp *ControlPlane) awaitAccess(cs kubernetes.Interface, checks []authorizationv1.SubjectAccessReview, allowed bool, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, c := range checks {
		err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &c, metav1.CreateOptions{})
			if err != nil {
				return false, nil // the apiserver may be down in a fault test: try again
			}
			return sar.Status.Allowed == allowed, nil
		})
		if err != nil {
			return fmt.Errorf("the authorizer does not %s %+v after %v", map[bool]string{true: "allow", false: "refuse"}[allowed], *c.Spec.ResourceAttributes, timeout)
		}
	}
	return nil
}

// Eventually polls cond every 20ms until it returns true or timeout passes, then fails the
// test with msg. Use it instead of sleeps. The args are evaluated once, when Eventually is
// called; to report a value from the last poll, use EventuallyWith.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	EventuallyWith(t, timeout, cond, func() string { return fmt.Sprintf(msg, args...) })
}

// EventuallyWith is Eventually with a message built after the last poll.
func EventuallyWith(t testing.TB, timeout time.Duration, cond func() bool, msg func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %s", timeout, msg())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
