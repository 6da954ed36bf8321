// Package podgen generates realistic Pods for tests and benchmarks (the decoders' and the
// typed decoder's share one generator, so that their figures are on the same objects).
package podgen

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Realistic test objects: Pods as a ReplicaSet controller creates them and a kubelet
// reports them, about 7.5 KB of compact JSON each, of which about 3.4 KB are
// managedFields from two managers. Pod i differs from pod j in everything that differs
// between real pods (name, uid, IPs, node, timestamps, resourceVersion), and pods of the
// same app share what real replicas share.

var genApps = []string{"orders", "billing", "gateway", "recommender", "ledger", "notifier", "profile", "media"}

// genID returns n pseudo-random hex digits determined by seed.
func genID(n int, seed string) string {
	h := uint64(0x9e3779b97f4a7c15)
	for i := 0; i < len(seed); i++ {
		h = (h ^ uint64(seed[i])) * 0x100000001b3
	}
	var b strings.Builder
	for b.Len() < n {
		h ^= h >> 29
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 32
		b.WriteByte("0123456789abcdef"[h&15])
	}
	return b.String()
}

func genUID(seed string) types.UID {
	s := genID(32, seed)
	return types.UID(s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:])
}

// fieldsV1 of the controller that creates the pod: %[1]s is the owner uid, %[2]s the app.
const genFieldsCreate = `{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/instance":{},"f:pod-template-hash":{},"f:tier":{}},"f:annotations":{".":{},"f:kubectl.kubernetes.io/default-container":{},"f:prometheus.io/scrape":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"%[1]s\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"%[2]s\"}":{".":{},"f:args":{},"f:env":{".":{},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"LISTEN_ADDR\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"DB_POOL_SIZE\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"UPSTREAM_URL\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"NODE_NAME\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}},"k:{\"name\":\"POD_IP\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}}},"f:image":{},"f:imagePullPolicy":{},"f:livenessProbe":{".":{},"f:failureThreshold":{},"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}},"f:initialDelaySeconds":{},"f:periodSeconds":{},"f:successThreshold":{},"f:timeoutSeconds":{}},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:readinessProbe":{".":{},"f:failureThreshold":{},"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}},"f:periodSeconds":{},"f:successThreshold":{},"f:timeoutSeconds":{}},"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{},"f:volumeMounts":{".":{},"k:{\"mountPath\":\"/etc/config\"}":{".":{},"f:mountPath":{},"f:name":{},"f:readOnly":{}}}},"k:{\"name\":\"proxy\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{".":{},"f:limits":{".":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{},"f:volumes":{".":{},"k:{\"name\":\"config\"}":{".":{},"f:configMap":{".":{},"f:defaultMode":{},"f:name":{}},"f:name":{}}}}}`

// fieldsV1 of the kubelet's status updates: %[1]s is the pod IP.
const genFieldsStatus = `{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodReadyToStartContainers\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"%[1]s\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`

var genBase = time.Date(2026, 1, 12, 8, 0, 0, 0, time.UTC)

// GenPod returns pod i as an API server serves it.
func GenPod(i int) *corev1.Pod {
	app := genApps[i%len(genApps)]
	rsHash := genID(10, "rs/"+app)
	rsName := app + "-" + rsHash
	rsUID := genUID("rs/" + app)
	name := rsName + "-" + genID(5, fmt.Sprint("pod/", i))
	node := fmt.Sprintf("worker-%03d.eu-west-1.compute.internal", i%97)
	hostIP := fmt.Sprintf("10.12.%d.%d", i%97/50, 10+i%97%50)
	podIP := fmt.Sprintf("10.244.%d.%d", i/250%256, 2+i%250)
	created := genBase.Add(time.Duration(i) * 1370 * time.Millisecond).Truncate(time.Second)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(created.Add(d)) }
	version := fmt.Sprintf("v2.%d.%d", i%len(genApps), 3)
	image := "registry.example.com/platform/" + app + ":" + version
	truth := true
	grace := int64(30)
	mode := int32(420)
	rsrc := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	probe := func(path string, delay int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}},
			InitialDelaySeconds: delay, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
		}
	}
	fieldRef := func(n, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: n, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
	}
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: rsName + "-", Namespace: "shop-" + genApps[i%3],
			UID: genUID(name), ResourceVersion: fmt.Sprint(4_000_000 + i*7),
			CreationTimestamp: metav1.NewTime(created),
			Labels: map[string]string{
				"app.kubernetes.io/name": app, "app.kubernetes.io/instance": app + "-prod",
				"pod-template-hash": rsHash, "tier": "backend",
			},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/default-container": app, "prometheus.io/scrape": "true",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rsName, UID: rsUID,
				Controller: &truth, BlockOwnerDeletion: &truth,
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					Time: &metav1.Time{Time: created}, FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(fmt.Sprintf(genFieldsCreate, rsUID, app))},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					Time: &metav1.Time{Time: created.Add(9 * time.Second)}, FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(fmt.Sprintf(genFieldsStatus, podIP)), Subresource: "status"},
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				{
					Name: app, Image: image, Args: []string{"--config=/etc/config/app.yaml", "--metrics-port=9090"},
					Ports: []corev1.ContainerPort{
						{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
					},
					Env: []corev1.EnvVar{
						{Name: "LOG_LEVEL", Value: "info"}, {Name: "LISTEN_ADDR", Value: ":8080"},
						{Name: "DB_POOL_SIZE", Value: "16"}, {Name: "UPSTREAM_URL", Value: "http://" + genApps[(i+1)%len(genApps)] + ".shop.svc.cluster.local:8080"},
						fieldRef("NODE_NAME", "spec.nodeName"), fieldRef("POD_IP", "status.podIP"),
					},
					Resources:                corev1.ResourceRequirements{Requests: rsrc("250m", "256Mi"), Limits: rsrc("1", "512Mi")},
					VolumeMounts:             []corev1.VolumeMount{{Name: "config", MountPath: "/etc/config", ReadOnly: true}, {Name: "kube-api-access-" + genID(5, name), MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
					LivenessProbe:            probe("/healthz", 10),
					ReadinessProbe:           probe("/readyz", 0),
					TerminationMessagePath:   "/dev/termination-log",
					TerminationMessagePolicy: corev1.TerminationMessageReadFile,
					ImagePullPolicy:          corev1.PullIfNotPresent,
				},
				{
					Name: "proxy", Image: "registry.example.com/platform/envoy:v1.31.2",
					Resources:                corev1.ResourceRequirements{Requests: rsrc("50m", "64Mi"), Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}},
					TerminationMessagePath:   "/dev/termination-log",
					TerminationMessagePolicy: corev1.TerminationMessageReadFile,
					ImagePullPolicy:          corev1.PullIfNotPresent,
				},
			},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}, DefaultMode: &mode}}},
			},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace,
			DNSPolicy: corev1.DNSClusterFirst, ServiceAccountName: "default", DeprecatedServiceAccount: "default",
			NodeName: node, SecurityContext: &corev1.PodSecurityContext{}, SchedulerName: "default-scheduler",
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &[]int64{300}[0]},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &[]int64{300}[0]},
			},
			Priority: new(int32), EnableServiceLinks: &truth, PreemptionPolicy: &[]corev1.PreemptionPolicy{corev1.PreemptLowerPriority}[0],
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue, LastTransitionTime: at(4 * time.Second)},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at(time.Second)},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(9 * time.Second)},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at(9 * time.Second)},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(0)},
			},
			HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: hostIP}},
			PodIP: podIP, PodIPs: []corev1.PodIP{{IP: podIP}},
			StartTime: &metav1.Time{Time: created.Add(time.Second)},
			QOSClass:  corev1.PodQOSBurstable,
		},
	}
	for k, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Ready: true, Started: &truth, Image: c.Image,
			ImageID:     "registry.example.com/platform/" + c.Name + "@sha256:" + genID(64, c.Image),
			ContainerID: "containerd://" + genID(64, fmt.Sprint(name, k)),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(3 * time.Second)}},
		})
	}
	return p
}

// GenPodJSON returns pod i as compact JSON.
func GenPodJSON(i int) []byte {
	b, err := json.Marshal(GenPod(i))
	if err != nil {
		panic(err)
	}
	return b
}
