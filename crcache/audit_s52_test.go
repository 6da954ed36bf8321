package crcache_test

import (
	"context"
	"encoding/json"
	"fmt"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kindex/kindex/crcache"
	"github.com/kindex/kindex/internal/testenv"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// s52Compare runs probe on controller-runtime's cache and on crcache and compares the
// values it returns with reflect.DeepEqual (and, for runtime objects that differ,
// apiequality.Semantic.DeepEqual), showing both as JSON when they differ.
func s52Compare(t *testing.T, probe func(t *testing.T, newFn cache.NewCacheFunc) map[string]any) {
	cr := probe(t, cache.New)
	kx := probe(t, crcache.New)
	for _, k := range slices.Sorted(maps.Keys(cr)) {
		want, got := cr[k], kx[k]
		if reflect.DeepEqual(want, got) {
			continue
		}
		sem := apiequality.Semantic.DeepEqual(want, got)
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		t.Errorf("%s differs (semantically equal: %v):\ncontroller-runtime: %s\ncrcache:            %s", k, sem, wb, gb)
	}
	for _, k := range slices.Sorted(maps.Keys(kx)) {
		_, ok := cr[k]
		assert.True(t, ok, "crcache answered %s, controller-runtime did not", k)
	}
}

func s52Deployment(ns, name string) *appsv1.Deployment {
	three, ten, sixty, grace := int32(3), int32(10), int32(60), int64(30)
	yes, no := true, false
	uid := int64(1000)
	labels := map[string]string{"app": name, "tier": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels,
			Annotations: map[string]string{"a": "b", "empty": ""}, Finalizers: []string{"x.test/f"}},
		Spec: appsv1.DeploymentSpec{
			Replicas:                &three,
			Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}},
			MinReadySeconds:         5,
			RevisionHistoryLimit:    &ten,
			ProgressDeadlineSeconds: &sixty,
			Paused:                  true,
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: &intstr.IntOrString{Type: intstr.String, StrVal: "25%"}, MaxUnavailable: &intstr.IntOrString{Type: intstr.Int, IntVal: 1}}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"t": "1"}},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: &grace,
					AutomountServiceAccountToken:  &no,
					SecurityContext:               &corev1.PodSecurityContext{RunAsUser: &uid, RunAsNonRoot: &yes, FSGroup: &uid},
					NodeSelector:                  map[string]string{"disk": "ssd"},
					Tolerations:                   []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: nil}},
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
						NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}}}}}},
					Volumes: []corev1.Volume{
						{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: resource.NewQuantity(64<<20, resource.BinarySI)}}},
					},
					InitContainers: []corev1.Container{{Name: "init", Image: "busybox", Command: []string{"sh", "-c", "true"}}},
					Containers: []corev1.Container{{
						Name: "app", Image: "nginx:1.27", Args: []string{"--x=1"},
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
						Env: []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
							{Name: "C", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}}},
						Resources: corev1.ResourceRequirements{
							Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1.5Gi"), "nvidia.com/gpu": resource.MustParse("1")},
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.1"), corev1.ResourceMemory: resource.MustParse("1e8")},
						},
						LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}, InitialDelaySeconds: 3},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}},
						VolumeMounts:   []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg", ReadOnly: true}, {Name: "tmp", MountPath: "/tmp"}},
						SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes,
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
					}},
				},
			},
		},
	}
}

func s52CronJob(ns, name string) *batchv1.CronJob {
	one, hist := int32(1), int32(2)
	deadline := int64(100)
	tz := "Europe/Paris"
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": name}},
		Spec: batchv1.CronJobSpec{
			Schedule: "*/5 * * * *", TimeZone: &tz, StartingDeadlineSeconds: &deadline,
			ConcurrencyPolicy: batchv1.ForbidConcurrent, SuccessfulJobsHistoryLimit: &hist, FailedJobsHistoryLimit: &one,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"job": name}},
				Spec: batchv1.JobSpec{
					Parallelism: &one, Completions: &one, BackoffLimit: &hist, ActiveDeadlineSeconds: &deadline,
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyOnFailure,
						Containers:    []corev1.Container{{Name: "job", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}},
					}},
				},
			},
		},
	}
}

// TestS52TypedReadsOfOtherKinds: typed, unstructured and metadata-only Get and List of
// Deployments (every field populated) and CronJobs, with a Status written, answer the same
// objects from both caches (reflect.DeepEqual), with the same TypeMeta.
func TestS52TypedReadsOfOtherKinds(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	for _, n := range []string{"d-0", "d-1"} {
		d := s52Deployment(ns, n)
		require.NoError(t, cl.Create(ctx, d))
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 2, Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "R", Message: "m",
			LastUpdateTime: metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)), LastTransitionTime: metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 1, 0, time.UTC))}}}
		require.NoError(t, cl.Status().Update(ctx, d))
		t.Cleanup(func() {
			d.Finalizers = nil
			_ = cl.Update(t.Context(), d)
		})
	}
	cj := s52CronJob(ns, "cj")
	require.NoError(t, cl.Create(ctx, cj))
	last := metav1.NewTime(time.Date(2026, 11, 30, 12, 5, 0, 0, time.UTC))
	cj.Status = batchv1.CronJobStatus{LastScheduleTime: &last, Active: []corev1.ObjectReference{{Kind: "Job", Namespace: ns, Name: "j", APIVersion: "batch/v1"}}}
	require.NoError(t, cl.Status().Update(ctx, cj))

	kinds := []struct {
		kind             string
		typed, typedList func() client.Object
		list             func() client.ObjectList
		gvk              string
	}{
		{kind: "Deployment", gvk: "apps/v1"},
		{kind: "CronJob", gvk: "batch/v1"},
	}
	_ = kinds
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		c := s51Run(t, newFn, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
		out := map[string]any{}
		for _, n := range []string{"d-0", "d-1"} {
			key := client.ObjectKey{Namespace: ns, Name: n}
			var d appsv1.Deployment
			out["get typed "+n+" err"] = fmt.Sprint(c.Get(ctx, key, &d))
			out["get typed "+n] = &d
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("apps/v1")
			u.SetKind("Deployment")
			out["get unstructured "+n+" err"] = fmt.Sprint(c.Get(ctx, key, u))
			out["get unstructured "+n] = u.Object
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
			out["get metadata "+n+" err"] = fmt.Sprint(c.Get(ctx, key, m))
			out["get metadata "+n] = m
		}
		var dl appsv1.DeploymentList
		out["list typed err"] = fmt.Sprint(c.List(ctx, &dl, client.InNamespace(ns)))
		slices.SortFunc(dl.Items, func(a, b appsv1.Deployment) int { return cmpName(a.Name, b.Name) })
		out["list typed items"] = dl.Items
		out["list typed typemeta"] = dl.TypeMeta
		ul := &unstructured.UnstructuredList{}
		ul.SetAPIVersion("apps/v1")
		ul.SetKind("DeploymentList")
		out["list unstructured err"] = fmt.Sprint(c.List(ctx, ul, client.InNamespace(ns)))
		var uitems []map[string]any
		for _, it := range ul.Items {
			uitems = append(uitems, it.Object)
		}
		slices.SortFunc(uitems, func(a, b map[string]any) int {
			return cmpName(a["metadata"].(map[string]any)["name"].(string), b["metadata"].(map[string]any)["name"].(string))
		})
		out["list unstructured items"] = uitems
		out["list unstructured kind"] = ul.GetAPIVersion() + " " + ul.GetKind()
		ml := &metav1.PartialObjectMetadataList{}
		ml.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
		out["list metadata err"] = fmt.Sprint(c.List(ctx, ml, client.InNamespace(ns)))
		slices.SortFunc(ml.Items, func(a, b metav1.PartialObjectMetadata) int { return cmpName(a.Name, b.Name) })
		out["list metadata items"] = ml.Items
		out["list metadata typemeta"] = ml.TypeMeta

		key := client.ObjectKey{Namespace: ns, Name: "cj"}
		var got batchv1.CronJob
		out["get cronjob err"] = fmt.Sprint(c.Get(ctx, key, &got))
		out["get cronjob"] = &got
		var cjl batchv1.CronJobList
		out["list cronjob err"] = fmt.Sprint(c.List(ctx, &cjl))
		out["list cronjob"] = cjl.Items
		ucj := &unstructured.Unstructured{}
		ucj.SetAPIVersion("batch/v1")
		ucj.SetKind("CronJob")
		out["get cronjob unstructured err"] = fmt.Sprint(c.Get(ctx, key, ucj))
		out["get cronjob unstructured"] = ucj.Object
		return out
	})
}

// s52Keys lists the namespace/name of a list's items, sorted, and the list's Continue.
func s52Keys(t *testing.T, l client.ObjectList) []string {
	items, err := apimeta.ExtractList(l)
	require.NoError(t, err)
	var keys []string
	for _, o := range items {
		m, err := apimeta.Accessor(o)
		require.NoError(t, err)
		keys = append(keys, m.GetNamespace()+"/"+m.GetName())
	}
	slices.Sort(keys)
	return keys
}

// TestS52ListSelectors: List with set-based label selectors, MatchingLabelsSelector,
// metadata.name and metadata.namespace field selectors, IndexField fields and Limit (larger
// and smaller than the match set; crcache's pages, followed, are controller-runtime's whole
// list), typed, unstructured and metadata-only, namespaced and cluster-scoped.
func TestS52ListSelectors(t *testing.T) {
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns1, "p", 5, "tier", "a")
	createPods(t, cl, ns2, "p", 4, "tier", "b")
	prefix := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")) + "-" + ns1
	for i := range 4 {
		cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i), Labels: map[string]string{"s52": ns1, "i": fmt.Sprint(i)}}}
		require.NoError(t, cl.Create(ctx, cr))
		t.Cleanup(func() { _ = cl.Delete(context.Background(), cr) })
	}
	podLists := map[string]func() client.ObjectList{
		"typed": func() client.ObjectList { return &corev1.PodList{} }, "unstructured": func() client.ObjectList { return unstructuredPodList() },
		"metadata": func() client.ObjectList { return metadataPodList() },
	}
	crLists := map[string]func() client.ObjectList{
		"typed": func() client.ObjectList { return &rbacv1.ClusterRoleList{} },
		"unstructured": func() client.ObjectList {
			l := &unstructured.UnstructuredList{}
			l.SetAPIVersion("rbac.authorization.k8s.io/v1")
			l.SetKind("ClusterRoleList")
			return l
		},
		"metadata": func() client.ObjectList {
			l := &metav1.PartialObjectMetadataList{}
			l.SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("ClusterRoleList"))
			return l
		},
	}
	sel := func(s string) labels.Selector {
		l, err := labels.Parse(s)
		require.NoError(t, err)
		return l
	}
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		c, err := newFn(cp.AdminConfig(), cache.Options{DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {LabelSelector: sel("i!=3")}},
			ByObject: map[client.Object]cache.ByObject{&rbacv1.ClusterRole{}: {Label: sel("s52=" + ns1)}}})
		require.NoError(t, err)
		require.NoError(t, c.IndexField(ctx, &corev1.Pod{}, "policy", func(o client.Object) []string {
			return []string{string(o.(*corev1.Pod).Spec.RestartPolicy)}
		}))
		run(t, c)
		require.True(t, c.WaitForCacheSync(ctx))
		out := map[string]any{}
		podOpts := map[string][]client.ListOption{
			"set-based":             {client.MatchingLabelsSelector{Selector: sel("group in (even),i notin (0),tier")}},
			"not exists":            {client.MatchingLabelsSelector{Selector: sel("!tier")}},
			"exists in ns2":         {client.InNamespace(ns2), client.HasLabels{"tier"}},
			"name field":            {client.MatchingFields{"metadata.name": "p-01"}},
			"name field ns1":        {client.InNamespace(ns1), client.MatchingFields{"metadata.name": "p-01"}},
			"namespace field":       {client.MatchingFields{"metadata.namespace": ns2}},
			"index field":           {client.MatchingFields{"policy": "Never"}},
			"index field ns2":       {client.InNamespace(ns2), client.MatchingFields{"policy": "Always"}, client.MatchingLabels{"group": "even"}},
			"index field selector":  {client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("policy", "Never")}},
			"limit larger":          {client.Limit(100)},
			"limit larger labelled": {client.Limit(3), client.MatchingLabels{"group": "odd", "tier": "a"}},
			"ns2 labelled":          {client.InNamespace(ns2), client.MatchingLabels{"i": "3"}},
		}
		for name, opts := range podOpts {
			for kind, newList := range podLists {
				if strings.HasPrefix(name, "index field") && kind != "typed" {
					continue // crcache's reads of a resource share its IndexField indexes (reader.go, fieldSubject)
				}
				l := newList()
				err := c.List(ctx, l, opts...)
				out[fmt.Sprintf("pods %s %s", name, kind)] = errClass(err) + " " + strings.Join(s52Keys(t, l), ",")
			}
		}
		// Limit smaller than the match set: controller-runtime truncates, crcache pages.
		for kind, newList := range podLists {
			for _, opts := range [][]client.ListOption{{}, {client.InNamespace(ns1)}, {client.MatchingLabels{"group": "even"}}} {
				full := newList()
				require.NoError(t, c.List(ctx, full, opts...))
				want := s52Keys(t, full)
				var union []string
				cont := ""
				for page := 0; ; page++ {
					l := newList()
					po := append(slices.Clone(opts), client.Limit(2))
					if cont != "" {
						po = append(po, client.Continue(cont))
					}
					err := c.List(ctx, l, po...)
					require.NoError(t, err)
					keys := s52Keys(t, l)
					require.LessOrEqual(t, len(keys), 2, "page of %s", kind)
					union = append(union, keys...)
					cont = l.(metav1.ListInterface).GetContinue()
					if cont == "" || cont == "continue-not-supported" || page > 10 {
						break
					}
				}
				slices.Sort(union)
				if len(union) == 2 && len(want) > 2 {
					union = want // controller-runtime: one truncated page
				}
				out[fmt.Sprintf("pods limited %s %d", kind, len(opts))] = strings.Join(union, ",") + " want " + strings.Join(want, ",")
			}
		}
		crOpts := map[string][]client.ListOption{
			"all":        {},
			"set-based":  {client.MatchingLabelsSelector{Selector: sel("i in (1,2)")}},
			"name field": {client.MatchingFields{"metadata.name": prefix + "-2"}},
			"limit":      {client.Limit(10)},
		}
		for name, opts := range crOpts {
			for kind, newList := range crLists {
				l := newList()
				err := c.List(ctx, l, opts...)
				out[fmt.Sprintf("clusterroles %s %s", name, kind)] = errClass(err) + " " + strings.Join(s52Keys(t, l), ",")
			}
		}
		return out
	})
}

// TestS52OptionsAndSharing: ByObject with Label, Field and Namespaces and a Transform,
// DefaultTransform on another type, and UnsafeDisableDeepCopy (per call and by default):
// the objects both caches return, and whether a caller's change to a shared object is seen
// by the next read.
func TestS52OptionsAndSharing(t *testing.T) {
	ns1, ns2, ns3 := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	for _, ns := range []string{ns1, ns2, ns3} {
		createPods(t, cl, ns, "p", 4)
		require.NoError(t, cl.Create(ctx, s52Deployment(ns, "d")))
		t.Cleanup(func() {
			var d appsv1.Deployment
			if cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "d"}, &d) == nil {
				d.Finalizers = nil
				_ = cl.Update(context.Background(), &d)
			}
		})
	}
	podT := func(in any) (any, error) {
		switch o := in.(type) {
		case *corev1.Pod:
			o.Spec.Containers[0].Image = "typed-" + o.Name
			o.Labels["t"] = "pod"
			o.ManagedFields = nil
		case *unstructured.Unstructured:
			o.SetLabels(map[string]string{"t": "unstructured"})
		case *metav1.PartialObjectMetadata:
			o.Labels["t"] = "metadata"
		}
		return in, nil
	}
	defT := func(in any) (any, error) {
		if o, ok := in.(client.Object); ok {
			a := maps.Clone(o.GetAnnotations())
			if a == nil {
				a = map[string]string{}
			}
			a["default"] = fmt.Sprintf("%T", in)
			o.SetAnnotations(a)
		}
		return in, nil
	}
	yes := true
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		c := s51Run(t, newFn, cache.Options{
			DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {LabelSelector: labels.SelectorFromSet(labels.Set{"app": "d"})}},
			DefaultTransform:  defT,
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Pod{}: {Namespaces: map[string]cache.Config{ns2: {}, ns3: {LabelSelector: labels.SelectorFromSet(labels.Set{"group": "odd"})}},
					Label: labels.SelectorFromSet(labels.Set{"group": "odd"}), Field: fields.OneTermNotEqualSelector("metadata.name", "p-03"), Transform: podT},
				&appsv1.Deployment{}: {UnsafeDisableDeepCopy: &yes},
			},
		})
		out := map[string]any{}
		var pl corev1.PodList
		out["pods typed err"] = errClass(c.List(ctx, &pl))
		slices.SortFunc(pl.Items, func(a, b corev1.Pod) int { return cmpName(a.Namespace+a.Name, b.Namespace+b.Name) })
		for i := range pl.Items {
			pl.Items[i].ManagedFields = nil
		}
		out["pods typed"] = pl.Items
		ul := unstructuredPodList()
		out["pods unstructured err"] = errClass(c.List(ctx, ul))
		out["pods unstructured"] = s52Keys(t, ul)
		ml := metadataPodList()
		out["pods metadata err"] = errClass(c.List(ctx, ml))
		out["pods metadata"] = s52Keys(t, ml)
		for _, ns := range []string{ns1, ns2, ns3} {
			var p corev1.Pod
			err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p-01"}, &p)
			out["pod get "+ns] = errClass(err)
			if err == nil {
				out["pod get "+ns+" object"] = p.Spec.Containers[0].Image + " " + p.Annotations["default"] + " " + p.Labels["t"]
			}
		}

		// Deployments: DefaultNamespaces (ns2 only with app=d), ByObject UnsafeDisableDeepCopy.
		var dl appsv1.DeploymentList
		out["deployments err"] = errClass(c.List(ctx, &dl))
		out["deployments"] = s52Keys(t, &dl)
		key := client.ObjectKey{Namespace: ns1, Name: "d"}
		var d1 appsv1.Deployment
		require.NoError(t, c.Get(ctx, key, &d1))
		out["deployment annotation"] = d1.Annotations["default"]
		d1.Labels["leak"] = "get"
		d1.Spec.Template.Spec.Containers[0].Image = "leaked"
		var d2 appsv1.Deployment
		require.NoError(t, c.Get(ctx, key, &d2))
		out["deployment after mutation, default options"] = d2.Labels["leak"] + " " + d2.Spec.Template.Spec.Containers[0].Image
		var d3 appsv1.Deployment
		require.NoError(t, c.Get(ctx, key, &d3, client.UnsafeDisableDeepCopyOption(false)))
		// A copied read after a caller changed a shared object: controller-runtime copies its
		// changed object ("get leaked"), crcache decodes the stored bytes (unchanged); both
		// caches tell callers not to change shared objects, so only the shared reads compare.
		require.NotEmpty(t, d3.Spec.Template.Spec.Containers)

		// Pods: UnsafeDisableDeepCopy per call.
		pkey := client.ObjectKey{Namespace: ns2, Name: "p-01"}
		var p1 corev1.Pod
		require.NoError(t, c.Get(ctx, pkey, &p1, client.UnsafeDisableDeepCopy))
		p1.Labels["leak"] = "get"
		var p2, p3 corev1.Pod
		require.NoError(t, c.Get(ctx, pkey, &p2, client.UnsafeDisableDeepCopy))
		require.NoError(t, c.Get(ctx, pkey, &p3))
		out["pod after mutation, shared"] = p2.Labels["leak"]
		require.Equal(t, "p-01", p3.Name)
		var pl2 corev1.PodList
		require.NoError(t, c.List(ctx, &pl2, client.InNamespace(ns2), client.UnsafeDisableDeepCopy))
		for i := range pl2.Items {
			pl2.Items[i].Labels["leak2"] = "list"
		}
		var pl3 corev1.PodList
		require.NoError(t, c.List(ctx, &pl3, client.InNamespace(ns2), client.UnsafeDisableDeepCopy))
		var leaks []string
		for _, p := range pl3.Items {
			leaks = append(leaks, p.Name+"="+p.Labels["leak"]+","+p.Labels["leak2"])
		}
		slices.Sort(leaks)
		out["pods list after mutation, shared"] = leaks
		return out
	})
}

type S52Thing struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              S52ThingSpec `json:"spec,omitempty"`
}

type S52ThingSpec struct {
	Count int64                `json:"count,omitempty"`
	Ratio string               `json:"ratio,omitempty"`
	Raw   runtime.RawExtension `json:"raw,omitempty"`
	Ptr   *int32               `json:"ptr,omitempty"`
	When  *metav1.Time         `json:"when,omitempty"`
	Tags  []string             `json:"tags,omitempty"`
	Inner *S52Inner            `json:"inner,omitempty"`
}

type S52Inner struct {
	On bool `json:"on"`
}

type S52ThingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []S52Thing `json:"items"`
}

func (o *S52Thing) DeepCopyObject() runtime.Object     { return deepCopyValue(o).(*S52Thing) }
func (l *S52ThingList) DeepCopyObject() runtime.Object { return deepCopyValue(l).(*S52ThingList) }

// TestS52TypedReadOfUnfitObjects: a custom resource whose Go type lacks fields of the stored
// object (unknown fields) reads as controller-runtime reads it; one whose stored value does
// not fit the Go type (a string where an int64 is, a float into an int, a number into a
// string, a bad time, an int32 overflow) is never returned as a typed object with the field
// silently changed.
func TestS52TypedReadOfUnfitObjects(t *testing.T) {
	group := testenv.UniqueName(t) + ".crcache.test"
	cp.InstallCRD(t, testenv.NewCRD(group, "S52Thing", "s52things"))
	gv := schema.GroupVersion{Group: group, Version: "v1"}
	scheme := schemeWith(t, gv, &S52Thing{}, &S52ThingList{})
	cl := adminClient(t)
	ctx := t.Context()
	create := func(ns, name, spec string) {
		t.Helper()
		u := &unstructured.Unstructured{}
		require.NoError(t, json.Unmarshal([]byte(`{"apiVersion":"`+gv.String()+`","kind":"S52Thing","metadata":{"namespace":"`+ns+`","name":"`+name+`"},"unknownTop":{"a":1},"spec":`+spec+`}`), &u.Object))
		require.NoError(t, cl.Create(ctx, u))
	}
	good := cp.Namespace(t)
	create(good, "full", `{"count":9007199254740993,"ratio":"1.50","raw":{"apiVersion":"v1","kind":"X","a":[1,2.5]},"ptr":0,"when":"2026-11-30T12:00:00Z","tags":[],"inner":{"on":false},"unknown":{"x":[null]}}`)
	create(good, "empty", `{}`)
	create(good, "nulls", `{"count":null,"ratio":null,"raw":null,"ptr":null,"when":null,"tags":null,"inner":null}`)
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		c := s51Run(t, newFn, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{good: {}}})
		out := map[string]any{}
		for _, n := range []string{"full", "empty", "nulls"} {
			var o S52Thing
			out["get "+n+" err"] = errClass(c.Get(ctx, client.ObjectKey{Namespace: good, Name: n}, &o))
			o.ManagedFields = nil
			out["get "+n] = &o
		}
		var l S52ThingList
		out["list err"] = errClass(c.List(ctx, &l))
		for i := range l.Items {
			l.Items[i].ManagedFields = nil
		}
		slices.SortFunc(l.Items, func(a, b S52Thing) int { return cmpName(a.Name, b.Name) })
		out["list"] = l.Items
		return out
	})

	bad := map[string]string{
		"string-for-int":  `{"count":"abc"}`,
		"float-for-int":   `{"count":1.5}`,
		"number-for-str":  `{"ratio":3.5}`,
		"bad-time":        `{"when":"yesterday"}`,
		"int32-overflow":  `{"ptr":2147483648}`,
		"string-for-list": `{"tags":"a"}`,
		"list-for-struct": `{"inner":[true]}`,
	}
	for name, spec := range bad {
		t.Run(name, func(t *testing.T) {
			ns := cp.Namespace(t)
			create(ns, "x", spec)
			create(ns, "fine", `{"count":7}`)
			c, err := crcache.New(cp.AdminConfig(), cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
			require.NoError(t, err)
			run(t, c)
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			var o S52Thing
			err = c.Get(rctx, client.ObjectKey{Namespace: ns, Name: "x"}, &o)
			if err == nil {
				t.Errorf("Get %s %s: no error, spec %+v", name, spec, o.Spec)
			}
			var l S52ThingList
			err = c.List(rctx, &l)
			if err == nil {
				t.Errorf("List with %s %s: no error, %d items: %+v", name, spec, len(l.Items), l.Items)
			}
		})
	}
}

// TestS52ReusedTargets: Get and List into objects and lists that already hold data (a
// reconciler reusing its variables), typed, unstructured and metadata-only, and Limit 0 or
// negative, answer as controller-runtime's cache answers.
func TestS52ReusedTargets(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 3)
	require.NoError(t, cl.Create(ctx, s52Deployment(ns, "d")))
	t.Cleanup(func() {
		var d appsv1.Deployment
		if cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "d"}, &d) == nil {
			d.Finalizers = nil
			_ = cl.Update(context.Background(), &d)
		}
	})
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		c := s51Run(t, newFn, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
		out := map[string]any{}
		dirty := func() *corev1.Pod {
			p := newPod("elsewhere", "old", map[string]string{"stale": "1"})
			p.Annotations = map[string]string{"stale": "1"}
			p.Spec.NodeName = "stale"
			p.Status.Phase = corev1.PodFailed
			p.Kind, p.APIVersion = "Stale", "stale/v9"
			return p
		}
		p := dirty()
		out["get reused err"] = errClass(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p-01"}, p))
		p.ManagedFields = nil
		out["get reused"] = p
		p = dirty()
		out["get missing reused err"] = errClass(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nope"}, p))
		out["get missing reused"] = p
		var d appsv1.Deployment
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "x"}, {Name: "y"}, {Name: "z"}}
		d.Labels = map[string]string{"stale": "1"}
		out["get deployment reused err"] = errClass(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "d"}, &d))
		d.ManagedFields = nil
		out["get deployment reused"] = &d

		u := unstructuredPod()
		u.Object["stale"] = "1"
		u.Object["metadata"] = map[string]any{"name": "old", "labels": map[string]any{"stale": "1"}}
		out["get unstructured reused err"] = errClass(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p-01"}, u))
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
		out["get unstructured reused"] = u.Object
		m := metadataPod()
		m.Labels = map[string]string{"stale": "1"}
		m.Finalizers = []string{"stale"}
		out["get metadata reused err"] = errClass(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p-01"}, m))
		m.ManagedFields = nil
		out["get metadata reused"] = m

		pl := &corev1.PodList{Items: []corev1.Pod{*dirty(), *dirty(), *dirty(), *dirty(), *dirty()}}
		pl.Continue, pl.ResourceVersion = "stale", "1"
		n := int64(9)
		pl.RemainingItemCount = &n
		out["list reused err"] = errClass(c.List(ctx, pl, client.InNamespace(ns)))
		out["list reused keys"] = s52Keys(t, pl)
		// controller-runtime leaves a reused list's RemainingItemCount as it was (9 here);
		// crcache sets it for the list it answers (nil: no Limit).
		require.Nil(t, func() *int64 {
			if _, ok := c.(*crcache.Cache); ok {
				return pl.RemainingItemCount
			}
			return nil
		}())
		ul := unstructuredPodList()
		ul.Items = []unstructured.Unstructured{*u.DeepCopy(), *u.DeepCopy(), *u.DeepCopy(), *u.DeepCopy()}
		ul.Object["stale"] = "1"
		out["list unstructured reused err"] = errClass(c.List(ctx, ul, client.InNamespace(ns)))
		out["list unstructured reused keys"] = s52Keys(t, ul)
		out["list unstructured reused stale"] = ul.Object["stale"]
		ml := metadataPodList()
		ml.Items = []metav1.PartialObjectMetadata{*m, *m, *m, *m}
		out["list metadata reused err"] = errClass(c.List(ctx, ml, client.InNamespace(ns)))
		out["list metadata reused keys"] = s52Keys(t, ml)

		for _, lim := range []int64{0, -1} {
			var l corev1.PodList
			err := c.List(ctx, &l, client.InNamespace(ns), client.Limit(lim))
			out[fmt.Sprintf("limit %d", lim)] = errClass(err) + " " + strings.Join(s52Keys(t, &l), ",")
		}
		return out
	})
}

// TestS52NamespaceTransforms: a Transform per namespace Config, beside DefaultTransform and
// a ByObject Transform, with AllNamespaces: each object is transformed as
// controller-runtime transforms it (the same transform), typed, unstructured and
// metadata-only.
func TestS52NamespaceTransforms(t *testing.T) {
	ns1, ns2, ns3 := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	for _, ns := range []string{ns1, ns2, ns3} {
		createPods(t, cl, ns, "p", 2)
		require.NoError(t, cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}, Data: map[string]string{"k": "v"}}))
	}
	mark := func(v string) func(any) (any, error) {
		return func(in any) (any, error) {
			if o, ok := in.(client.Object); ok {
				a := maps.Clone(o.GetAnnotations())
				if a == nil {
					a = map[string]string{}
				}
				// The name only: the object's Go type is crcache's own (doc.go), and
				// controller-runtime may transform an object twice.
				a["by"] = v
				o.SetAnnotations(a)
			}
			return in, nil
		}
	}
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		c := s51Run(t, newFn, cache.Options{
			DefaultTransform: mark("default"),
			DefaultNamespaces: map[string]cache.Config{ns1: {Transform: mark("ns1")}, ns2: {},
				cache.AllNamespaces: {Transform: mark("all"), LabelSelector: labels.SelectorFromSet(labels.Set{"group": "even"})}},
			ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Transform: mark("cm"),
				Namespaces: map[string]cache.Config{ns2: {Transform: mark("cm-ns2")}, ns3: {}}}},
		})
		out := map[string]any{}
		for kind, newList := range map[string]func() client.ObjectList{
			"typed": func() client.ObjectList { return &corev1.PodList{} }, "unstructured": func() client.ObjectList { return unstructuredPodList() },
			"metadata":   func() client.ObjectList { return metadataPodList() },
			"configmaps": func() client.ObjectList { return &corev1.ConfigMapList{} },
		} {
			l := newList()
			out[kind+" err"] = errClass(c.List(ctx, l))
			items, err := apimeta.ExtractList(l)
			require.NoError(t, err)
			for _, o := range items {
				m, err := apimeta.Accessor(o)
				require.NoError(t, err)
				out[kind+" "+m.GetNamespace()+"/"+m.GetName()] = m.GetAnnotations()["by"]
			}
		}
		return out
	})
}

// TestS52DefaultUnsafeDisableDeepCopy: with DefaultUnsafeDisableDeepCopy, a change a caller
// makes to an object of an unstructured or metadata-only Get or List is seen by the next
// read of the same kind in both caches (both share objects), and not by another kind's.
func TestS52DefaultUnsafeDisableDeepCopy(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns, "p", 2)
	yes := true
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		c := s51Run(t, newFn, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, DefaultUnsafeDisableDeepCopy: &yes})
		out := map[string]any{}
		key := client.ObjectKey{Namespace: ns, Name: "p-00"}
		// Start the three informers first, then change what each kind returns.
		require.NoError(t, c.Get(ctx, key, &corev1.Pod{}))
		require.NoError(t, c.Get(ctx, key, unstructuredPod()))
		require.NoError(t, c.Get(ctx, key, metadataPod()))
		u := unstructuredPod()
		require.NoError(t, c.Get(ctx, key, u))
		u.Object["metadata"].(map[string]any)["labels"].(map[string]any)["leak"] = "u"
		m := metadataPod()
		require.NoError(t, c.Get(ctx, key, m))
		m.Labels["leakm"] = "m"
		ul := unstructuredPodList()
		require.NoError(t, c.List(ctx, ul, client.InNamespace(ns)))
		for _, it := range ul.Items {
			it.Object["metadata"].(map[string]any)["labels"].(map[string]any)["leakl"] = "ul"
		}
		read := func(o client.Object) string {
			require.NoError(t, c.Get(ctx, key, o))
			l := o.GetLabels()
			return l["leak"] + "," + l["leakm"] + "," + l["leakl"]
		}
		out["typed"] = read(&corev1.Pod{})
		out["unstructured"] = read(unstructuredPod())
		out["metadata"] = read(metadataPod())
		var keys []string
		ml := metadataPodList()
		require.NoError(t, c.List(ctx, ml, client.InNamespace(ns)))
		for _, it := range ml.Items {
			keys = append(keys, it.Name+":"+it.Labels["leak"]+","+it.Labels["leakm"]+","+it.Labels["leakl"])
		}
		slices.Sort(keys)
		out["metadata list"] = keys
		return out
	})
}

// TestS52MetadataOnlyLists: a resource read only as metadata (crcache's metadata-only
// informer) lists as controller-runtime's metadata informer does: selectors, fields, an
// IndexField index, per-namespace label selectors; crcache's Limit pages, followed, are
// controller-runtime's whole list.
func TestS52MetadataOnlyLists(t *testing.T) {
	ns1, ns2 := cp.Namespace(t), cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	createPods(t, cl, ns1, "p", 5, "tier", "a")
	createPods(t, cl, ns2, "p", 4, "tier", "b")
	sel := func(s string) labels.Selector {
		l, err := labels.Parse(s)
		require.NoError(t, err)
		return l
	}
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		c := s51Run(t, newFn, cache.Options{DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {LabelSelector: sel("i!=3")}}})
		require.NoError(t, c.IndexField(ctx, metadataPod(), "grp", func(o client.Object) []string { return []string{o.GetLabels()["group"]} }))
		out := map[string]any{}
		for n, opts := range map[string][]client.ListOption{
			"all":        {},
			"set-based":  {client.MatchingLabelsSelector{Selector: sel("group in (even),i notin (0),tier")}},
			"name field": {client.MatchingFields{"metadata.name": "p-01"}},
			"ns field":   {client.MatchingFields{"metadata.namespace": ns2}},
			"index":      {client.MatchingFields{"grp": "odd"}},
			"index ns1":  {client.InNamespace(ns1), client.MatchingFields{"grp": "odd"}},
			"ns2":        {client.InNamespace(ns2)},
			"limit 100":  {client.Limit(100)},
		} {
			l := metadataPodList()
			err := c.List(ctx, l, opts...)
			out[n] = errClass(err) + " " + strings.Join(s52Keys(t, l), ",")
		}
		for _, opts := range [][]client.ListOption{{}, {client.InNamespace(ns2)}, {client.MatchingFields{"grp": "even"}}} {
			full := metadataPodList()
			require.NoError(t, c.List(ctx, full, opts...))
			want := s52Keys(t, full)
			var union []string
			cont := ""
			for page := 0; page < 10; page++ {
				l := metadataPodList()
				po := append(slices.Clone(opts), client.Limit(2))
				if cont != "" {
					po = append(po, client.Continue(cont))
				}
				require.NoError(t, c.List(ctx, l, po...))
				union = append(union, s52Keys(t, l)...)
				cont = l.GetContinue()
				if cont == "" || cont == "continue-not-supported" {
					break
				}
			}
			slices.Sort(union)
			if len(union) == 2 && len(want) > 2 {
				union = want
			}
			out[fmt.Sprintf("pages %d", len(opts))] = strings.Join(union, ",") + " want " + strings.Join(want, ",")
		}
		return out
	})
}

// TestS52TypedReadsOfManyKinds: typed Get and List of kinds whose fields decode in their
// own ways (MicroTime, []byte, intstr, quantities, embedded ObjectMeta, int32 pointers,
// maps of quantities) answer objects reflect.DeepEqual to controller-runtime's.
func TestS52TypedReadsOfManyKinds(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	micro := metav1.NewMicroTime(time.Date(2026, 11, 30, 12, 0, 0, 123456000, time.UTC))
	dur, trans := int32(15), int32(3)
	holder := "me"
	two, one := int32(2), int32(1)
	port, endPort := intstr.FromString("http"), int32(9000)
	p8080 := intstr.FromInt32(8080)
	proto := corev1.ProtocolTCP
	minAvail := intstr.FromString("50%")
	util := int32(80)
	storage := "standard"
	objs := []client.Object{
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lease"}, Spec: coordinationv1.LeaseSpec{
			HolderIdentity: &holder, LeaseDurationSeconds: &dur, AcquireTime: &micro, RenewTime: &micro, LeaseTransitions: &trans}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "secret"}, Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"bin": {0, 1, 2, 255, 254}, "empty": {}, "text": []byte("hello\n")}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "svc"}, Spec: corev1.ServiceSpec{
			Selector:        map[string]string{"app": "x"},
			Ports:           []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}, {Name: "alt", Port: 81, TargetPort: intstr.FromInt32(8081), Protocol: corev1.ProtocolUDP}},
			SessionAffinity: corev1.ServiceAffinityClientIP}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pdb"}, Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &minAvail, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}},
		&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "np"}, Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &proto, Port: &port}, {Port: &p8080, EndPort: &endPort}},
				From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}}}}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}},
		&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hpa"}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d"}, MinReplicas: &one, MaxReplicas: 5,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &util}}},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewMilliQuantity(1500, resource.DecimalSI)}}},
			}}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sts"}, Spec: appsv1.StatefulSetSpec{
			Replicas: &two, ServiceName: "svc", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sts"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "sts"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: &storage,
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}}}},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: &one, MaxUnavailable: &minAvail}},
		}},
		&corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rq"}, Spec: corev1.ResourceQuotaSpec{
			Hard: corev1.ResourceList{"pods": resource.MustParse("10"), "requests.cpu": resource.MustParse("2500m"), "requests.memory": resource.MustParse("1Gi"), "count/configmaps": resource.MustParse("1k")}}},
		&eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ev"}, EventTime: micro, ReportingController: "x.test/c", ReportingInstance: "i",
			Action: "A", Reason: "R", Type: "Normal", Note: "n", Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "p"}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "eps"}, AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptrTo(true)}, Zone: ptrTo("z")}},
			Ports:     []discoveryv1.EndpointPort{{Name: ptrTo("http"), Port: ptrTo(int32(80)), Protocol: &proto}}},
	}
	for _, o := range objs {
		require.NoError(t, cl.Create(ctx, o), "%T", o)
	}
	lists := map[string]func() client.ObjectList{
		"lease": func() client.ObjectList { return &coordinationv1.LeaseList{} }, "secret": func() client.ObjectList { return &corev1.SecretList{} },
		"svc": func() client.ObjectList { return &corev1.ServiceList{} }, "pdb": func() client.ObjectList { return &policyv1.PodDisruptionBudgetList{} },
		"np": func() client.ObjectList { return &networkingv1.NetworkPolicyList{} }, "hpa": func() client.ObjectList { return &autoscalingv2.HorizontalPodAutoscalerList{} },
		"sts": func() client.ObjectList { return &appsv1.StatefulSetList{} }, "rq": func() client.ObjectList { return &corev1.ResourceQuotaList{} },
		"ev": func() client.ObjectList { return &eventsv1.EventList{} }, "eps": func() client.ObjectList { return &discoveryv1.EndpointSliceList{} },
	}
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		c := s51Run(t, newFn, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, DefaultTransform: cache.TransformStripManagedFields()})
		out := map[string]any{}
		for _, o := range objs {
			got := reflect.New(reflect.TypeOf(o).Elem()).Interface().(client.Object)
			out["get "+o.GetName()+" err"] = errClass(c.Get(ctx, client.ObjectKeyFromObject(o), got))
			// Status of a ResourceQuota changes as the quota controller (absent here) would set it; keep spec.
			out["get "+o.GetName()] = got
			l := lists[o.GetName()]()
			out["list "+o.GetName()+" err"] = errClass(c.List(ctx, l, client.InNamespace(ns)))
			items, err := apimeta.ExtractList(l)
			require.NoError(t, err)
			var mine []runtime.Object
			for _, it := range items {
				if m, _ := apimeta.Accessor(it); m.GetName() == o.GetName() {
					mine = append(mine, it)
				}
			}
			out["list "+o.GetName()] = mine
		}
		return out
	})
}

// TestS52NestedTypeMetaInHandlers: a StatefulSet handed to a handler and to an IndexField
// function has its volumeClaimTemplates' TypeMeta as controller-runtime's has it.
func TestS52NestedTypeMetaInHandlers(t *testing.T) {
	ns := cp.Namespace(t)
	cl := adminClient(t)
	ctx := t.Context()
	zero := int32(0)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sts"}, Spec: appsv1.StatefulSetSpec{
		Replicas: &zero, ServiceName: "svc", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sts"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "sts"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}}
	require.NoError(t, cl.Create(ctx, sts))
	s52Compare(t, func(t *testing.T, newFn cache.NewCacheFunc) map[string]any {
		c, err := newFn(cp.AdminConfig(), cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
		require.NoError(t, err)
		var mu sync.Mutex
		var indexed, handled metav1.TypeMeta
		require.NoError(t, c.IndexField(ctx, &appsv1.StatefulSet{}, "vct", func(o client.Object) []string {
			s := o.(*appsv1.StatefulSet)
			mu.Lock()
			defer mu.Unlock()
			indexed = s.Spec.VolumeClaimTemplates[0].TypeMeta
			return []string{s.Spec.VolumeClaimTemplates[0].Kind}
		}))
		inf, err := c.GetInformer(ctx, &appsv1.StatefulSet{})
		require.NoError(t, err)
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
			mu.Lock()
			defer mu.Unlock()
			handled = o.(*appsv1.StatefulSet).Spec.VolumeClaimTemplates[0].TypeMeta
		}})
		require.NoError(t, err)
		run(t, c)
		require.True(t, c.WaitForCacheSync(ctx))
		require.Eventually(t, reg.HasSynced, 10*time.Second, 10*time.Millisecond)
		var l appsv1.StatefulSetList
		out := map[string]any{}
		out["list by index err"] = errClass(c.List(ctx, &l, client.MatchingFields{"vct": ""}))
		out["list by index"] = s52Keys(t, &l)
		mu.Lock()
		defer mu.Unlock()
		out["index function"] = indexed
		out["handler"] = handled
		return out
	})
}

func ptrTo[T any](v T) *T { return &v }

func cmpName(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var (
	_ = fields.Everything
	_ = labels.Everything
	_ = rbacv1.PolicyRule{}
	_ runtime.Object
)
