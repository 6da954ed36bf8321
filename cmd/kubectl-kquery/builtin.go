package main

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// The columns kubectl prints for built-in resources, computed locally from the cached
// objects. kubectl asks the server for a Table; the server fills it with printers compiled
// into kube-apiserver. These are the same columns and cell rules for the resources of the
// core, apps, batch and networking.k8s.io groups, written against the v1 types; the tests
// compare them cell by cell with the server's Table for the same objects. Resources not
// listed here get their columns from the server (servertable.go).

// builtinTable is the column set of one built-in resource and the function that fills a row.
type builtinTable struct {
	columns []metav1.TableColumnDefinition
	cells   func(obj map[string]any, now time.Time) ([]any, error)
}

// typed converts the cached object to its v1 type for fn.
func typed[T any](fn func(*T, time.Time) []any) func(map[string]any, time.Time) ([]any, error) {
	return func(m map[string]any, now time.Time) ([]any, error) {
		var obj T
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &obj); err != nil {
			return nil, err
		}
		return fn(&obj, now), nil
	}
}

func nameCol() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name"}
}

func col(name, typ string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ}
}

func wideCol(name, typ string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Priority: 1}
}

// since is kubectl's AGE: "<unknown>" for a zero time, else 5s, 3m20s, 7h, 12d, ...
func since(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func sinceMicro(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// builtinTables holds the covered resources, by group and plural.
var builtinTables = map[schema.GroupResource]builtinTable{
	{Resource: "pods"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Ready", "string"), col("Status", "string"),
			col("Restarts", "string"), col("Age", "string"), wideCol("IP", "string"), wideCol("Node", "string"),
			wideCol("Nominated Node", "string"), wideCol("Readiness Gates", "string")},
		cells: typed(podCells),
	},
	{Resource: "podtemplates"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Containers", "string"), col("Images", "string"), col("Pod Labels", "string")},
		cells: typed(func(o *corev1.PodTemplate, now time.Time) []any {
			names, images := containerCells(o.Template.Spec.Containers)
			return []any{o.Name, names, images, labels.FormatLabels(o.Template.Labels)}
		}),
	},
	{Resource: "replicationcontrollers"}: {
		columns: workloadColumns(col("Desired", "integer"), col("Current", "integer"), col("Ready", "integer")),
		cells: typed(func(o *corev1.ReplicationController, now time.Time) []any {
			var containers []corev1.Container
			if o.Spec.Template != nil {
				containers = o.Spec.Template.Spec.Containers
			}
			names, images := containerCells(containers)
			return []any{o.Name, int64(deref(o.Spec.Replicas)), int64(o.Status.Replicas), int64(o.Status.ReadyReplicas),
				since(o.CreationTimestamp, now), names, images, labels.FormatLabels(o.Spec.Selector)}
		}),
	},
	{Resource: "services"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Type", "string"), col("Cluster-IP", "string"),
			col("External-IP", "string"), col("Port(s)", "string"), col("Age", "string"), wideCol("Selector", "string")},
		cells: typed(serviceCells),
	},
	{Resource: "endpoints"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Endpoints", "string"), col("Age", "string")},
		cells: typed(func(o *corev1.Endpoints, now time.Time) []any {
			return []any{o.Name, endpointsCell(o), since(o.CreationTimestamp, now)}
		}),
	},
	{Resource: "nodes"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Status", "string"), col("Roles", "string"), col("Age", "string"),
			col("Version", "string"), wideCol("Internal-IP", "string"), wideCol("External-IP", "string"),
			wideCol("OS-Image", "string"), wideCol("Kernel-Version", "string"), wideCol("Container-Runtime", "string")},
		cells: typed(nodeCells),
	},
	{Resource: "events"}: {
		columns: []metav1.TableColumnDefinition{col("Last Seen", "string"), col("Type", "string"), col("Reason", "string"),
			col("Object", "string"), wideCol("Subobject", "string"), wideCol("Source", "string"), col("Message", "string"),
			wideCol("First Seen", "string"), wideCol("Count", "string"),
			{Name: "Name", Type: "string", Format: "name", Priority: 1}},
		cells: typed(eventCells),
	},
	{Resource: "namespaces"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Status", "string"), col("Age", "string")},
		cells: typed(func(o *corev1.Namespace, now time.Time) []any {
			return []any{o.Name, string(o.Status.Phase), since(o.CreationTimestamp, now)}
		}),
	},
	{Resource: "secrets"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Type", "string"), col("Data", "string"), col("Age", "string")},
		cells: typed(func(o *corev1.Secret, now time.Time) []any {
			return []any{o.Name, string(o.Type), int64(len(o.Data)), since(o.CreationTimestamp, now)}
		}),
	},
	{Resource: "serviceaccounts"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Age", "string")},
		cells: typed(func(o *corev1.ServiceAccount, now time.Time) []any {
			return []any{o.Name, since(o.CreationTimestamp, now)}
		}),
	},
	{Resource: "persistentvolumes"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Capacity", "string"), col("Access Modes", "string"),
			col("Reclaim Policy", "string"), col("Status", "string"), col("Claim", "string"), col("StorageClass", "string"),
			col("VolumeAttributesClass", "string"), col("Reason", "string"), col("Age", "string"), wideCol("VolumeMode", "string")},
		cells: typed(persistentVolumeCells),
	},
	{Resource: "persistentvolumeclaims"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Status", "string"), col("Volume", "string"),
			col("Capacity", "string"), col("Access Modes", "string"), col("StorageClass", "string"),
			col("VolumeAttributesClass", "string"), col("Age", "string"), wideCol("VolumeMode", "string")},
		cells: typed(persistentVolumeClaimCells),
	},
	{Resource: "configmaps"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Data", "string"), col("Age", "string")},
		cells: typed(func(o *corev1.ConfigMap, now time.Time) []any {
			return []any{o.Name, int64(len(o.Data) + len(o.BinaryData)), since(o.CreationTimestamp, now)}
		}),
	},
	{Resource: "resourcequotas"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Request", "string"), col("Limit", "string"), col("Age", "string")},
		cells:   typed(resourceQuotaCells),
	},

	{Group: "apps", Resource: "deployments"}: {
		columns: workloadColumns(col("Ready", "string"), col("Up-to-date", "string"), col("Available", "string")),
		cells: typed(func(o *appsv1.Deployment, now time.Time) []any {
			names, images := containerCells(o.Spec.Template.Spec.Containers)
			sel := "<invalid>"
			if s, err := metav1.LabelSelectorAsSelector(o.Spec.Selector); err == nil {
				sel = s.String()
			}
			return []any{o.Name, fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, deref(o.Spec.Replicas)),
				int64(o.Status.UpdatedReplicas), int64(o.Status.AvailableReplicas), since(o.CreationTimestamp, now),
				names, images, sel}
		}),
	},
	{Group: "apps", Resource: "replicasets"}: {
		columns: workloadColumns(col("Desired", "integer"), col("Current", "integer"), col("Ready", "integer")),
		cells: typed(func(o *appsv1.ReplicaSet, now time.Time) []any {
			names, images := containerCells(o.Spec.Template.Spec.Containers)
			return []any{o.Name, int64(deref(o.Spec.Replicas)), int64(o.Status.Replicas), int64(o.Status.ReadyReplicas),
				since(o.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(o.Spec.Selector)}
		}),
	},
	{Group: "apps", Resource: "statefulsets"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Ready", "string"), col("Age", "string"),
			wideCol("Containers", "string"), wideCol("Images", "string")},
		cells: typed(func(o *appsv1.StatefulSet, now time.Time) []any {
			names, images := containerCells(o.Spec.Template.Spec.Containers)
			return []any{o.Name, fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, deref(o.Spec.Replicas)),
				since(o.CreationTimestamp, now), names, images}
		}),
	},
	{Group: "apps", Resource: "daemonsets"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Desired", "integer"), col("Current", "integer"),
			col("Ready", "integer"), col("Up-to-date", "integer"), col("Available", "integer"), col("Node Selector", "string"),
			col("Age", "string"), wideCol("Containers", "string"), wideCol("Images", "string"), wideCol("Selector", "string")},
		cells: typed(func(o *appsv1.DaemonSet, now time.Time) []any {
			names, images := containerCells(o.Spec.Template.Spec.Containers)
			s := o.Status
			return []any{o.Name, int64(s.DesiredNumberScheduled), int64(s.CurrentNumberScheduled), int64(s.NumberReady),
				int64(s.UpdatedNumberScheduled), int64(s.NumberAvailable), labels.FormatLabels(o.Spec.Template.Spec.NodeSelector),
				since(o.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(o.Spec.Selector)}
		}),
	},
	{Group: "apps", Resource: "controllerrevisions"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Controller", "string"), col("Revision", "string"), col("Age", "string")},
		cells: typed(func(o *appsv1.ControllerRevision, now time.Time) []any {
			controller := "<none>"
			if ref := metav1.GetControllerOf(o); ref != nil {
				if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
					controller = kindName(gv.WithKind(ref.Kind).GroupKind()) + "/" + ref.Name
				}
			}
			return []any{o.Name, controller, o.Revision, since(o.CreationTimestamp, now)}
		}),
	},

	{Group: "batch", Resource: "jobs"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Status", "string"), col("Completions", "string"),
			col("Duration", "string"), col("Age", "string"), wideCol("Containers", "string"), wideCol("Images", "string"),
			wideCol("Selector", "string")},
		cells: typed(jobCells),
	},
	{Group: "batch", Resource: "cronjobs"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Schedule", "string"), col("Timezone", "string"),
			col("Suspend", "boolean"), col("Active", "integer"), col("Last Schedule", "string"), col("Age", "string"),
			wideCol("Containers", "string"), wideCol("Images", "string"), wideCol("Selector", "string")},
		cells: typed(func(o *batchv1.CronJob, now time.Time) []any {
			last := "<none>"
			if o.Status.LastScheduleTime != nil {
				last = since(*o.Status.LastScheduleTime, now)
			}
			tz := "<none>"
			if o.Spec.TimeZone != nil {
				tz = *o.Spec.TimeZone
			}
			suspend := "<unset>"
			if o.Spec.Suspend != nil {
				suspend = titleBool(*o.Spec.Suspend)
			}
			names, images := containerCells(o.Spec.JobTemplate.Spec.Template.Spec.Containers)
			return []any{o.Name, o.Spec.Schedule, tz, suspend, int64(len(o.Status.Active)), last, since(o.CreationTimestamp, now),
				names, images, metav1.FormatLabelSelector(o.Spec.JobTemplate.Spec.Selector)}
		}),
	},

	{Group: "networking.k8s.io", Resource: "ingresses"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Class", "string"), col("Hosts", "string"),
			col("Address", "string"), col("Ports", "string"), col("Age", "string")},
		cells: typed(ingressCells),
	},
	{Group: "networking.k8s.io", Resource: "ingressclasses"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Controller", "string"), col("Parameters", "string"), col("Age", "string")},
		cells: typed(func(o *networkingv1.IngressClass, now time.Time) []any {
			name := o.Name
			if o.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
				name += " (default)"
			}
			params := "<none>"
			if p := o.Spec.Parameters; p != nil {
				params = p.Kind
				if p.APIGroup != nil {
					params += "." + *p.APIGroup
				}
				params += "/" + p.Name
			}
			return []any{name, o.Spec.Controller, params, since(o.CreationTimestamp, now)}
		}),
	},
	{Group: "networking.k8s.io", Resource: "networkpolicies"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("Pod-Selector", "string"), col("Age", "string")},
		cells: typed(func(o *networkingv1.NetworkPolicy, now time.Time) []any {
			return []any{o.Name, metav1.FormatLabelSelector(&o.Spec.PodSelector), since(o.CreationTimestamp, now)}
		}),
	},
	{Group: "networking.k8s.io", Resource: "servicecidrs"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("CIDRs", "string"), col("Age", "string")},
		cells: typed(func(o *networkingv1.ServiceCIDR, now time.Time) []any {
			return []any{o.Name, strings.Join(o.Spec.CIDRs, ","), since(o.CreationTimestamp, now)}
		}),
	},
	{Group: "networking.k8s.io", Resource: "ipaddresses"}: {
		columns: []metav1.TableColumnDefinition{nameCol(), col("ParentRef", "string")},
		cells: typed(func(o *networkingv1.IPAddress, now time.Time) []any {
			parent := "<none>"
			if p := o.Spec.ParentRef; p != nil {
				parent = strings.ToLower(schema.GroupResource{Group: p.Group, Resource: p.Resource}.String())
				if p.Namespace != "" {
					parent += "/" + p.Namespace
				}
				parent += "/" + p.Name
			}
			return []any{o.Name, parent}
		}),
	},
}

// workloadColumns is NAME, the three given, AGE, and the wide CONTAINERS, IMAGES, SELECTOR.
func workloadColumns(c1, c2, c3 metav1.TableColumnDefinition) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{nameCol(), c1, c2, c3, col("Age", "string"),
		wideCol("Containers", "string"), wideCol("Images", "string"), wideCol("Selector", "string")}
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func titleBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// containerCells lists the containers' names and images, comma-separated.
func containerCells(cs []corev1.Container) (names, images string) {
	n := make([]string, len(cs))
	im := make([]string, len(cs))
	for i, c := range cs {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// podCells computes READY, STATUS and RESTARTS the way kubectl shows them: the reason of the
// first failing init container, else of the last container that is waiting or terminated,
// "Terminating" while deleted, restarts with the time of the last one.
func podCells(pod *corev1.Pod, now time.Time) []any {
	restarts, sidecarRestarts := 0, 0
	total := len(pod.Spec.Containers)
	ready := 0
	var lastRestart, lastSidecarRestart time.Time

	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	sidecars := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
			total++
		}
	}
	later := func(t *time.Time, term *corev1.ContainerStateTerminated) {
		if term != nil && term.FinishedAt.After(*t) {
			*t = term.FinishedAt.Time
		}
	}

	initializing := false
	for i, cs := range pod.Status.InitContainerStatuses {
		restarts += int(cs.RestartCount)
		later(&lastRestart, cs.LastTerminationState.Terminated)
		if sidecars[cs.Name] {
			sidecarRestarts += int(cs.RestartCount)
			later(&lastSidecarRestart, cs.LastTerminationState.Terminated)
		}
		term, wait := cs.State.Terminated, cs.State.Waiting
		switch {
		case term != nil && term.ExitCode == 0:
			continue
		case sidecars[cs.Name] && cs.Started != nil && *cs.Started:
			if cs.Ready {
				ready++
			}
			continue
		case term != nil:
			switch {
			case term.Reason != "":
				reason = "Init:" + term.Reason
			case term.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", term.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", term.ExitCode)
			}
		case wait != nil && wait.Reason != "" && wait.Reason != "PodInitializing":
			reason = "Init:" + wait.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || podConditionTrue(pod, corev1.PodInitialized) {
		restarts, lastRestart = sidecarRestarts, lastSidecarRestart
		running := false
		errorReason := ""
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			cs := pod.Status.ContainerStatuses[i]
			restarts += int(cs.RestartCount)
			later(&lastRestart, cs.LastTerminationState.Terminated)
			switch term := cs.State.Terminated; {
			case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
				reason = cs.State.Waiting.Reason
			case term != nil:
				switch {
				case term.Reason != "":
					reason = term.Reason
				case term.Signal != 0:
					reason = fmt.Sprintf("Signal:%d", term.Signal)
				default:
					reason = fmt.Sprintf("ExitCode:%d", term.ExitCode)
				}
				if term.ExitCode != 0 {
					errorReason = reason
				}
			case cs.Ready && cs.State.Running != nil:
				running = true
				ready++
			}
		}
		if reason == "Completed" {
			switch {
			case running && podConditionTrue(pod, corev1.PodReady):
				reason = "Running"
			case errorReason != "":
				reason = errorReason
			case running:
				reason = "NotReady"
			}
		}
	}

	terminal := pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == "NodeLost":
		reason = "Unknown"
	case pod.DeletionTimestamp != nil && !terminal:
		reason = "Terminating"
	}

	restartCell := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartCell = fmt.Sprintf("%d (%s ago)", restarts, since(metav1.NewTime(lastRestart), now))
	}

	ip := "<none>"
	if len(pod.Status.PodIPs) > 0 && pod.Status.PodIPs[0].IP != "" {
		ip = pod.Status.PodIPs[0].IP
	}
	gates := "<none>"
	if n := len(pod.Spec.ReadinessGates); n > 0 {
		ok := 0
		for _, g := range pod.Spec.ReadinessGates {
			if podConditionTrue(pod, g.ConditionType) {
				ok++
			}
		}
		gates = fmt.Sprintf("%d/%d", ok, n)
	}
	return []any{pod.Name, fmt.Sprintf("%d/%d", ready, total), reason, restartCell, since(pod.CreationTimestamp, now),
		ip, orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), gates}
}

// podConditionTrue says whether the first condition of type t is True.
func podConditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func serviceCells(svc *corev1.Service, now time.Time) []any {
	clusterIP := "<none>"
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	}
	var external string
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		external = "<none>"
		if len(svc.Spec.ExternalIPs) > 0 {
			external = strings.Join(svc.Spec.ExternalIPs, ",")
		}
	case corev1.ServiceTypeLoadBalancer:
		var addrs []string
		for _, in := range svc.Status.LoadBalancer.Ingress {
			switch {
			case in.IP != "":
				addrs = append(addrs, in.IP)
			case in.Hostname != "":
				addrs = append(addrs, in.Hostname)
			}
		}
		slices.Sort(addrs)
		addrs = slices.Compact(addrs)
		addrs = append(addrs, svc.Spec.ExternalIPs...)
		external = "<pending>"
		if len(addrs) > 0 {
			external = strings.Join(addrs, ",")
		}
	case corev1.ServiceTypeExternalName:
		external = svc.Spec.ExternalName
	default:
		external = "<unknown>"
	}
	ports := make([]string, len(svc.Spec.Ports))
	for i, p := range svc.Spec.Ports {
		if p.NodePort > 0 {
			ports[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		} else {
			ports[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		}
	}
	portCell := strings.Join(ports, ",")
	if portCell == "" {
		portCell = "<none>"
	}
	return []any{svc.Name, string(svc.Spec.Type), clusterIP, external, portCell, since(svc.CreationTimestamp, now),
		labels.FormatLabels(svc.Spec.Selector)}
}

// endpointsCell lists up to three addresses (ip:port) and counts the rest.
func endpointsCell(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	count := 0
	add := func(s string) {
		count++
		if len(list) < max {
			list = append(list, s)
		}
	}
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			for _, a := range ss.Addresses {
				add(a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			for _, a := range ss.Addresses {
				add(net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	s := strings.Join(list, ",")
	if count > max {
		return fmt.Sprintf("%s + %d more...", s, count-max)
	}
	return s
}

func nodeCells(n *corev1.Node, now time.Time) []any {
	var status []string
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				status = []string{"Ready"}
			} else {
				status = []string{"NotReady"}
			}
		}
	}
	if len(status) == 0 {
		status = []string{"Unknown"}
	}
	if n.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	var roles []string
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if r := strings.TrimPrefix(k, "node-role.kubernetes.io/"); r != "" {
				roles = append(roles, r)
			}
		case k == "kubernetes.io/role" && v != "":
			roles = append(roles, v)
		}
	}
	slices.Sort(roles)
	roles = slices.Compact(roles)
	roleCell := strings.Join(roles, ",")
	if roleCell == "" {
		roleCell = "<none>"
	}
	address := func(t corev1.NodeAddressType) string {
		for _, a := range n.Status.Addresses {
			if a.Type == t {
				return a.Address
			}
		}
		return "<none>"
	}
	info := n.Status.NodeInfo
	unknown := func(s string) string {
		if s == "" {
			return "<unknown>"
		}
		return s
	}
	kernel := unknown(info.KernelVersion)
	if info.Architecture != "" {
		kernel += " (" + info.Architecture + ")"
	}
	return []any{n.Name, strings.Join(status, ","), roleCell, since(n.CreationTimestamp, now), info.KubeletVersion,
		address(corev1.NodeInternalIP), address(corev1.NodeExternalIP), unknown(info.OSImage), kernel,
		unknown(info.ContainerRuntimeVersion)}
}

func eventCells(e *corev1.Event, now time.Time) []any {
	first := since(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = sinceMicro(e.EventTime, now)
	}
	last := since(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = sinceMicro(e.Series.LastObservedTime, now)
		count = e.Series.Count
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	component := firstNonEmpty(e.Source.Component, e.ReportingController)
	source := component
	if host := firstNonEmpty(e.Source.Host, e.ReportingInstance); host != "" {
		source += ", " + host
	}
	return []any{last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, source, strings.TrimSpace(e.Message),
		first, int64(count), e.Name}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// accessModes is RWO,ROX,RWX,RWOP in that order, each once.
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"}} {
		if slices.Contains(modes, m.mode) {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

func persistentVolumeCells(pv *corev1.PersistentVolume, now time.Time) []any {
	claim := ""
	if r := pv.Spec.ClaimRef; r != nil {
		claim = r.Namespace + "/" + r.Name
	}
	size := pv.Spec.Capacity[corev1.ResourceStorage]
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	class, ok := pv.Annotations[betaStorageClassAnnotation]
	if !ok {
		class = pv.Spec.StorageClassName
	}
	vac := "<unset>"
	if pv.Spec.VolumeAttributesClassName != nil {
		vac = *pv.Spec.VolumeAttributesClassName
	}
	mode := "<unset>"
	if pv.Spec.VolumeMode != nil {
		mode = string(*pv.Spec.VolumeMode)
	}
	return []any{pv.Name, size.String(), accessModes(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, class, vac, pv.Status.Reason, since(pv.CreationTimestamp, now), mode}
}

func persistentVolumeClaimCells(pvc *corev1.PersistentVolumeClaim, now time.Time) []any {
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	capacity, modes := "", ""
	if pvc.Spec.VolumeName != "" {
		modes = accessModes(pvc.Status.AccessModes)
		q := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity = q.String()
	}
	class, ok := pvc.Annotations[betaStorageClassAnnotation]
	if !ok && pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	vac := "<unset>"
	if pvc.Spec.VolumeAttributesClassName != nil {
		vac = *pvc.Spec.VolumeAttributesClassName
	}
	mode := "<unset>"
	if pvc.Spec.VolumeMode != nil {
		mode = string(*pvc.Spec.VolumeMode)
	}
	return []any{pvc.Name, phase, pvc.Spec.VolumeName, capacity, modes, class, vac, since(pvc.CreationTimestamp, now), mode}
}

// resourceQuotaCells lists "resource: used/hard" per hard limit, limits.* in LIMIT and the
// rest in REQUEST, in resource-name order.
func resourceQuotaCells(q *corev1.ResourceQuota, now time.Time) []any {
	names := make([]string, 0, len(q.Status.Hard))
	for n := range q.Status.Hard {
		names = append(names, string(n))
	}
	slices.Sort(names)
	var request, limit []string
	for _, n := range names {
		used, hard := q.Status.Used[corev1.ResourceName(n)], q.Status.Hard[corev1.ResourceName(n)]
		s := fmt.Sprintf("%s: %s/%s", n, used.String(), hard.String())
		if first, _, ok := strings.Cut(n, "."); ok && first == "limits" {
			limit = append(limit, s)
		} else {
			request = append(request, s)
		}
	}
	return []any{q.Name, strings.Join(request, ", "), strings.Join(limit, ", "), since(q.CreationTimestamp, now)}
}

func jobCells(j *batchv1.Job, now time.Time) []any {
	var completions string
	switch {
	case j.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	case deref(j.Spec.Parallelism) > 1:
		completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, *j.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
	}
	var dur string
	switch {
	case j.Status.StartTime == nil:
	case j.Status.CompletionTime == nil:
		dur = duration.HumanDuration(now.Sub(j.Status.StartTime.Time))
	default:
		dur = duration.HumanDuration(j.Status.CompletionTime.Sub(j.Status.StartTime.Time))
	}
	cond := func(t batchv1.JobConditionType) bool {
		for _, c := range j.Status.Conditions {
			if c.Type == t {
				return c.Status == corev1.ConditionTrue
			}
		}
		return false
	}
	var status string
	switch {
	case cond(batchv1.JobComplete):
		status = "Complete"
	case cond(batchv1.JobFailed):
		status = "Failed"
	case j.DeletionTimestamp != nil:
		status = "Terminating"
	case cond(batchv1.JobSuspended):
		status = "Suspended"
	case cond(batchv1.JobFailureTarget):
		status = "FailureTarget"
	case cond(batchv1.JobSuccessCriteriaMet):
		status = "SuccessCriteriaMet"
	default:
		status = "Running"
	}
	names, images := containerCells(j.Spec.Template.Spec.Containers)
	return []any{j.Name, status, completions, dur, since(j.CreationTimestamp, now), names, images,
		metav1.FormatLabelSelector(j.Spec.Selector)}
}

func ingressCells(in *networkingv1.Ingress, now time.Time) []any {
	class := "<none>"
	if in.Spec.IngressClassName != nil {
		class = *in.Spec.IngressClassName
	}
	const max = 3
	var hosts []string
	more := false
	for _, r := range in.Spec.Rules {
		if len(hosts) == max {
			more = true
			break
		}
		if r.Host != "" {
			hosts = append(hosts, r.Host)
		}
	}
	hostCell := strings.Join(hosts, ",")
	switch {
	case len(hosts) == 0:
		hostCell = "*"
	case more:
		hostCell = fmt.Sprintf("%s + %d more...", hostCell, len(in.Spec.Rules)-max)
	}
	var addrs []string
	for _, lb := range in.Status.LoadBalancer.Ingress {
		switch {
		case lb.IP != "":
			addrs = append(addrs, lb.IP)
		case lb.Hostname != "":
			addrs = append(addrs, lb.Hostname)
		}
	}
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	ports := "80"
	if len(in.Spec.TLS) > 0 {
		ports = "80, 443"
	}
	return []any{in.Name, class, hostCell, strings.Join(addrs, ","), ports, since(in.CreationTimestamp, now)}
}
