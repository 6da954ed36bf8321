package jsondecode

import (
	"hash/maphash"
	"sync"
)

// commonStrings are keys and values that occur in most Kubernetes objects. Decoding
// returns the same string (and, for values, the same boxed interface) for each of them,
// so a cache of many objects holds one copy instead of one per occurrence. The table is
// fixed: it never grows, whatever the input.
var commonStrings = []string{
	// Object envelope and metadata.
	"apiVersion", "kind", "metadata", "spec", "status", "items", "type", "object",
	"name", "namespace", "generateName", "uid", "resourceVersion", "generation",
	"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
	"labels", "annotations", "ownerReferences", "finalizers", "selfLink", "continue",
	"remainingItemCount", "controller", "blockOwnerDeletion",
	"managedFields", "manager", "operation", "time", "fieldsType", "fieldsV1", "subresource",
	"Update", "Apply", "FieldsV1", "v1", "apps/v1", "batch/v1", "Pod", "Deployment",
	"ReplicaSet", "StatefulSet", "DaemonSet", "Job", "Service", "ConfigMap", "Secret",
	"Node", "Namespace", "Event", "Endpoints", "EndpointSlice", "List",
	"kube-controller-manager", "kubelet", "kube-scheduler", "kubectl", "kubectl-client-side-apply",
	"kubectl-create", "kubectl-edit", "kubectl-patch", "helm", "default",
	// managedFields (fieldsV1) keys that every Pod, Deployment and ReplicaSet carries.
	".", "f:metadata", "f:spec", "f:status", "f:labels", "f:annotations",
	"f:ownerReferences", "f:generateName", "f:finalizers", "f:name", "f:namespace",
	"f:containers", "f:image", "f:imagePullPolicy", "f:ports", "f:containerPort",
	"f:protocol", "f:resources", "f:limits", "f:requests", "f:cpu", "f:memory",
	"f:env", "f:value", "f:valueFrom", "f:fieldRef", "f:volumeMounts", "f:mountPath",
	"f:readOnly", "f:terminationMessagePath", "f:terminationMessagePolicy",
	"f:dnsPolicy", "f:enableServiceLinks", "f:restartPolicy", "f:schedulerName",
	"f:securityContext", "f:serviceAccount", "f:serviceAccountName",
	"f:terminationGracePeriodSeconds", "f:volumes", "f:configMap", "f:secret",
	"f:defaultMode", "f:secretName", "f:readinessProbe", "f:livenessProbe",
	"f:startupProbe", "f:httpGet", "f:path", "f:port", "f:scheme",
	"f:failureThreshold", "f:periodSeconds", "f:successThreshold", "f:timeoutSeconds",
	"f:initialDelaySeconds", "f:conditions", "f:containerStatuses", "f:hostIP",
	"f:hostIPs", "f:phase", "f:podIP", "f:podIPs", "f:ip", "f:startTime",
	"f:lastProbeTime", "f:lastTransitionTime", "f:type", "f:message", "f:reason",
	"f:replicas", "f:selector", "f:template", "f:strategy", "f:nodeName",
	"f:observedGeneration", "f:readyReplicas", "f:availableReplicas",
	"f:updatedReplicas", "f:args", "f:command", "f:tolerations", "f:affinity",
	"f:nodeSelector", "f:priority", "f:preemptionPolicy", "f:data",
	// Pod spec.
	"containers", "initContainers", "ephemeralContainers", "image", "imagePullPolicy",
	"command", "args", "workingDir", "ports", "containerPort", "hostPort", "protocol",
	"env", "value", "valueFrom", "fieldRef", "fieldPath", "secretKeyRef",
	"configMapKeyRef", "resourceFieldRef", "envFrom", "key", "optional", "resources",
	"limits", "requests", "cpu", "memory", "ephemeral-storage", "volumeMounts",
	"mountPath", "subPath", "readOnly", "mountPropagation", "volumes", "configMap",
	"secret", "secretName", "defaultMode", "items", "path", "projected", "sources",
	"serviceAccountToken", "expirationSeconds", "downwardAPI", "emptyDir",
	"persistentVolumeClaim", "claimName", "hostPath", "livenessProbe",
	"readinessProbe", "startupProbe", "httpGet", "tcpSocket", "exec", "grpc",
	"port", "scheme", "host", "httpHeaders", "initialDelaySeconds", "timeoutSeconds",
	"periodSeconds", "successThreshold", "failureThreshold",
	"terminationGracePeriodSeconds", "terminationMessagePath",
	"terminationMessagePolicy", "securityContext", "runAsUser", "runAsGroup",
	"runAsNonRoot", "fsGroup", "privileged", "allowPrivilegeEscalation",
	"readOnlyRootFilesystem", "capabilities", "drop", "add", "seccompProfile",
	"restartPolicy", "dnsPolicy", "nodeName", "nodeSelector", "serviceAccountName",
	"serviceAccount", "automountServiceAccountToken", "schedulerName", "tolerations",
	"operator", "effect", "tolerationSeconds", "affinity", "nodeAffinity",
	"podAffinity", "podAntiAffinity", "priority", "priorityClassName",
	"preemptionPolicy", "enableServiceLinks", "hostNetwork", "hostname", "subdomain",
	"imagePullSecrets", "lifecycle", "preStop", "postStart", "stdin", "tty",
	"topologySpreadConstraints", "maxSkew", "topologyKey", "whenUnsatisfiable",
	"labelSelector", "matchLabels", "matchExpressions", "values",
	// Pod status.
	"phase", "conditions", "lastProbeTime", "lastTransitionTime", "lastUpdateTime",
	"message", "reason", "hostIP", "hostIPs", "podIP", "podIPs", "ip", "startTime",
	"containerStatuses", "initContainerStatuses", "ready", "restartCount", "started",
	"state", "lastState", "running", "waiting", "terminated", "startedAt",
	"finishedAt", "exitCode", "containerID", "imageID", "qosClass", "volumeMounts",
	"allocatedResources", "user", "linux", "gid", "uid", "supplementalGroups",
	"Running", "Pending", "Succeeded", "Failed", "Unknown", "True", "False",
	"Ready", "ContainersReady", "Initialized", "PodScheduled",
	"PodReadyToStartContainers", "BestEffort", "Burstable", "Guaranteed",
	"TCP", "UDP", "SCTP", "HTTP", "HTTPS", "Always", "IfNotPresent", "Never",
	"OnFailure", "ClusterFirst", "ClusterFirstWithHostNet", "Default", "None",
	"File", "FallbackToLogsOnError", "/dev/termination-log", "default-scheduler",
	"Exists", "Equal", "NoSchedule", "NoExecute", "PreferNoSchedule",
	"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable",
	"PreemptLowerPriority", "RuntimeDefault", "ALL", "Unconfined",
	"kube-api-access", "/var/run/secrets/kubernetes.io/serviceaccount", "token",
	"ca.crt", "kube-root-ca.crt", "namespace", "metadata.namespace", "metadata.name",
	"kubernetes.io/hostname", "topology.kubernetes.io/zone", "app",
	"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/component",
	"app.kubernetes.io/part-of", "app.kubernetes.io/managed-by", "app.kubernetes.io/version",
	"pod-template-hash", "controller-revision-hash", "pod-template-generation",
	"kubectl.kubernetes.io/default-container",
	"kubectl.kubernetes.io/last-applied-configuration",
	// Workloads.
	"replicas", "selector", "template", "strategy", "rollingUpdate", "maxSurge",
	"maxUnavailable", "RollingUpdate", "Recreate", "revisionHistoryLimit",
	"progressDeadlineSeconds", "minReadySeconds", "observedGeneration",
	"readyReplicas", "availableReplicas", "updatedReplicas", "unavailableReplicas",
	"fullyLabeledReplicas", "collisionCount", "Available", "Progressing",
	"NewReplicaSetAvailable", "MinimumReplicasAvailable", "ReplicaSetUpdated",
	"deployment.kubernetes.io/revision", "deployment.kubernetes.io/desired-replicas",
	"deployment.kubernetes.io/max-replicas",
	// Services, nodes, events, config.
	"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "IPv4", "IPv6",
	"SingleStack", "PreferDualStack", "sessionAffinity", "targetPort", "nodePort",
	"ClusterIP", "NodePort", "LoadBalancer", "internalTrafficPolicy",
	"externalTrafficPolicy", "Cluster", "Local", "loadBalancer", "addresses",
	"address", "InternalIP", "ExternalIP", "Hostname", "allocatable", "capacity",
	"nodeInfo", "images", "names", "sizeBytes", "daemonEndpoints", "taints",
	"involvedObject", "source", "component", "firstTimestamp", "lastTimestamp",
	"count", "eventTime", "reportingComponent", "reportingInstance", "Normal",
	"Warning", "data", "binaryData", "stringData", "immutable", "Opaque",
	// CustomResourceDefinitions and schemas.
	"group", "versions", "served", "storage", "schema", "openAPIV3Schema",
	"properties", "required", "description", "format", "enum", "default",
	"x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string",
	"additionalProperties", "subresources", "scope", "Namespaced", "Cluster",
	"plural", "singular", "shortNames", "listKind", "categories", "acceptedNames",
	"storedVersions", "string", "integer", "boolean", "array", "number",
	"NamesAccepted", "Established", "conversion", "strategy",
}

// commonStrs and commonBox are commonStrings without duplicates, strings and boxes.
var (
	commonOnce sync.Once
	commonStrs []string
	commonBox  []any
)

func initCommon() {
	seen := make(map[string]bool, len(commonStrings))
	for _, s := range commonStrings {
		if !seen[s] {
			seen[s] = true
			commonStrs = append(commonStrs, s)
			commonBox = append(commonBox, s)
		}
	}
}

// resetIntern empties the intern table, on first use and once maxLearnt strings have
// been learnt, keeping the common strings.
func (d *Decoder) resetIntern() {
	commonOnce.Do(initCommon)
	if d.slots != nil && len(d.strs) < len(commonStrs)+maxLearnt {
		return
	}
	// Results keep their own copies of strings and interface values: reusing the
	// slices' arrays changes none of them.
	clear(d.strs[:cap(d.strs)])
	clear(d.box[:cap(d.box)])
	d.strs = append(d.strs[:0], commonStrs...)
	d.box = append(d.box[:0], commonBox...)
	if d.pred == nil {
		d.seed = maphash.MakeSeed()
		d.pred = make([]uint32, 1<<predBits)
	} else {
		clear(d.pred)
	}
	d.rehash(minSlots)
}

// minSlots is the initial size of the hash table: a power of two that holds the common
// strings at most 60% full. The table doubles as strings are learnt.
var minSlots = func() int {
	n := 64
	for n*3/5 < len(commonStrings) {
		n *= 2
	}
	return n
}()

// rehash makes the hash table n slots (a power of two) and fills it with d.strs.
func (d *Decoder) rehash(n int) {
	if cap(d.slots) >= n {
		d.slots = d.slots[:n]
		clear(d.slots)
	} else {
		d.slots = make([]uint32, n)
	}
	mask := uint64(n - 1)
	for k, s := range d.strs {
		for p := maphash.String(d.seed, s) & mask; ; p = (p + 1) & mask {
			if d.slots[p] == 0 {
				d.slots[p] = uint32(k) + 1
				break
			}
		}
	}
}

// lookup returns the number of the interned string equal to b. If there is none and
// fewer than maxLearnt strings have been learnt, it adds a copy of b.
func (d *Decoder) lookup(b []byte) (uint32, bool) {
	h := maphash.Bytes(d.seed, b)
	mask := uint64(len(d.slots) - 1)
	p := h & mask
	for {
		k := d.slots[p]
		if k == 0 {
			break
		}
		if d.strs[k-1] == string(b) {
			return k - 1, true
		}
		p = (p + 1) & mask
	}
	if len(d.strs) >= len(commonStrs)+maxLearnt {
		return 0, false
	}
	k := uint32(len(d.strs))
	d.strs = append(d.strs, string(b))
	d.box = append(d.box, nil)
	if len(d.strs) > len(d.slots)*3/5 {
		d.rehash(2 * len(d.slots))
	} else {
		d.slots[p] = k + 1
	}
	return k, true
}
