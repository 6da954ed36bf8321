package harness

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Field managers of the seeded pods: the controller that creates a pod from its ReplicaSet
// owns metadata and spec, the kubelet owns status, as in a real cluster.
const (
	podCreateManager = "kube-controller-manager"
	podStatusManager = "kubelet"
)

// newPod returns the i-th seeded pod as a ReplicaSet controller would create it: an
// application container and a log-shipping sidecar with env, ports, resources, probes and
// mounts, a config volume and the projected service-account volume, labels and annotations
// with dotted keys, and an owner reference.
func newPod(namespace string, i int) *corev1.Pod {
	a := i % len(apps)
	app := apps[a]
	hash := templateHash(a)
	version := fmt.Sprintf("v1.%d.%d", a%9, i%4)
	rs := app + "-" + hash
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:         PodName(i),
			GenerateName: rs + "-",
			Namespace:    namespace,
			Labels: map[string]string{
				"app.kubernetes.io/name":     app,
				"app.kubernetes.io/instance": app + "-prod",
				"pod-template-hash":          hash,
				"team.example.com/owner":     teams[a%len(teams)],
			},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/default-container": "app",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         "apps/v1",
				Kind:               "ReplicaSet",
				Name:               rs,
				UID:                types.UID(uuidOf("replicaset", a)),
				Controller:         ptr(true),
				BlockOwnerDeletion: ptr(true),
			}},
		},
		Spec: corev1.PodSpec{
			NodeName:           nodeName(i),
			ServiceAccountName: app,
			Containers: []corev1.Container{
				appContainer(app, "ghcr.io/acme/"+app+":"+version, i),
				{
					Name:      "log-shipper",
					Image:     "fluent/fluent-bit:3.1.9",
					Resources: requirements("20m", "32Mi", "100m", "64Mi"),
				},
			},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"},
				}}},
				apiAccessVolume(i),
			},
		},
	}
}

func appContainer(app, image string, i int) corev1.Container {
	return corev1.Container{
		Name:  "app",
		Image: image,
		Ports: []corev1.ContainerPort{
			{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
		},
		Env: []corev1.EnvVar{
			fieldEnv("POD_NAME", "metadata.name"),
			fieldEnv("POD_NAMESPACE", "metadata.namespace"),
			{Name: "LOG_LEVEL", Value: "info"},
		},
		Resources: requirements("250m", "256Mi", "1", "512Mi"),
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}},
			PeriodSeconds: 5,
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "config", MountPath: "/etc/" + app, ReadOnly: true},
			apiAccessMount(i),
		},
		ImagePullPolicy: corev1.PullIfNotPresent,
	}
}

// newPodStatus returns a kubelet-like status for the i-th pod as created (pod carries the
// spec and the QoS class the apiserver computed).
func newPodStatus(pod *corev1.Pod, i int) corev1.PodStatus {
	start := metav1.NewTime(baseTime.Add(time.Duration(i%3600) * time.Second))
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(start.Add(d)) }
	node := i % 60
	hostIP := fmt.Sprintf("10.0.%d.%d", node/200, node%200+10)
	podIP := fmt.Sprintf("10.244.%d.%d", (i/250)%256, i%250+2)
	st := corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue, LastTransitionTime: at(2 * time.Second)},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at(9 * time.Second)},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(21 * time.Second)},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at(21 * time.Second)},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: start},
		},
		HostIP:    hostIP,
		HostIPs:   []corev1.HostIP{{IP: hostIP}},
		PodIP:     podIP,
		PodIPs:    []corev1.PodIP{{IP: podIP}},
		StartTime: &start,
		QOSClass:  pod.Status.QOSClass,
	}
	for k, c := range pod.Spec.Containers {
		cs := corev1.ContainerStatus{
			Name:        c.Name,
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(10 * time.Second)}},
			Ready:       true,
			Image:       c.Image,
			ImageID:     imageID(c.Image),
			ContainerID: "containerd://" + hexOf(64, "container", i, k),
			Started:     ptr(true),
		}
		if k == 0 && i%7 == 0 {
			cs.RestartCount = 1
			cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "OOMKilled", StartedAt: at(-time.Hour), FinishedAt: at(9 * time.Second),
				ContainerID: "containerd://" + hexOf(64, "previous", i, k),
			}}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	return st
}

func nodeName(i int) string { return fmt.Sprintf("worker-%03d", i%60) }

func imageID(image string) string {
	repo := image
	for k := len(image) - 1; k >= 0; k-- {
		if image[k] == ':' {
			repo = image[:k]
			break
		}
		if image[k] == '/' {
			break
		}
	}
	return repo + "@sha256:" + hexOf(64, "image", image)
}

func apiAccessName(i int) string { return "kube-api-access-" + suffix(i*31+7) }

func apiAccessMount(i int) corev1.VolumeMount {
	return corev1.VolumeMount{Name: apiAccessName(i), MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}
}

// apiAccessVolume is the projected volume the ServiceAccount admission plugin adds.
func apiAccessVolume(i int) corev1.Volume {
	return corev1.Volume{Name: apiAccessName(i), VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr(int32(0o644)),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(3607)), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}}}
}

func requirements(cpuReq, memReq, cpuLim, memLim string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuReq), corev1.ResourceMemory: resource.MustParse(memReq)},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLim), corev1.ResourceMemory: resource.MustParse(memLim)},
	}
}

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
}

func ptr[T any](v T) *T { return &v }
