package refs

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resources the built-in rules name.
var (
	pods                    = gr("", "pods")
	configMaps              = gr("", "configmaps")
	secrets                 = gr("", "secrets")
	services                = gr("", "services")
	serviceAccounts         = gr("", "serviceaccounts")
	nodes                   = gr("", "nodes")
	pvcs                    = gr("", "persistentvolumeclaims")
	pvs                     = gr("", "persistentvolumes")
	storageClasses          = gr("storage.k8s.io", "storageclasses")
	volumeAttributesClasses = gr("storage.k8s.io", "volumeattributesclasses")
	priorityClasses         = gr("scheduling.k8s.io", "priorityclasses")
	runtimeClasses          = gr("node.k8s.io", "runtimeclasses")
	resourceClaims          = gr("resource.k8s.io", "resourceclaims")
	resourceClaimTemplates  = gr("resource.k8s.io", "resourceclaimtemplates")
	deviceClasses           = gr("resource.k8s.io", "deviceclasses")
	clusterTrustBundles     = gr("certificates.k8s.io", "clustertrustbundles")
	ingresses               = gr("networking.k8s.io", "ingresses")
	ingressClasses          = gr("networking.k8s.io", "ingressclasses")
	roleBindings            = gr("rbac.authorization.k8s.io", "rolebindings")
	clusterRoleBindings     = gr("rbac.authorization.k8s.io", "clusterrolebindings")
	clusterRoles            = gr("rbac.authorization.k8s.io", "clusterroles")
	endpointSlices          = gr("discovery.k8s.io", "endpointslices")
)

func gr(group, resource string) schema.GroupResource {
	return schema.GroupResource{Group: group, Resource: resource}
}

// podSpecRefs are the references of a Pod's spec, relative to the spec: a Pod's own
// (.spec) and every workload's Pod template (.spec.template.spec, ...) hold the same. With
// a name field, the paths yield object references (ConfigMap and Secret sources that may be
// marked optional), else names.
var podSpecRefs = []struct {
	name  string
	paths []string // relative to the spec; several are one union
	to    schema.GroupResource
	ns    NamespaceMode
	// nameField and optField: the paths yield objects, with the name in nameField and
	// "optional: true" in optField.
	nameField, optField string
}{
	{"volume-configmap", []string{`.volumes[*].configMap`}, configMaps, NamespaceSame, "name", "optional"},
	{"volume-secret", []string{`.volumes[*].secret`}, secrets, NamespaceSame, "secretName", "optional"},
	{"volume-pvc", []string{`.volumes[*].persistentVolumeClaim.claimName`}, pvcs, NamespaceSame, "", ""},
	{"ephemeral-storageclass", []string{`.volumes[*].ephemeral.volumeClaimTemplate.spec.storageClassName`,
		`.volumes[*].ephemeral.volumeClaimTemplate.metadata.annotations['` + betaStorageClass + `']`}, storageClasses, NamespaceCluster, "", ""},
	{"ephemeral-volumeattributesclass", []string{`.volumes[*].ephemeral.volumeClaimTemplate.spec.volumeAttributesClassName`},
		volumeAttributesClasses, NamespaceCluster, "", ""},
	{"projected-configmap", []string{`.volumes[*].projected.sources[*].configMap`}, configMaps, NamespaceSame, "name", "optional"},
	{"projected-secret", []string{`.volumes[*].projected.sources[*].secret`}, secrets, NamespaceSame, "name", "optional"},
	{"projected-clustertrustbundle", []string{`.volumes[*].projected.sources[*].clusterTrustBundle`}, clusterTrustBundles, NamespaceCluster, "name", "optional"},
	{"volume-plugin-secret", []string{`.volumes[*]['cephfs','cinder','flexVolume','iscsi','rbd','scaleIO','storageos'].secretRef.name`,
		`.volumes[*].csi.nodePublishSecretRef.name`, `.volumes[*].azureFile.secretName`}, secrets, NamespaceSame, "", ""},
	{"env-configmap", []string{`['containers','initContainers','ephemeralContainers'][*].env[*].valueFrom.configMapKeyRef`}, configMaps, NamespaceSame, "name", "optional"},
	{"envfrom-configmap", []string{`['containers','initContainers','ephemeralContainers'][*].envFrom[*].configMapRef`}, configMaps, NamespaceSame, "name", "optional"},
	{"env-secret", []string{`['containers','initContainers','ephemeralContainers'][*].env[*].valueFrom.secretKeyRef`}, secrets, NamespaceSame, "name", "optional"},
	{"envfrom-secret", []string{`['containers','initContainers','ephemeralContainers'][*].envFrom[*].secretRef`}, secrets, NamespaceSame, "name", "optional"},
	{"image-pull-secret", []string{`.imagePullSecrets[*].name`}, secrets, NamespaceSame, "", ""},
	{"serviceaccount", []string{`.serviceAccountName`}, serviceAccounts, NamespaceSame, "", ""},
	{"node", []string{`.nodeName`}, nodes, NamespaceCluster, "", ""},
	{"priorityclass", []string{`.priorityClassName`}, priorityClasses, NamespaceCluster, "", ""},
	{"runtimeclass", []string{`.runtimeClassName`}, runtimeClasses, NamespaceCluster, "", ""},
	{"resourceclaim", []string{`.resourceClaims[*].resourceClaimName`}, resourceClaims, NamespaceSame, "", ""},
	{"resourceclaimtemplate", []string{`.resourceClaims[*].resourceClaimTemplateName`}, resourceClaimTemplates, NamespaceSame, "", ""},
	// The headless Service whose DNS names the Pod's hostname.subdomain (a StatefulSet
	// writes its serviceName there).
	{"subdomain", []string{`.subdomain`}, services, NamespaceSame, "", ""},
}

// podStatusRefs are where a Pod, not a template, also names the objects of a Pod spec
// reference, by the reference's name: the ResourceClaims made for it from its claim
// templates, which its status names (the claim of each template is "<pod>-<claim>-<random>",
// which no spec field holds).
var podStatusRefs = map[string]string{
	"resourceclaim": ".status.resourceClaimStatuses[*].resourceClaimName",
}

// csiSecretParameters are the StorageClass parameters with which a CSI provisioner is given
// the Secrets of its operations, each as a name and a namespace parameter (kubernetes-csi's
// external-provisioner): "csi.storage.k8s.io/<op>-secret-name" and "-namespace".
var csiSecretParameters = []string{"provisioner", "controller-publish", "node-stage", "node-publish", "controller-expand", "node-expand"}

// podTemplateHolders are the resources with a Pod spec, and where it is.
var podTemplateHolders = []struct {
	from schema.GroupResource
	spec string
}{
	{pods, ".spec"},
	{gr("", "podtemplates"), ".template.spec"},
	{gr("", "replicationcontrollers"), ".spec.template.spec"},
	{gr("apps", "deployments"), ".spec.template.spec"},
	{gr("apps", "replicasets"), ".spec.template.spec"},
	{gr("apps", "statefulsets"), ".spec.template.spec"},
	{gr("apps", "daemonsets"), ".spec.template.spec"},
	{gr("batch", "jobs"), ".spec.template.spec"},
	{gr("batch", "cronjobs"), ".spec.jobTemplate.spec.template.spec"},
}

// joinPath is the expression of paths relative to spec: "{spec<p1>,spec<p2>}".
func joinPath(spec string, rel []string) string {
	out := "{"
	for i, p := range rel {
		if i > 0 {
			out += ","
		}
		out += spec + p
	}
	return out + "}"
}

// betaStorageClass is the annotation with which a claim or a volume may name its
// StorageClass, which Kubernetes still reads before the field.
const betaStorageClass = "volume.beta.kubernetes.io/storage-class"

// storageClassPath is where a claim or a volume names its StorageClass: the field, and the
// beta annotation. Claim templates (a StatefulSet's, an ephemeral volume's) hold both too,
// which the claims made from them copy.
const storageClassPath = "{.spec.storageClassName,.metadata.annotations['" + betaStorageClass + "']}"

// deviceClassPath is where a resource claim's device requests, at devices, name their
// DeviceClasses: each request exactly, or each of its alternatives.
func deviceClassPath(devices string) string {
	return "{" + devices + ".requests[*].exactly.deviceClassName," + devices + ".requests[*].firstAvailable[*].deviceClassName}"
}

// BuiltinRules returns kindex's rules for the built-in resources, in the form users write
// their own (a new slice each call; append rules for custom resources to it):
//
//   - "owner": every object to its owners (.metadata.ownerReferences, by apiVersion, kind,
//     name and UID);
//   - Pods, and the Pod templates of PodTemplates, ReplicationControllers, Deployments,
//     ReplicaSets, StatefulSets, DaemonSets, Jobs and CronJobs, to the ConfigMaps, Secrets
//     and PersistentVolumeClaims of their volumes (projected ones, ClusterTrustBundles
//     included, and volume plugins' secret references), the StorageClasses of their
//     generic ephemeral volumes' claim templates, the ConfigMaps and Secrets of env and
//     envFrom (of containers, init containers and ephemeral containers), image pull
//     Secrets, the ServiceAccount, the Node, the PriorityClass, the RuntimeClass,
//     resource claims (and templates; a Pod also to the claims made for it from its
//     templates, which its status names) and the Service of their subdomain; a Pod also to
//     the claim of each generic ephemeral volume, <pod>-<volume> ("pods:ephemeral-claim",
//     NamedAfterSource); their ConfigMap,
//     Secret and ClusterTrustBundle volumes and projected sources, env key references and
//     envFrom sources are object
//     references ("{.spec.volumes[*].configMap}", NameField "name", or "secretName" for a
//     Secret volume) with OptionalField "optional", so that those marked "optional: true"
//     are optional edges, which Dangling leaves out;
//   - StatefulSets to their governing Service and their claim templates' StorageClasses
//     (the field or the beta annotation, in these templates as in an ephemeral volume's)
//     and VolumeAttributesClasses (so do the claim templates of generic ephemeral volumes);
//   - CSIStorageCapacities to their StorageClass; FlowSchemas to their priority level;
//   - PersistentVolumeClaims to their PersistentVolume, StorageClass (spec.storageClassName
//     or the beta annotation volume.beta.kubernetes.io/storage-class), VolumeAttributesClass
//     and data source; PersistentVolumes to their StorageClass (either way),
//     VolumeAttributesClass, claim (by UID), and the Secrets of their CSI and in-tree
//     volume sources (those that name the Secret's namespace);
//   - Ingresses to their backend Services and resources, IngressClass and TLS Secrets;
//     IngressClasses to their parameters;
//   - RoleBindings and ClusterRoleBindings to their Role or ClusterRole and ServiceAccount
//     subjects; ClusterRoles to the ClusterRoles their aggregation rule selects;
//   - Services, PodDisruptionBudgets and NetworkPolicies to the Pods they select (label
//     selectors, kept current as labels change), but Services of type ExternalName, which
//     have no endpoints whatever their selector says (the rule's Unless);
//   - HorizontalPodAutoscalers to their scale target and the objects their Object metrics
//     describe;
//   - APIServices, validating and mutating webhook configurations and CRD conversion
//     webhooks to their Services; Validating and MutatingAdmissionPolicyBindings to their
//     policy; ResourceClaims and ResourceClaimTemplates to their requests' DeviceClasses;
//   - ServiceAccounts to their Secrets and image pull Secrets; service account token
//     Secrets to their ServiceAccount; VolumeAttachments to their Node and PersistentVolume;
//   - EndpointSlices to the objects their endpoints name (Pods, by UID) and to their
//     Service; StorageClasses to the Secrets their CSI parameters name
//     ("csi.storage.k8s.io/provisioner-secret-name" and "-namespace", and those of the
//     other operations; a templated name such as "${pvc.name}" names no one Secret, and
//     is not followed).
//
// Rule names are "<resource>:<reference>" ("pods:volume-configmap",
// "deployments.apps:env-secret"), and "owner".
func BuiltinRules() []Rule {
	rules := []Rule{{
		Name: "owner", From: AnyResource, Path: "{.metadata.ownerReferences[*]}",
		APIVersionField: "apiVersion", KindField: "kind", NameField: "name", UIDField: "uid",
	}}
	for _, h := range podTemplateHolders {
		for _, r := range podSpecRefs {
			path := joinPath(h.spec, r.paths)
			if extra := podStatusRefs[r.name]; h.from == pods && extra != "" {
				path = strings.TrimSuffix(path, "}") + "," + extra + "}"
			}
			rules = append(rules, Rule{Name: resourceName(h.from) + ":" + r.name, From: h.from,
				Path: path, To: r.to, Namespace: r.ns, NameField: r.nameField, OptionalField: r.optField})
		}
	}
	// The claim Kubernetes makes for each generic ephemeral volume of a Pod, named
	// <pod>-<volume> (a template has no Pod name yet: its Pods' claims are theirs).
	rules = append(rules, Rule{Name: "pods:ephemeral-claim", From: pods, Path: "{.spec.volumes[?(@.ephemeral)].name}",
		To: pvcs, Namespace: NamespaceSame, NamedAfterSource: true})
	objectRef := func(r Rule) Rule {
		r.NameField, r.NamespaceField = "name", "namespace"
		return r
	}
	typedRef := func(r Rule) Rule { // TypedLocalObjectReference and its relatives
		r.KindField, r.GroupField, r.NameField, r.NamespaceField = "kind", "apiGroup", "name", "namespace"
		return r
	}
	statefulSets := gr("apps", "statefulsets")
	rules = append(rules,
		Rule{Name: "statefulsets.apps:service", From: statefulSets, Path: "{.spec.serviceName}", To: services, Namespace: NamespaceSame},
		Rule{Name: "statefulsets.apps:claim-storageclass", From: statefulSets,
			Path: "{.spec.volumeClaimTemplates[*].spec.storageClassName,.spec.volumeClaimTemplates[*].metadata.annotations['" + betaStorageClass + "']}",
			To:   storageClasses, Namespace: NamespaceCluster},
		Rule{Name: "statefulsets.apps:claim-volumeattributesclass", From: statefulSets,
			Path: "{.spec.volumeClaimTemplates[*].spec.volumeAttributesClassName}", To: volumeAttributesClasses, Namespace: NamespaceCluster},
		// The capacity a CSI driver reports for a class of storage in a topology segment.
		Rule{Name: "csistoragecapacities.storage.k8s.io:storageclass", From: gr("storage.k8s.io", "csistoragecapacities"),
			Path: "{.storageClassName}", To: storageClasses, Namespace: NamespaceCluster},
		// API Priority and Fairness: a FlowSchema sends its requests to a priority level.
		Rule{Name: "flowschemas.flowcontrol.apiserver.k8s.io:prioritylevel", From: gr("flowcontrol.apiserver.k8s.io", "flowschemas"),
			Path: "{.spec.priorityLevelConfiguration.name}", To: gr("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"),
			Namespace: NamespaceCluster},

		Rule{Name: "persistentvolumeclaims:volume", From: pvcs, Path: "{.spec.volumeName}", To: pvs, Namespace: NamespaceCluster},
		Rule{Name: "persistentvolumeclaims:storageclass", From: pvcs, Path: storageClassPath, To: storageClasses, Namespace: NamespaceCluster},
		Rule{Name: "persistentvolumeclaims:volumeattributesclass", From: pvcs, Path: "{.spec.volumeAttributesClassName}",
			To: volumeAttributesClasses, Namespace: NamespaceCluster},
		typedRef(Rule{Name: "persistentvolumeclaims:datasource", From: pvcs, Path: "{.spec.dataSource,.spec.dataSourceRef}"}),
		Rule{Name: "persistentvolumes:storageclass", From: pvs, Path: storageClassPath, To: storageClasses, Namespace: NamespaceCluster},
		Rule{Name: "persistentvolumes:volumeattributesclass", From: pvs, Path: "{.spec.volumeAttributesClassName}",
			To: volumeAttributesClasses, Namespace: NamespaceCluster},
		Rule{Name: "persistentvolumes:claim", From: pvs, Path: "{.spec.claimRef}", To: pvcs,
			NameField: "name", NamespaceField: "namespace", UIDField: "uid"},
		objectRef(Rule{Name: "persistentvolumes:csi-secret", From: pvs,
			Path: "{.spec.csi['nodePublishSecretRef','nodeStageSecretRef','controllerPublishSecretRef','controllerExpandSecretRef','nodeExpandSecretRef']}",
			To:   secrets}),
		// In-tree volume sources name their Secret and its namespace; without a namespace the
		// Secret is in the namespace of the Pod that mounts the volume, which the PV does not say.
		objectRef(Rule{Name: "persistentvolumes:volume-plugin-secret", From: pvs,
			Path: "{.spec['cephfs','cinder','flexVolume','iscsi','rbd','scaleIO','storageos'].secretRef}", To: secrets}),
		Rule{Name: "persistentvolumes:azurefile-secret", From: pvs, Path: "{.spec.azureFile}", To: secrets,
			NameField: "secretName", NamespaceField: "secretNamespace"},

		Rule{Name: "ingresses.networking.k8s.io:backend-service", From: ingresses,
			Path: "{.spec.defaultBackend.service.name,.spec.rules[*].http.paths[*].backend.service.name}", To: services, Namespace: NamespaceSame},
		typedRef(Rule{Name: "ingresses.networking.k8s.io:backend-resource", From: ingresses,
			Path: "{.spec.defaultBackend.resource,.spec.rules[*].http.paths[*].backend.resource}"}),
		Rule{Name: "ingresses.networking.k8s.io:class", From: ingresses, Path: "{.spec.ingressClassName}", To: ingressClasses, Namespace: NamespaceCluster},
		Rule{Name: "ingresses.networking.k8s.io:tls-secret", From: ingresses, Path: "{.spec.tls[*].secretName}", To: secrets, Namespace: NamespaceSame},
		typedRef(Rule{Name: "ingressclasses.networking.k8s.io:parameters", From: ingressClasses, Path: "{.spec.parameters}"}),
	)
	for _, b := range []schema.GroupResource{roleBindings, clusterRoleBindings} {
		rules = append(rules,
			typedRef(Rule{Name: resourceName(b) + ":role", From: b, Path: "{.roleRef}", Kinds: []string{"Role", "ClusterRole"}}),
			typedRef(Rule{Name: resourceName(b) + ":subject", From: b, Path: "{.subjects[*]}", Kinds: []string{"ServiceAccount"}}),
		)
	}
	rules = append(rules,
		Rule{Name: "clusterroles.rbac.authorization.k8s.io:aggregation", From: clusterRoles,
			Path: "{.aggregationRule.clusterRoleSelectors[*]}", To: clusterRoles, Selector: SelectorLabelSelector},
		// A Service of type ExternalName has no endpoints: the EndpointSlice controller skips
		// it, selector or not, so that it selects no Pod.
		Rule{Name: "services:selector", From: services, Path: "{.spec.selector}", To: pods, Selector: SelectorMap,
			Unless: Condition{Path: "{.spec.type}", Values: []string{"ExternalName"}}},
		Rule{Name: "poddisruptionbudgets.policy:selector", From: gr("policy", "poddisruptionbudgets"),
			Path: "{.spec.selector}", To: pods, Selector: SelectorLabelSelector},
		Rule{Name: "networkpolicies.networking.k8s.io:pod-selector", From: gr("networking.k8s.io", "networkpolicies"),
			Path: "{.spec.podSelector}", To: pods, Selector: SelectorLabelSelector},
		Rule{Name: "horizontalpodautoscalers.autoscaling:target", From: gr("autoscaling", "horizontalpodautoscalers"),
			Path: "{.spec.scaleTargetRef}", APIVersionField: "apiVersion", KindField: "kind", NameField: "name"},
		Rule{Name: "horizontalpodautoscalers.autoscaling:metric-object", From: gr("autoscaling", "horizontalpodautoscalers"),
			Path: "{.spec.metrics[*].object.describedObject}", APIVersionField: "apiVersion", KindField: "kind", NameField: "name"},
		objectRef(Rule{Name: "apiservices.apiregistration.k8s.io:service", From: gr("apiregistration.k8s.io", "apiservices"),
			Path: "{.spec.service}", To: services}),
		objectRef(Rule{Name: "validatingwebhookconfigurations.admissionregistration.k8s.io:service",
			From: gr("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
			Path: "{.webhooks[*].clientConfig.service}", To: services}),
		objectRef(Rule{Name: "mutatingwebhookconfigurations.admissionregistration.k8s.io:service",
			From: gr("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
			Path: "{.webhooks[*].clientConfig.service}", To: services}),
		objectRef(Rule{Name: "customresourcedefinitions.apiextensions.k8s.io:conversion-service",
			From: gr("apiextensions.k8s.io", "customresourcedefinitions"),
			Path: "{.spec.conversion.webhook.clientConfig.service}", To: services}),
		Rule{Name: "validatingadmissionpolicybindings.admissionregistration.k8s.io:policy",
			From: gr("admissionregistration.k8s.io", "validatingadmissionpolicybindings"), Path: "{.spec.policyName}",
			To: gr("admissionregistration.k8s.io", "validatingadmissionpolicies"), Namespace: NamespaceCluster},
		Rule{Name: "mutatingadmissionpolicybindings.admissionregistration.k8s.io:policy",
			From: gr("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"), Path: "{.spec.policyName}",
			To: gr("admissionregistration.k8s.io", "mutatingadmissionpolicies"), Namespace: NamespaceCluster},
		Rule{Name: "resourceclaims.resource.k8s.io:deviceclass", From: resourceClaims, Path: deviceClassPath(".spec.devices"),
			To: deviceClasses, Namespace: NamespaceCluster},
		Rule{Name: "resourceclaimtemplates.resource.k8s.io:deviceclass", From: resourceClaimTemplates, Path: deviceClassPath(".spec.spec.devices"),
			To: deviceClasses, Namespace: NamespaceCluster},
		Rule{Name: "serviceaccounts:secret", From: serviceAccounts, Path: "{.secrets[*].name}", To: secrets, Namespace: NamespaceSame},
		Rule{Name: "serviceaccounts:image-pull-secret", From: serviceAccounts, Path: "{.imagePullSecrets[*].name}", To: secrets, Namespace: NamespaceSame},
		Rule{Name: "secrets:serviceaccount", From: secrets, Path: "{.metadata.annotations['kubernetes.io/service-account.name']}",
			To: serviceAccounts, Namespace: NamespaceSame},
		Rule{Name: "volumeattachments.storage.k8s.io:node", From: gr("storage.k8s.io", "volumeattachments"), Path: "{.spec.nodeName}",
			To: nodes, Namespace: NamespaceCluster},
		Rule{Name: "volumeattachments.storage.k8s.io:volume", From: gr("storage.k8s.io", "volumeattachments"),
			Path: "{.spec.source.persistentVolumeName}", To: pvs, Namespace: NamespaceCluster},

		// An EndpointSlice names the objects (Pods) that serve its endpoints, by kind,
		// namespace, name and UID (an ObjectReference, whose apiVersion is usually empty:
		// the core group), and the Service it is for by a label. (The deprecated core
		// Endpoints, which DefaultFilter leaves out, have no rule.)
		Rule{Name: "endpointslices.discovery.k8s.io:target", From: endpointSlices, Path: "{.endpoints[*].targetRef}",
			APIVersionField: "apiVersion", KindField: "kind", NameField: "name", NamespaceField: "namespace", UIDField: "uid"},
		Rule{Name: "endpointslices.discovery.k8s.io:service", From: endpointSlices,
			Path: "{.metadata.labels['kubernetes.io/service-name']}", To: services, Namespace: NamespaceSame},
	)
	for _, op := range csiSecretParameters {
		param := "csi.storage.k8s.io/" + op + "-secret-"
		rules = append(rules, Rule{Name: "storageclasses.storage.k8s.io:csi-" + op + "-secret", From: storageClasses,
			Path: "{.parameters}", To: secrets, NameField: param + "name", NamespaceField: param + "namespace"})
	}
	return rules
}
