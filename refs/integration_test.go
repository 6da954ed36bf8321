package refs_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/refs"
)

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

var (
	podsR        = gvr("", "v1", "pods")
	configMapsR  = gvr("", "v1", "configmaps")
	secretsR     = gvr("", "v1", "secrets")
	servicesR    = gvr("", "v1", "services")
	widgetGroup  = "refs.example.com"
	widgetsR     = gvr(widgetGroup, "v1", "widgets")
	widgetsGR    = schema.GroupResource{Group: widgetGroup, Resource: "widgets"}
	configMapsGR = schema.GroupResource{Resource: "configmaps"}
	secretsGR    = schema.GroupResource{Resource: "secrets"}
	servicesGR   = schema.GroupResource{Resource: "services"}
	widgetRules  = []refs.Rule{
		{Name: "widgets:secret", From: widgetsGR, Path: "{.spec.secretRef.name}", To: secretsGR, Namespace: refs.NamespaceSame},
		{Name: "widgets:target", From: widgetsGR, Path: "{.spec.targetRef}", KindField: "kind", GroupField: "apiGroup", NameField: "name"},
	}
)

// podSpec uses everything a Pod spec can reference (but ephemeral containers, which only
// the ephemeralcontainers subresource sets; the unit tests cover them).
const podSpec = `{
  "restartPolicy": "RESTART", "serviceAccountName": "app-sa", "nodeName": "node-{c}", "priorityClassName": "high-{c}",
  "runtimeClassName": "rc-{c}", "automountServiceAccountToken": false, "subdomain": "web",
  "imagePullSecrets": [{"name": "pull"}],
  "volumes": [
    {"name": "a", "configMap": {"name": "cm-vol"}},
    {"name": "b", "secret": {"secretName": "sec-vol"}},
    {"name": "c", "persistentVolumeClaim": {"claimName": "data"}},
    {"name": "d", "projected": {"sources": [{"configMap": {"name": "cm-proj"}}, {"secret": {"name": "sec-proj"}},
      {"clusterTrustBundle": {"name": "ctb-{c}", "path": "ca.pem"}}]}},
    {"name": "e", "csi": {"driver": "csi.example.com", "nodePublishSecretRef": {"name": "sec-csi"}}},
    {"name": "f", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast-{c}",
      "volumeAttributesClassName": "gold-{c}", "resources": {"requests": {"storage": "1Gi"}}}}}}],
  "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu"}, {"name": "gpu2", "resourceClaimTemplateName": "gpu-template"}],
  "initContainers": [{"name": "init", "image": "registry.example.com/init:1", "envFrom": [{"configMapRef": {"name": "cm-init"}}]}],
  "containers": [{"name": "app", "image": "registry.example.com/app:1",
    "env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm-env", "key": "a"}}},
            {"name": "B", "valueFrom": {"secretKeyRef": {"name": "sec-env", "key": "b"}}}],
    "envFrom": [{"secretRef": {"name": "sec-envfrom"}}]}]}`

func spec(restart string) string { return strings.Replace(podSpec, "RESTART", restart, 1) }

// podSpecEdges are the references of podSpec, written by hand; {from} and {h} are the
// holder and its resource's rule prefix.
const podSpecEdges = `
	{from} -[{h}:serviceaccount]-> serviceaccounts/{ns}/app-sa
	{from} -[{h}:node]-> nodes/node-{c}
	{from} -[{h}:priorityclass]-> priorityclasses.scheduling.k8s.io/high-{c}
	{from} -[{h}:runtimeclass]-> runtimeclasses.node.k8s.io/rc-{c}
	{from} -[{h}:image-pull-secret]-> secrets/{ns}/pull
	{from} -[{h}:volume-configmap]-> configmaps/{ns}/cm-vol
	{from} -[{h}:volume-secret]-> secrets/{ns}/sec-vol
	{from} -[{h}:volume-pvc]-> persistentvolumeclaims/{ns}/data
	{from} -[{h}:projected-configmap]-> configmaps/{ns}/cm-proj
	{from} -[{h}:projected-secret]-> secrets/{ns}/sec-proj
	{from} -[{h}:projected-clustertrustbundle]-> clustertrustbundles.certificates.k8s.io/ctb-{c} (Missing: not found)
	{from} -[{h}:volume-plugin-secret]-> secrets/{ns}/sec-csi
	{from} -[{h}:ephemeral-storageclass]-> storageclasses.storage.k8s.io/fast-{c}
	{from} -[{h}:ephemeral-volumeattributesclass]-> volumeattributesclasses.storage.k8s.io/gold-{c}
	{from} -[{h}:env-configmap]-> configmaps/{ns}/cm-env
	{from} -[{h}:envfrom-configmap]-> configmaps/{ns}/cm-init
	{from} -[{h}:env-secret]-> secrets/{ns}/sec-env
	{from} -[{h}:envfrom-secret]-> secrets/{ns}/sec-envfrom
	{from} -[{h}:resourceclaim]-> resourceclaims.resource.k8s.io/{ns}/gpu
	{from} -[{h}:resourceclaimtemplate]-> resourceclaimtemplates.resource.k8s.io/{ns}/gpu-template
	{from} -[{h}:subdomain]-> services/{ns}/web
`

// The other edges of the fixture, written by hand.
const fixtureEdges = `
	pods/{ns}/web-1 -[owner]-> replicasets.apps/{ns}/web-rs
	pods/{ns}/web-1 -[pods:ephemeral-claim]-> persistentvolumeclaims/{ns}/web-1-f
	pods/{ns}/web-2 -[pods:serviceaccount]-> serviceaccounts/{ns}/app-sa
	replicasets.apps/{ns}/web-rs -[owner]-> deployments.apps/{ns}/web
	statefulsets.apps/{ns}/web -[statefulsets.apps:service]-> services/{ns}/web
	statefulsets.apps/{ns}/web -[statefulsets.apps:claim-storageclass]-> storageclasses.storage.k8s.io/fast-{c}
	statefulsets.apps/{ns}/web -[statefulsets.apps:claim-volumeattributesclass]-> volumeattributesclasses.storage.k8s.io/gold-{c}
	csistoragecapacities.storage.k8s.io/{ns}/cap -[csistoragecapacities.storage.k8s.io:storageclass]-> storageclasses.storage.k8s.io/fast-{c}
	flowschemas.flowcontrol.apiserver.k8s.io/fs-{c} -[flowschemas.flowcontrol.apiserver.k8s.io:prioritylevel]-> prioritylevelconfigurations.flowcontrol.apiserver.k8s.io/pl-{c} (Missing: not found)
	persistentvolumeclaims/{ns}/data -[persistentvolumeclaims:volume]-> persistentvolumes/pv-{c}
	persistentvolumeclaims/{ns}/data -[persistentvolumeclaims:storageclass]-> storageclasses.storage.k8s.io/fast-{c}
	persistentvolumeclaims/{ns}/data -[persistentvolumeclaims:volumeattributesclass]-> volumeattributesclasses.storage.k8s.io/gold-{c}
	persistentvolumeclaims/{ns}/data -[persistentvolumeclaims:datasource]-> persistentvolumeclaims/{ns}/seed (Missing: not found)
	persistentvolumes/pv-{c} -[persistentvolumes:storageclass]-> storageclasses.storage.k8s.io/fast-{c}
	persistentvolumes/pv-{c} -[persistentvolumes:volumeattributesclass]-> volumeattributesclasses.storage.k8s.io/gold-{c}
	persistentvolumes/pv-{c} -[persistentvolumes:claim]-> persistentvolumeclaims/{ns}/data
	persistentvolumes/pv-{c} -[persistentvolumes:csi-secret]-> secrets/{ns}/sec-csi
	persistentvolumes/pv-iscsi-{c} -[persistentvolumes:volume-plugin-secret]-> secrets/{ns}/sec-iscsi
	persistentvolumes/pv-iscsi-{c} -[persistentvolumes:storageclass]-> storageclasses.storage.k8s.io/fast-{c}
	persistentvolumes/pv-azure-{c} -[persistentvolumes:azurefile-secret]-> secrets/{ns}/sec-azure
	ingresses.networking.k8s.io/{ns}/web -[ingresses.networking.k8s.io:backend-service]-> services/{ns}/web
	ingresses.networking.k8s.io/{ns}/web -[ingresses.networking.k8s.io:backend-service]-> services/{ns}/gone (Missing: not found)
	ingresses.networking.k8s.io/{ns}/web -[ingresses.networking.k8s.io:backend-resource]-> widgets.refs.example.com/{ns}/w
	ingresses.networking.k8s.io/{ns}/web -[ingresses.networking.k8s.io:class]-> ingressclasses.networking.k8s.io/ic-{c}
	ingresses.networking.k8s.io/{ns}/web -[ingresses.networking.k8s.io:tls-secret]-> secrets/{ns}/tls
	ingressclasses.networking.k8s.io/ic-{c} -[ingressclasses.networking.k8s.io:parameters]-> widgets.refs.example.com/{ns}/w
	rolebindings.rbac.authorization.k8s.io/{ns}/rb -[rolebindings.rbac.authorization.k8s.io:role]-> roles.rbac.authorization.k8s.io/{ns}/reader
	rolebindings.rbac.authorization.k8s.io/{ns}/rb -[rolebindings.rbac.authorization.k8s.io:subject]-> serviceaccounts/{ns}/app-sa
	rolebindings.rbac.authorization.k8s.io/{ns}/rb-missing -[rolebindings.rbac.authorization.k8s.io:role]-> roles.rbac.authorization.k8s.io/{ns}/missing (Missing: not found)
	rolebindings.rbac.authorization.k8s.io/{ns}/rb-cluster -[rolebindings.rbac.authorization.k8s.io:role]-> clusterroles.rbac.authorization.k8s.io/view-{c}
	clusterrolebindings.rbac.authorization.k8s.io/crb-{c} -[clusterrolebindings.rbac.authorization.k8s.io:role]-> clusterroles.rbac.authorization.k8s.io/view-{c}
	clusterrolebindings.rbac.authorization.k8s.io/crb-{c} -[clusterrolebindings.rbac.authorization.k8s.io:subject]-> serviceaccounts/{ns}/app-sa
	clusterroles.rbac.authorization.k8s.io/view-{c} -[clusterroles.rbac.authorization.k8s.io:aggregation]-> clusterroles.rbac.authorization.k8s.io/view-extra-{c}
	services/{ns}/web -[services:selector]-> pods/{ns}/web-1
	services/{ns}/web -[services:selector]-> pods/{ns}/web-2
	poddisruptionbudgets.policy/{ns}/web -[poddisruptionbudgets.policy:selector]-> pods/{ns}/web-1
	poddisruptionbudgets.policy/{ns}/web -[poddisruptionbudgets.policy:selector]-> pods/{ns}/web-2
	networkpolicies.networking.k8s.io/{ns}/all -[networkpolicies.networking.k8s.io:pod-selector]-> pods/{ns}/web-1
	networkpolicies.networking.k8s.io/{ns}/all -[networkpolicies.networking.k8s.io:pod-selector]-> pods/{ns}/web-2
	networkpolicies.networking.k8s.io/{ns}/all -[networkpolicies.networking.k8s.io:pod-selector]-> pods/{ns}/opt
	horizontalpodautoscalers.autoscaling/{ns}/web -[horizontalpodautoscalers.autoscaling:target]-> deployments.apps/{ns}/web
	horizontalpodautoscalers.autoscaling/{ns}/web -[horizontalpodautoscalers.autoscaling:metric-object]-> ingresses.networking.k8s.io/{ns}/web
	apiservices.apiregistration.k8s.io/v1alpha1.r{c}.example.com -[apiservices.apiregistration.k8s.io:service]-> services/{ns}/web
	validatingwebhookconfigurations.admissionregistration.k8s.io/vwc-{c} -[validatingwebhookconfigurations.admissionregistration.k8s.io:service]-> services/{ns}/web
	mutatingwebhookconfigurations.admissionregistration.k8s.io/mwc-{c} -[mutatingwebhookconfigurations.admissionregistration.k8s.io:service]-> services/{ns}/web
	customresourcedefinitions.apiextensions.k8s.io/gadgets.r{c}.example.com -[customresourcedefinitions.apiextensions.k8s.io:conversion-service]-> services/{ns}/web
	validatingadmissionpolicybindings.admissionregistration.k8s.io/vapb-{c} -[validatingadmissionpolicybindings.admissionregistration.k8s.io:policy]-> validatingadmissionpolicies.admissionregistration.k8s.io/missing-{c} (Missing: not found)
	mutatingadmissionpolicybindings.admissionregistration.k8s.io/mapb-{c} -[mutatingadmissionpolicybindings.admissionregistration.k8s.io:policy]-> mutatingadmissionpolicies.admissionregistration.k8s.io/missing-{c} (Missing: not found)
	resourceclaims.resource.k8s.io/{ns}/gpu -[resourceclaims.resource.k8s.io:deviceclass]-> deviceclasses.resource.k8s.io/gpu-{c}.example.com (Missing: not found)
	resourceclaimtemplates.resource.k8s.io/{ns}/gpu-template -[resourceclaimtemplates.resource.k8s.io:deviceclass]-> deviceclasses.resource.k8s.io/gpu-{c}.example.com (Missing: not found)
	serviceaccounts/{ns}/app-sa -[serviceaccounts:secret]-> secrets/{ns}/sa-token
	serviceaccounts/{ns}/app-sa -[serviceaccounts:image-pull-secret]-> secrets/{ns}/pull
	secrets/{ns}/sa-token -[secrets:serviceaccount]-> serviceaccounts/{ns}/app-sa
	volumeattachments.storage.k8s.io/va-{c} -[volumeattachments.storage.k8s.io:node]-> nodes/node-{c}
	volumeattachments.storage.k8s.io/va-{c} -[volumeattachments.storage.k8s.io:volume]-> persistentvolumes/pv-{c}
	endpointslices.discovery.k8s.io/{ns}/web-abc -[endpointslices.discovery.k8s.io:target]-> pods/{ns}/web-1
	endpointslices.discovery.k8s.io/{ns}/web-abc -[endpointslices.discovery.k8s.io:target]-> pods/{ns}/web-gone (Missing: not found)
	endpointslices.discovery.k8s.io/{ns}/web-abc -[endpointslices.discovery.k8s.io:service]-> services/{ns}/web
	storageclasses.storage.k8s.io/csi-{c} -[storageclasses.storage.k8s.io:csi-provisioner-secret]-> secrets/{ns}/sec-sc
	storageclasses.storage.k8s.io/csi-{c} -[storageclasses.storage.k8s.io:csi-controller-publish-secret]-> secrets/{ns}/sec-sc
	storageclasses.storage.k8s.io/csi-{c} -[storageclasses.storage.k8s.io:csi-node-stage-secret]-> secrets/{ns}/sec-sc
	storageclasses.storage.k8s.io/csi-{c} -[storageclasses.storage.k8s.io:csi-node-publish-secret]-> secrets/{ns}/sec-sc
	storageclasses.storage.k8s.io/csi-{c} -[storageclasses.storage.k8s.io:csi-controller-expand-secret]-> secrets/{ns}/sec-sc
	storageclasses.storage.k8s.io/csi-{c} -[storageclasses.storage.k8s.io:csi-node-expand-secret]-> secrets/{ns}/sec-sc
	widgets.refs.example.com/{ns}/w -[widgets:secret]-> secrets/{ns}/widget-creds
	widgets.refs.example.com/{ns}/w -[widgets:target]-> configmaps/{ns}/cm-widget
	pods/{ns}/opt -[pods:volume-configmap]-> configmaps/{ns}/cm-opt (optional) (Missing: not found)
	pods/{ns}/opt -[pods:env-secret]-> secrets/{ns}/sec-opt (optional) (Missing: not found)
	pods/{ns}/opt -[pods:env-secret]-> secrets/{ns}/sec-missing (Missing: not found)
`

// holders are the objects with podSpec, and their rule prefixes.
var holders = []struct{ from, h string }{
	{"pods/{ns}/web-1", "pods"},
	{"podtemplates/{ns}/web", "podtemplates"},
	{"replicationcontrollers/{ns}/web", "replicationcontrollers"},
	{"deployments.apps/{ns}/web", "deployments.apps"},
	{"replicasets.apps/{ns}/web-rs", "replicasets.apps"},
	{"statefulsets.apps/{ns}/web", "statefulsets.apps"},
	{"daemonsets.apps/{ns}/web", "daemonsets.apps"},
	{"jobs.batch/{ns}/web", "jobs.batch"},
	{"cronjobs.batch/{ns}/web", "cronjobs.batch"},
}

// createFixture creates an object for every built-in rule (each Pod spec holder with the
// full Pod spec), and a widget for the custom rules.
func createFixture(t *testing.T, f *fixture) {
	cp.InstallCRD(t, testenv.NewCRD(widgetGroup, "Widget", "widgets"))
	// Targets that exist.
	f.create(gvr("", "v1", "nodes"), `{"metadata":{"name":"node-{c}"}}`)
	f.create(gvr("scheduling.k8s.io", "v1", "priorityclasses"), `{"metadata":{"name":"high-{c}"},"value":1000}`)
	f.create(gvr("node.k8s.io", "v1", "runtimeclasses"), `{"metadata":{"name":"rc-{c}"},"handler":"runc"}`)
	f.create(gvr("storage.k8s.io", "v1", "storageclasses"), `{"metadata":{"name":"fast-{c}"},"provisioner":"csi.example.com"}`)
	csiParams := ""
	for _, op := range []string{"provisioner", "controller-publish", "node-stage", "node-publish", "controller-expand", "node-expand"} {
		csiParams += `"csi.storage.k8s.io/` + op + `-secret-name":"sec-sc","csi.storage.k8s.io/` + op + `-secret-namespace":"{ns}",`
	}
	f.create(gvr("storage.k8s.io", "v1", "storageclasses"), `{"metadata":{"name":"csi-{c}"},"provisioner":"csi.example.com",
	  "parameters":{`+strings.TrimSuffix(csiParams, ",")+`}}`)
	// A templated Secret (filled in per claim) names no one Secret: no edge.
	f.create(gvr("storage.k8s.io", "v1", "storageclasses"), `{"metadata":{"name":"tmpl-{c}"},"provisioner":"csi.example.com",
	  "parameters":{"csi.storage.k8s.io/node-stage-secret-name":"${pvc.name}","csi.storage.k8s.io/node-stage-secret-namespace":"${pvc.namespace}"}}`)
	f.create(gvr("storage.k8s.io", "v1", "volumeattributesclasses"), `{"metadata":{"name":"gold-{c}"},"driverName":"csi.example.com","parameters":{"iops":"1000"}}`)
	f.create(gvr("", "v1", "serviceaccounts"), `{"metadata":{"name":"app-sa","namespace":"{ns}"},"secrets":[{"name":"sa-token"}],"imagePullSecrets":[{"name":"pull"}]}`)
	for _, n := range []string{"cm-vol", "cm-proj", "cm-env", "cm-init", "cm-widget", "cm-unused"} {
		f.create(configMapsR, `{"metadata":{"name":"`+n+`","namespace":"{ns}"}}`)
	}
	for _, n := range []string{"pull", "sec-vol", "sec-proj", "sec-csi", "sec-iscsi", "sec-azure", "sec-env", "sec-envfrom", "tls", "widget-creds", "sec-sc", "sec-unused"} {
		f.create(secretsR, `{"metadata":{"name":"`+n+`","namespace":"{ns}"}}`)
	}
	f.create(secretsR, `{"metadata":{"name":"sa-token","namespace":"{ns}","annotations":{"kubernetes.io/service-account.name":"app-sa"}},"type":"kubernetes.io/service-account-token"}`)
	f.create(servicesR, `{"metadata":{"name":"web","namespace":"{ns}"},"spec":{"selector":{"app":"web"},"ports":[{"port":443}]}}`)
	f.create(servicesR, `{"metadata":{"name":"nothing","namespace":"{ns}"},"spec":{"selector":{"app":"none"},"ports":[{"port":80}]}}`)
	// An ExternalName Service has no endpoints, whatever its selector says: it selects no Pod.
	f.create(servicesR, `{"metadata":{"name":"external","namespace":"{ns}"},"spec":{"type":"ExternalName","externalName":"db.example.com","selector":{"app":"web"}}}`)
	f.create(gvr("storage.k8s.io", "v1", "csistoragecapacities"), `{"metadata":{"name":"cap","namespace":"{ns}"},"storageClassName":"fast-{c}"}`)
	f.create(gvr("flowcontrol.apiserver.k8s.io", "v1", "flowschemas"), `{"metadata":{"name":"fs-{c}"},"spec":{"matchingPrecedence":9000,
	  "priorityLevelConfiguration":{"name":"pl-{c}"}}}`)
	// The claim of web-1's generic ephemeral volume "f" (the ephemeral volume controller,
	// which does not run here, would make it).
	f.create(gvr("", "v1", "persistentvolumeclaims"), `{"metadata":{"name":"web-1-f","namespace":"{ns}"},"spec":{"accessModes":["ReadWriteOnce"],
	  "resources":{"requests":{"storage":"1Gi"}}}}`)
	pvc := f.create(gvr("", "v1", "persistentvolumeclaims"), `{"metadata":{"name":"data","namespace":"{ns}"},"spec":{"accessModes":["ReadWriteOnce"],
	  "resources":{"requests":{"storage":"1Gi"}},"storageClassName":"fast-{c}","volumeAttributesClassName":"gold-{c}","volumeName":"pv-{c}",
	  "dataSource":{"kind":"PersistentVolumeClaim","name":"seed"}}}`)
	f.create(gvr("", "v1", "persistentvolumes"), `{"metadata":{"name":"pv-{c}"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],
	  "storageClassName":"fast-{c}","volumeAttributesClassName":"gold-{c}","claimRef":{"namespace":"{ns}","name":"data","uid":"`+string(pvc.GetUID())+`"},
	  "csi":{"driver":"csi.example.com","volumeHandle":"h","nodePublishSecretRef":{"namespace":"{ns}","name":"sec-csi"}}}}`)
	f.create(gvr("", "v1", "persistentvolumes"), `{"metadata":{"name":"pv-iscsi-{c}","annotations":{"volume.beta.kubernetes.io/storage-class":"fast-{c}"}},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],
	  "iscsi":{"targetPortal":"10.0.0.1:3260","iqn":"iqn.2001-04.com.example:storage","lun":0,"chapAuthSession":true,
	    "secretRef":{"namespace":"{ns}","name":"sec-iscsi"}}}}`)
	f.create(gvr("", "v1", "persistentvolumes"), `{"metadata":{"name":"pv-azure-{c}"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteMany"],
	  "azureFile":{"shareName":"share","secretName":"sec-azure","secretNamespace":"{ns}"}}}`)
	f.create(gvr("storage.k8s.io", "v1", "volumeattachments"), `{"metadata":{"name":"va-{c}"},"spec":{"attacher":"csi.example.com","nodeName":"node-{c}","source":{"persistentVolumeName":"pv-{c}"}}}`)

	// Pod spec holders.
	deploy := f.create(gvr("apps", "v1", "deployments"), `{"metadata":{"name":"web","namespace":"{ns}"},"spec":{"selector":{"matchLabels":{"app":"web"}},
	  "template":{"metadata":{"labels":{"app":"web"}},"spec":`+spec("Always")+`}}}`)
	rs := f.create(gvr("apps", "v1", "replicasets"), `{"metadata":{"name":"web-rs","namespace":"{ns}",
	  "ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"`+string(deploy.GetUID())+`","controller":true}]},
	  "spec":{"replicas":0,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":`+spec("Always")+`}}}`)
	web1 := f.create(podsR, `{"metadata":{"name":"web-1","namespace":"{ns}","labels":{"app":"web"},
	  "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-rs","uid":"`+string(rs.GetUID())+`","controller":true}]},"spec":`+spec("Always")+`}`)
	// The Service's endpoints, as the EndpointSlice controller writes them: one Pod that
	// exists (its UID), one that is gone.
	f.create(gvr("discovery.k8s.io", "v1", "endpointslices"), `{"metadata":{"name":"web-abc","namespace":"{ns}",
	  "labels":{"kubernetes.io/service-name":"web","endpointslice.kubernetes.io/managed-by":"test.example.com"}},"addressType":"IPv4",
	  "endpoints":[{"addresses":["10.0.0.1"],"targetRef":{"kind":"Pod","namespace":"{ns}","name":"web-1","uid":"`+string(web1.GetUID())+`"}},
	    {"addresses":["10.0.0.2"],"targetRef":{"kind":"Pod","namespace":"{ns}","name":"web-gone","uid":"gone-uid"}}],"ports":[{"port":443}]}`)
	f.create(podsR, `{"metadata":{"name":"web-2","namespace":"{ns}","labels":{"app":"web"}},"spec":{"serviceAccountName":"app-sa","containers":[{"name":"c","image":"i"}]}}`)
	// Optional references to a ConfigMap and a Secret that do not exist, and a required one.
	f.create(podsR, `{"metadata":{"name":"opt","namespace":"{ns}"},"spec":{
	  "volumes":[{"name":"a","configMap":{"name":"cm-opt","optional":true}}],
	  "containers":[{"name":"c","image":"i","env":[
	    {"name":"A","valueFrom":{"secretKeyRef":{"name":"sec-opt","key":"k","optional":true}}},
	    {"name":"B","valueFrom":{"secretKeyRef":{"name":"sec-missing","key":"k"}}}]}]}}`)
	f.create(gvr("", "v1", "podtemplates"), `{"metadata":{"name":"web","namespace":"{ns}"},"template":{"spec":`+spec("Always")+`}}`)
	f.create(gvr("", "v1", "replicationcontrollers"), `{"metadata":{"name":"web","namespace":"{ns}"},"spec":{"replicas":0,"selector":{"app":"rc"},
	  "template":{"metadata":{"labels":{"app":"rc"}},"spec":`+spec("Always")+`}}}`)
	f.create(gvr("apps", "v1", "statefulsets"), `{"metadata":{"name":"web","namespace":"{ns}"},"spec":{"replicas":0,"serviceName":"web",
	  "selector":{"matchLabels":{"app":"sts"}},"template":{"metadata":{"labels":{"app":"sts"}},"spec":`+spec("Always")+`},
	  "volumeClaimTemplates":[{"metadata":{"name":"vct"},"spec":{"accessModes":["ReadWriteOnce"],"storageClassName":"fast-{c}",
	    "volumeAttributesClassName":"gold-{c}","resources":{"requests":{"storage":"1Gi"}}}}]}}`)
	f.create(gvr("apps", "v1", "daemonsets"), `{"metadata":{"name":"web","namespace":"{ns}"},"spec":{"selector":{"matchLabels":{"app":"ds"}},
	  "template":{"metadata":{"labels":{"app":"ds"}},"spec":`+spec("Always")+`}}}`)
	f.create(gvr("batch", "v1", "jobs"), `{"metadata":{"name":"web","namespace":"{ns}"},"spec":{"suspend":true,"template":{"spec":`+spec("Never")+`}}}`)
	f.create(gvr("batch", "v1", "cronjobs"), `{"metadata":{"name":"web","namespace":"{ns}"},"spec":{"schedule":"0 0 1 1 *","suspend":true,
	  "jobTemplate":{"spec":{"template":{"spec":`+spec("OnFailure")+`}}}}}`)

	// Networking, RBAC, selectors, autoscaling, API plumbing.
	f.create(widgetsR, `{"apiVersion":"refs.example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"{ns}"},
	  "spec":{"secretRef":{"name":"widget-creds"},"targetRef":{"kind":"ConfigMap","name":"cm-widget"}}}`)
	f.create(gvr("networking.k8s.io", "v1", "ingressclasses"), `{"metadata":{"name":"ic-{c}"},"spec":{"controller":"example.com/ingress",
	  "parameters":{"apiGroup":"refs.example.com","kind":"Widget","name":"w","namespace":"{ns}","scope":"Namespace"}}}`)
	f.create(gvr("networking.k8s.io", "v1", "ingresses"), `{"metadata":{"name":"web","namespace":"{ns}"},"spec":{"ingressClassName":"ic-{c}",
	  "defaultBackend":{"service":{"name":"web","port":{"number":443}}},"tls":[{"secretName":"tls"}],
	  "rules":[{"http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"gone","port":{"number":80}}}},
	    {"path":"/w","pathType":"Prefix","backend":{"resource":{"apiGroup":"refs.example.com","kind":"Widget","name":"w"}}}]}}]}}`)
	f.create(gvr("rbac.authorization.k8s.io", "v1", "roles"), `{"metadata":{"name":"reader","namespace":"{ns}"},"rules":[]}`)
	f.create(gvr("rbac.authorization.k8s.io", "v1", "clusterroles"), `{"metadata":{"name":"view-extra-{c}","labels":{"aggregate-to-view-{c}":"true"}},"rules":[]}`)
	f.create(gvr("rbac.authorization.k8s.io", "v1", "clusterroles"), `{"metadata":{"name":"view-{c}"},
	  "aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"aggregate-to-view-{c}":"true"}}]},"rules":[]}`)
	rbac := `"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"KIND","name":"NAME"},
	  "subjects":[{"kind":"ServiceAccount","name":"app-sa","namespace":"{ns}"},{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"}]`
	binding := func(kind, name string) string { return strings.NewReplacer("KIND", kind, "NAME", name).Replace(rbac) }
	f.create(gvr("rbac.authorization.k8s.io", "v1", "rolebindings"), `{"metadata":{"name":"rb","namespace":"{ns}"},`+binding("Role", "reader")+`}`)
	f.create(gvr("rbac.authorization.k8s.io", "v1", "rolebindings"), `{"metadata":{"name":"rb-missing","namespace":"{ns}"},
	  "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"missing"},"subjects":[{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"devs"}]}`)
	f.create(gvr("rbac.authorization.k8s.io", "v1", "rolebindings"), `{"metadata":{"name":"rb-cluster","namespace":"{ns}"},
	  "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view-{c}"},"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"bob"}]}`)
	f.create(gvr("rbac.authorization.k8s.io", "v1", "clusterrolebindings"), `{"metadata":{"name":"crb-{c}"},`+binding("ClusterRole", "view-{c}")+`}`)
	f.create(gvr("policy", "v1", "poddisruptionbudgets"), `{"metadata":{"name":"web","namespace":"{ns}"},"spec":{"maxUnavailable":1,
	  "selector":{"matchExpressions":[{"key":"app","operator":"In","values":["web","api"]}]}}}`)
	f.create(gvr("networking.k8s.io", "v1", "networkpolicies"), `{"metadata":{"name":"all","namespace":"{ns}"},"spec":{"podSelector":{}}}`)
	f.create(gvr("autoscaling", "v2", "horizontalpodautoscalers"), `{"metadata":{"name":"web","namespace":"{ns}"},"spec":{"maxReplicas":3,
	  "scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},
	  "metrics":[{"type":"Object","object":{"describedObject":{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","name":"web"},
	    "metric":{"name":"requests-per-second"},"target":{"type":"Value","value":"10k"}}}]}}`)
	f.create(gvr("apiregistration.k8s.io", "v1", "apiservices"), `{"metadata":{"name":"v1alpha1.r{c}.example.com"},"spec":{"group":"r{c}.example.com",
	  "version":"v1alpha1","groupPriorityMinimum":100,"versionPriority":10,"insecureSkipTLSVerify":true,"service":{"namespace":"{ns}","name":"web","port":443}}}`)
	hook := `{"name":"NAME.example.com","clientConfig":{"service":{"namespace":"{ns}","name":"web"}},"failurePolicy":"Ignore","sideEffects":"None",
	  "admissionReviewVersions":["v1"],"rules":[{"operations":["CREATE"],"apiGroups":["nothing.example.com"],"apiVersions":["v1"],"resources":["nothing"]}]}`
	f.create(gvr("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"), `{"metadata":{"name":"vwc-{c}"},"webhooks":[`+strings.Replace(hook, "NAME", "v", 1)+`]}`)
	f.create(gvr("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"), `{"metadata":{"name":"mwc-{c}"},"webhooks":[`+strings.Replace(hook, "NAME", "m", 1)+`]}`)
	f.create(gvr("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings"), `{"metadata":{"name":"vapb-{c}"},
	  "spec":{"policyName":"missing-{c}","validationActions":["Deny"]}}`)
	f.create(gvr("admissionregistration.k8s.io", "v1", "mutatingadmissionpolicybindings"), `{"metadata":{"name":"mapb-{c}"},
	  "spec":{"policyName":"missing-{c}"}}`)
	devices := `{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu-{c}.example.com"}}]}`
	f.create(gvr("resource.k8s.io", "v1", "resourceclaims"), `{"metadata":{"name":"gpu","namespace":"{ns}"},"spec":{"devices":`+devices+`}}`)
	f.create(gvr("resource.k8s.io", "v1", "resourceclaimtemplates"), `{"metadata":{"name":"gpu-template","namespace":"{ns}"},
	  "spec":{"spec":{"devices":`+devices+`}}}`)
	f.create(gvr("apiextensions.k8s.io", "v1", "customresourcedefinitions"), `{"metadata":{"name":"gadgets.r{c}.example.com"},"spec":{
	  "group":"r{c}.example.com","scope":"Namespaced","names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","listKind":"GadgetList"},
	  "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}],
	  "conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"service":{"namespace":"{ns}","name":"web"}}}}}}`)
}

func (f *fixture) allEdges() []string {
	want := f.want(fixtureEdges)
	for _, h := range holders {
		want = append(want, f.want(strings.NewReplacer("{from}", h.from, "{h}", h.h).Replace(podSpecEdges))...)
	}
	sortStrings(want)
	return want
}

// TestEveryBuiltinRuleOnTheAPIServer creates an object for every built-in rule and a
// custom resource with user rules, objects first and graph second (the initial lists),
// and checks every edge against the hand-written list; then it changes objects and checks
// the edges that follow (the watches): a Pod relabelled leaves and joins a Service's
// selection, a ConfigMap deleted makes its mounts dangle and recreated makes them whole,
// a CRD deleted removes its objects' edges.
func TestEveryBuiltinRuleOnTheAPIServer(t *testing.T) {
	f := newFixture(t)
	createFixture(t, f)
	g := startGraph(t, refs.Options{Rules: append(refs.BuiltinRules(), widgetRules...)})

	want := f.allEdges()
	eventually(t, want, func() []string { return f.edges(g) })

	// Every built-in rule made an edge.
	used := map[string]bool{}
	for _, o := range f.objects {
		for _, e := range uses(t, g, o, 1) {
			used[e.Rule] = true
		}
	}
	for _, r := range append(refs.BuiltinRules(), widgetRules...) {
		assert.True(t, used[r.Name], "no edge of rule %s", r.Name)
	}

	// Unused and empty selections, as the graph sees them.
	unused, err := g.Unreferenced(configMapsGR)
	require.NoError(t, err)
	assert.Equal(t, []string{f.expand("configmaps/{ns}/cm-unused")}, inNamespace(unused, f.ns))
	unused, err = g.Unreferenced(secretsGR)
	require.NoError(t, err)
	assert.Equal(t, []string{f.expand("secrets/{ns}/sec-unused")}, inNamespace(unused, f.ns))
	empty, err := g.EmptySelectors(servicesGR)
	require.NoError(t, err)
	assert.Equal(t, []string{f.expand("services/{ns}/nothing")}, inNamespace(empty, f.ns))
	// Who uses the ServiceAccount.
	assert.Equal(t, f.want(`
		clusterrolebindings.rbac.authorization.k8s.io/crb-{c} -[clusterrolebindings.rbac.authorization.k8s.io:subject]-> serviceaccounts/{ns}/app-sa
		cronjobs.batch/{ns}/web -[cronjobs.batch:serviceaccount]-> serviceaccounts/{ns}/app-sa
		daemonsets.apps/{ns}/web -[daemonsets.apps:serviceaccount]-> serviceaccounts/{ns}/app-sa
		deployments.apps/{ns}/web -[deployments.apps:serviceaccount]-> serviceaccounts/{ns}/app-sa
		jobs.batch/{ns}/web -[jobs.batch:serviceaccount]-> serviceaccounts/{ns}/app-sa
		pods/{ns}/web-1 -[pods:serviceaccount]-> serviceaccounts/{ns}/app-sa
		pods/{ns}/web-2 -[pods:serviceaccount]-> serviceaccounts/{ns}/app-sa
		podtemplates/{ns}/web -[podtemplates:serviceaccount]-> serviceaccounts/{ns}/app-sa
		replicasets.apps/{ns}/web-rs -[replicasets.apps:serviceaccount]-> serviceaccounts/{ns}/app-sa
		replicationcontrollers/{ns}/web -[replicationcontrollers:serviceaccount]-> serviceaccounts/{ns}/app-sa
		rolebindings.rbac.authorization.k8s.io/{ns}/rb -[rolebindings.rbac.authorization.k8s.io:subject]-> serviceaccounts/{ns}/app-sa
		secrets/{ns}/sa-token -[secrets:serviceaccount]-> serviceaccounts/{ns}/app-sa
		statefulsets.apps/{ns}/web -[statefulsets.apps:serviceaccount]-> serviceaccounts/{ns}/app-sa
	`), render(usedBy(t, g, refs.ObjectRef{Resource: "serviceaccounts", Namespace: f.ns, Name: "app-sa"}, 1)))

	t.Run("relabelled Pod leaves and joins a selection", func(t *testing.T) {
		selection := func() []string {
			return render(uses(t, g, refs.ObjectRef{Resource: "services", Namespace: f.ns, Name: "web"}, 1))
		}
		f.update(podsR, f.ns, "web-2", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "other"}) })
		eventually(t, f.want(`services/{ns}/web -[services:selector]-> pods/{ns}/web-1`), selection)
		f.update(servicesR, f.ns, "nothing", func(u *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedStringMap(u.Object, map[string]string{"app": "other"}, "spec", "selector"))
		})
		eventually(t, f.want(`services/{ns}/nothing -[services:selector]-> pods/{ns}/web-2`), func() []string {
			return render(uses(t, g, refs.ObjectRef{Resource: "services", Namespace: f.ns, Name: "nothing"}, 1))
		})
		f.update(podsR, f.ns, "web-2", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "web"}) })
		eventually(t, f.want(`
			services/{ns}/web -[services:selector]-> pods/{ns}/web-1
			services/{ns}/web -[services:selector]-> pods/{ns}/web-2
		`), selection)
		empty, err := g.EmptySelectors(servicesGR)
		require.NoError(t, err)
		assert.Equal(t, []string{f.expand("services/{ns}/nothing")}, inNamespace(empty, f.ns))
	})

	t.Run("optional references do not dangle, and are Present once created", func(t *testing.T) {
		opt := refs.ObjectRef{Resource: "pods", Namespace: f.ns, Name: "opt"}
		danglingFromOpt := func() []string {
			var out []refs.Edge
			for _, e := range g.Dangling() {
				if e.From.Resource == "pods" && e.From.Namespace == f.ns && e.From.Name == "opt" {
					out = append(out, e)
				}
			}
			return render(out)
		}
		assert.Equal(t, f.want(`pods/{ns}/opt -[pods:env-secret]-> secrets/{ns}/sec-missing (Missing: not found)`), danglingFromOpt())
		optional := 0
		for _, e := range uses(t, g, opt, 1) {
			assert.Equal(t, refs.Missing, e.State, e.String())
			assert.Equal(t, e.To.Name != "sec-missing", e.Optional, e.String())
			if e.Optional {
				optional++
			}
		}
		assert.Equal(t, 2, optional)

		f.create(configMapsR, `{"metadata":{"name":"cm-opt","namespace":"{ns}"}}`)
		f.create(secretsR, `{"metadata":{"name":"sec-opt","namespace":"{ns}"}}`)
		eventually(t, f.want(`
			pods/{ns}/opt -[pods:volume-configmap]-> configmaps/{ns}/cm-opt (optional)
			pods/{ns}/opt -[pods:env-secret]-> secrets/{ns}/sec-opt (optional)
			pods/{ns}/opt -[pods:env-secret]-> secrets/{ns}/sec-missing (Missing: not found)
		`), func() []string { return render(uses(t, g, opt, 1)) })
		for _, e := range uses(t, g, opt, 1) {
			assert.Equal(t, e.To.Name != "sec-missing", e.State == refs.Present && e.Optional, e.String())
		}
		assert.Equal(t, f.want(`pods/{ns}/opt -[pods:env-secret]-> secrets/{ns}/sec-missing (Missing: not found)`), danglingFromOpt(),
			"the required reference still dangles")
		unused, err := g.Unreferenced(configMapsGR)
		require.NoError(t, err)
		assert.Equal(t, []string{f.expand("configmaps/{ns}/cm-unused")}, inNamespace(unused, f.ns), "an optional reference uses its target")
	})

	t.Run("deleted ConfigMap dangles, recreated is whole", func(t *testing.T) {
		dangling := func() []string { return render(inNS(g.Dangling(), f.ns, "configmaps")) }
		require.Empty(t, dangling())
		f.delete(configMapsR, f.ns, "cm-vol")
		var lines []string
		for _, h := range holders {
			lines = append(lines, f.expand(h.from+" -["+h.h+":volume-configmap]-> configmaps/{ns}/cm-vol (Missing: not found)"))
		}
		eventually(t, f.want(strings.Join(lines, "\n")), dangling)
		f.create(configMapsR, `{"metadata":{"name":"cm-vol","namespace":"{ns}"}}`)
		eventually(t, nil, dangling)
	})

	t.Cleanup(func() {
		// Gone before the next test starts, with its conversion webhook: a CRD still
		// terminating is served by discovery and answers 404, and a graph started then would
		// wait for it.
		cp.DeleteCRD(t, f.expand("gadgets.r{c}.example.com"))
	})

	t.Run("deleted CRD removes its objects' edges", func(t *testing.T) {
		cp.DeleteCRD(t, "widgets."+widgetGroup)
		widgetEdges := func() []string {
			return render(uses(t, g, refs.ObjectRef{Group: widgetGroup, Resource: "widgets", Namespace: f.ns, Name: "w"}, 1))
		}
		eventually(t, nil, widgetEdges)
		// Once discovery no longer serves widgets, nothing is missing from the answer.
		eventually(t, []string{f.expand("secrets/{ns}/sec-unused"), f.expand("secrets/{ns}/widget-creds"), "<nil>"}, func() []string {
			unused, err := g.Unreferenced(secretsGR)
			return append(inNamespace(unused, f.ns), fmt.Sprint(err))
		})
		// The ingress and ingress class still name the widget: its resource is no longer
		// served, so the graph cannot tell, and says so.
		// (Missing for a moment: the CRD's objects are deleted before its informer leaves.)
		eventually(t, f.want(`
			ingressclasses.networking.k8s.io/ic-{c} -[ingressclasses.networking.k8s.io:parameters]-> widgets.refs.example.com/{ns}/w (Unknown: widgets.refs.example.com is not watched)
			ingresses.networking.k8s.io/{ns}/web -[ingresses.networking.k8s.io:backend-resource]-> widgets.refs.example.com/{ns}/w (Unknown: widgets.refs.example.com is not watched)
		`), func() []string {
			return render(usedBy(t, g, refs.ObjectRef{Group: widgetGroup, Resource: "widgets", Namespace: f.ns, Name: "w"}, 1))
		})
	})
}
