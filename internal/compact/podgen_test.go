package compact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Realistic pods for tests and benchmarks: what a ReplicaSet controller creates and a
// kubelet reports, about 7.5 KB of compact JSON of which about 3.4 KB are managedFields
// from two managers.

var podBase = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// fieldsSpec is the managedFields entry of the controller that created the pod.
const fieldsSpec = `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/default-container":{}},"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/name":{},"f:pod-template-hash":{},"f:team.example.com/owner":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"%s\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"GOMAXPROCS\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"OTEL_SERVICE_NAME\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"OTEL_EXPORTER_OTLP_ENDPOINT\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"FEATURE_FLAGS\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"CACHE_SIZE_MB\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"HTTP_TIMEOUT\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"POD_NAME\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}},"k:{\"name\":\"POD_NAMESPACE\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:readinessProbe":{".":{},"f:failureThreshold":{},"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}},"f:periodSeconds":{},"f:successThreshold":{},"f:timeoutSeconds":{}},"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{},"f:volumeMounts":{".":{},"k:{\"mountPath\":\"/etc/%s\"}":{".":{},"f:mountPath":{},"f:name":{},"f:readOnly":{}}}},"k:{\"name\":\"log-shipper\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:serviceAccount":{},"f:serviceAccountName":{},"f:terminationGracePeriodSeconds":{},"f:volumes":{".":{},"k:{\"name\":\"config\"}":{".":{},"f:configMap":{".":{},"f:defaultMode":{},"f:name":{}},"f:name":{}}}}}`

// fieldsStatus is the kubelet's entry.
const fieldsStatus = `{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodReadyToStartContainers\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodScheduled\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"%s\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`

var podApps = []string{"checkout", "payments", "catalog", "search", "frontend", "inventory", "shipping", "reviews"}

func hexID(n int, parts ...any) string {
	h := uint64(14695981039346656037)
	for _, c := range fmt.Sprint(parts...) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	const digits = "0123456789abcdef"
	out := make([]byte, n)
	for i := range out {
		h = h*6364136223846793005 + 1442695040888963407
		out[i] = digits[h>>60]
	}
	return string(out)
}

func uid(parts ...any) types.UID {
	s := hexID(32, parts...)
	return types.UID(s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:])
}

// realisticPod returns the i-th pod of namespace ns, with managedFields, as the API server
// would serve it.
func realisticPod(ns string, i int) *corev1.Pod {
	app := podApps[i%len(podApps)]
	hash := hexID(10, "hash", app)
	rs := app + "-" + hash
	rsUID := uid("rs", app)
	start := metav1.NewTime(podBase.Add(time.Duration(i%3600) * time.Second))
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(start.Add(d)) }
	hostIP := fmt.Sprintf("10.0.%d.%d", (i%60)/200, (i%60)%200+10)
	podIP := fmt.Sprintf("10.244.%d.%d", (i/250)%256, i%250+2)
	req := func(cpu, mem, lcpu, lmem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(lcpu), corev1.ResourceMemory: resource.MustParse(lmem)},
		}
	}
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
	}
	t := true
	grace := int64(30)
	mode := int32(0o644)
	image := fmt.Sprintf("ghcr.io/acme/%s:v1.%d.%d", app, i%9, i%4)
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              fmt.Sprintf("%s-%s", rs, hexID(5, "pod", i)),
			GenerateName:      rs + "-",
			Namespace:         ns,
			UID:               uid("pod", ns, i),
			ResourceVersion:   fmt.Sprint(100000 + i),
			CreationTimestamp: start,
			Labels: map[string]string{
				"app.kubernetes.io/name":     app,
				"app.kubernetes.io/instance": app + "-prod",
				"pod-template-hash":          hash,
				"team.example.com/owner":     []string{"storefront", "platform", "data"}[i%3],
			},
			Annotations: map[string]string{"kubectl.kubernetes.io/default-container": "app"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: rsUID,
				Controller: &t, BlockOwnerDeletion: &t,
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{
					Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate,
					APIVersion: "v1", Time: &start, FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(fmt.Sprintf(fieldsSpec, rsUID, app)),
				},
				{
					Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
					APIVersion: "v1", Time: ptrTo(at(21 * time.Second)), FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(fmt.Sprintf(fieldsStatus, podIP)), Subresource: "status",
				},
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				{
					Name: "app", Image: image,
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
					Env: []corev1.EnvVar{
						fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace"),
						{Name: "LOG_LEVEL", Value: "info"},
						{Name: "GOMAXPROCS", Value: "2"},
						{Name: "OTEL_SERVICE_NAME", Value: app},
						{Name: "CACHE_SIZE_MB", Value: "128"},
						{Name: "HTTP_TIMEOUT", Value: "30s"},
					},
					Resources: req("250m", "256Mi", "1", "512Mi"),
					ReadinessProbe: &corev1.Probe{
						ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http"), Scheme: "HTTP"}},
						PeriodSeconds: 5, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
					},
					VolumeMounts: []corev1.VolumeMount{
						{Name: "config", MountPath: "/etc/" + app, ReadOnly: true},
						{Name: "kube-api-access-" + hexID(5, "sa", i), MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
					},
					TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: "File",
					ImagePullPolicy: corev1.PullIfNotPresent,
				},
				{
					Name: "log-shipper", Image: "fluent/fluent-bit:3.1.9", Resources: req("20m", "32Mi", "100m", "64Mi"),
					TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: "File",
					ImagePullPolicy: corev1.PullIfNotPresent,
				},
			},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}, DefaultMode: &mode,
				}}},
				{Name: "kube-api-access-" + hexID(5, "sa", i), VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					DefaultMode: &mode,
					Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptrTo(int64(3607)), Path: "token"}},
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
							Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
						{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
							Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
						}}}},
					},
				}}},
			},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace,
			DNSPolicy: corev1.DNSClusterFirst, ServiceAccountName: app, DeprecatedServiceAccount: app,
			NodeName: fmt.Sprintf("worker-%03d", i%60), SecurityContext: &corev1.PodSecurityContext{},
			SchedulerName: "default-scheduler", EnableServiceLinks: &t, PreemptionPolicy: ptrTo(corev1.PreemptLowerPriority),
			Priority: ptrTo(int32(0)),
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: "PodReadyToStartContainers", Status: "True", LastTransitionTime: at(2 * time.Second)},
				{Type: corev1.PodInitialized, Status: "True", LastTransitionTime: at(9 * time.Second)},
				{Type: corev1.PodReady, Status: "True", LastTransitionTime: at(21 * time.Second)},
				{Type: corev1.ContainersReady, Status: "True", LastTransitionTime: at(21 * time.Second)},
				{Type: corev1.PodScheduled, Status: "True", LastTransitionTime: start},
			},
			HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: hostIP}},
			PodIP: podIP, PodIPs: []corev1.PodIP{{IP: podIP}},
			StartTime: &start, QOSClass: corev1.PodQOSBurstable,
		},
	}
	for k, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Ready: true, Started: &t, Image: c.Image,
			ImageID:     "docker.io/library/x@sha256:" + hexID(64, "image", c.Image),
			ContainerID: "containerd://" + hexID(64, "container", i, k),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(10 * time.Second)}},
		})
	}
	return p
}

func ptrTo[T any](v T) *T { return &v }

// podListBody returns a PodList body of n realistic pods as the API server writes it:
// items without kind and apiVersion, compact JSON.
func podListBody(tb testing.TB, n int) []byte {
	tb.Helper()
	var b bytes.Buffer
	b.WriteString(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"987654"},"items":[`)
	for i := range n {
		p := realisticPod(fmt.Sprintf("team-%d", i%20), i)
		p.TypeMeta = metav1.TypeMeta{}
		data, err := json.Marshal(p)
		if err != nil {
			tb.Fatal(err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(data)
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

// podJSON returns one realistic pod as JSON, with kind and apiVersion.
func podJSON(tb testing.TB, i int) []byte {
	tb.Helper()
	data, err := json.Marshal(realisticPod("default", i))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
