package refs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A PersistentVolume's in-tree volume sources name their Secrets with a namespace
// (SecretReference, or secretName and secretNamespace for Azure File), as CSI ones do; one
// that names no namespace leaves it to the Pod that mounts the volume, which the graph
// cannot tell: no edge.
func TestPersistentVolumePluginSecrets(t *testing.T) {
	tg := newTestGraph(t, nil)
	for name, src := range map[string]string{
		"ceph":      `"cephfs":{"monitors":["m"],"secretRef":{"name":"s-ceph","namespace":"storage"}}`,
		"cinder":    `"cinder":{"volumeID":"v","secretRef":{"name":"s-cinder","namespace":"storage"}}`,
		"flex":      `"flexVolume":{"driver":"d","secretRef":{"name":"s-flex","namespace":"storage"}}`,
		"iscsi":     `"iscsi":{"targetPortal":"p","iqn":"q","lun":0,"secretRef":{"name":"s-iscsi","namespace":"storage"}}`,
		"rbd":       `"rbd":{"monitors":["m"],"image":"i","secretRef":{"name":"s-rbd","namespace":"storage"}}`,
		"scaleio":   `"scaleIO":{"gateway":"g","system":"s","secretRef":{"name":"s-scaleio","namespace":"storage"}}`,
		"storageos": `"storageos":{"volumeName":"v","secretRef":{"kind":"Secret","name":"s-storageos","namespace":"storage"}}`,
		"azure":     `"azureFile":{"shareName":"x","secretName":"s-azure","secretNamespace":"storage"}`,
		"no-ns":     `"rbd":{"monitors":["m"],"image":"i","secretRef":{"name":"s-pod-ns"}}`,
		"azure-pod": `"azureFile":{"shareName":"x","secretName":"s-pod-ns"}`,
	} {
		tg.put(pvs, `{"metadata":{"name":"pv-`+name+`"},"spec":{`+src+`}}`)
	}
	assert.Equal(t, lines(`
		persistentvolumes/pv-azure -[persistentvolumes:azurefile-secret]-> secrets/storage/s-azure (Missing: not found)
		persistentvolumes/pv-ceph -[persistentvolumes:volume-plugin-secret]-> secrets/storage/s-ceph (Missing: not found)
		persistentvolumes/pv-cinder -[persistentvolumes:volume-plugin-secret]-> secrets/storage/s-cinder (Missing: not found)
		persistentvolumes/pv-flex -[persistentvolumes:volume-plugin-secret]-> secrets/storage/s-flex (Missing: not found)
		persistentvolumes/pv-iscsi -[persistentvolumes:volume-plugin-secret]-> secrets/storage/s-iscsi (Missing: not found)
		persistentvolumes/pv-rbd -[persistentvolumes:volume-plugin-secret]-> secrets/storage/s-rbd (Missing: not found)
		persistentvolumes/pv-scaleio -[persistentvolumes:volume-plugin-secret]-> secrets/storage/s-scaleio (Missing: not found)
		persistentvolumes/pv-storageos -[persistentvolumes:volume-plugin-secret]-> secrets/storage/s-storageos (Missing: not found)
	`), strs(tg.Dangling()))
	tg.put(secrets, `{"metadata":{"name":"s-rbd","namespace":"storage"}}`)
	unused, err := tg.Unreferenced(secrets)
	require.NoError(t, err)
	assert.Empty(t, unused, "the PV uses its Secret")
}

// A generic ephemeral volume's claim template names a StorageClass, as a StatefulSet's claim
// templates do: the PVC the Pod's volume makes is of that class.
func TestEphemeralVolumeStorageClass(t *testing.T) {
	tg := newTestGraph(t, nil)
	spec := `{"volumes":[{"name":"scratch","ephemeral":{"volumeClaimTemplate":{"spec":{"storageClassName":"fast","accessModes":["ReadWriteOnce"]}}}},
	  {"name":"default-class","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOnce"]}}}}],"containers":[{"name":"c"}]}`
	tg.put(pods, `{"metadata":{"name":"p","namespace":"ns"},"spec":`+spec+`}`)
	tg.upsert(tg.g.rulesOf(gr("apps", "deployments")), newRawObject([]byte(`{"metadata":{"name":"d","namespace":"ns"},"spec":{"template":{"spec":`+spec+`}}}`)))
	assert.Equal(t, lines(`
		deployments.apps/ns/d -[deployments.apps:ephemeral-storageclass]-> storageclasses.storage.k8s.io/fast (Missing: not found)
		pods/ns/p -[pods:ephemeral-storageclass]-> storageclasses.storage.k8s.io/fast (Missing: not found)
	`), strs(tg.Referrers(oref(storageClasses, "", "fast"), 1)))
}

// PersistentVolumeClaims and PersistentVolumes name their VolumeAttributesClass (a
// cluster-scoped class of storage.k8s.io, as StorageClasses are).
func TestVolumeAttributesClasses(t *testing.T) {
	tg := newTestGraph(t, nil)
	vacs := gr("storage.k8s.io", "volumeattributesclasses")
	tg.g.learn(vacs, "VolumeAttributesClass", false)
	tg.put(pvcs, `{"metadata":{"name":"data","namespace":"ns"},"spec":{"volumeAttributesClassName":"gold"}}`)
	tg.put(pvs, `{"metadata":{"name":"pv"},"spec":{"volumeAttributesClassName":"gold"}}`)
	assert.Equal(t, lines(`
		persistentvolumeclaims/ns/data -[persistentvolumeclaims:volumeattributesclass]-> volumeattributesclasses.storage.k8s.io/gold (Missing: not found)
		persistentvolumes/pv -[persistentvolumes:volumeattributesclass]-> volumeattributesclasses.storage.k8s.io/gold (Missing: not found)
	`), strs(tg.Dangling()))
}

// The beta annotation volume.beta.kubernetes.io/storage-class still names a claim's or a
// volume's StorageClass (Kubernetes reads it before spec.storageClassName).
func TestStorageClassBetaAnnotation(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.put(pvcs, `{"metadata":{"name":"old","namespace":"ns","annotations":{"volume.beta.kubernetes.io/storage-class":"slow"}},"spec":{}}`)
	tg.put(pvcs, `{"metadata":{"name":"both","namespace":"ns","annotations":{"volume.beta.kubernetes.io/storage-class":"fast"}},"spec":{"storageClassName":"fast"}}`)
	tg.put(pvcs, `{"metadata":{"name":"none","namespace":"ns","annotations":{"volume.beta.kubernetes.io/storage-class":""}},"spec":{"storageClassName":""}}`)
	tg.put(pvs, `{"metadata":{"name":"pv","annotations":{"volume.beta.kubernetes.io/storage-class":"slow"}},"spec":{}}`)
	// Claim templates hold the annotation as claims do (the claims made from them copy it).
	template := `{"metadata":{"name":"data","annotations":{"volume.beta.kubernetes.io/storage-class":"tmpl"}},"spec":{"accessModes":["ReadWriteOnce"]}}`
	tg.put(gr("apps", "statefulsets"), `{"metadata":{"name":"db","namespace":"ns"},"spec":{"volumeClaimTemplates":[`+template+`]}}`)
	tg.put(pods, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"volumes":[{"name":"v","ephemeral":{"volumeClaimTemplate":`+template+`}}]}}`)
	tg.put(gr("batch", "cronjobs"), `{"metadata":{"name":"cj","namespace":"ns"},"spec":{"jobTemplate":{"spec":{"template":{"spec":
	  {"volumes":[{"name":"v","ephemeral":{"volumeClaimTemplate":`+template+`}}]}}}}}}`)
	assert.Equal(t, lines(`
		cronjobs.batch/ns/cj -[cronjobs.batch:ephemeral-storageclass]-> storageclasses.storage.k8s.io/tmpl (Missing: not found)
		persistentvolumeclaims/ns/both -[persistentvolumeclaims:storageclass]-> storageclasses.storage.k8s.io/fast (Missing: not found)
		persistentvolumeclaims/ns/old -[persistentvolumeclaims:storageclass]-> storageclasses.storage.k8s.io/slow (Missing: not found)
		persistentvolumes/pv -[persistentvolumes:storageclass]-> storageclasses.storage.k8s.io/slow (Missing: not found)
		pods/ns/p -[pods:ephemeral-claim]-> persistentvolumeclaims/ns/p-v (Missing: not found)
		pods/ns/p -[pods:ephemeral-storageclass]-> storageclasses.storage.k8s.io/tmpl (Missing: not found)
		statefulsets.apps/ns/db -[statefulsets.apps:claim-storageclass]-> storageclasses.storage.k8s.io/tmpl (Missing: not found)
	`), strs(tg.Dangling()))
}

// A projected ClusterTrustBundle source names a cluster-scoped bundle (optional ones do not
// dangle); a ResourceClaim and a ResourceClaimTemplate name the DeviceClasses of their
// requests; a MutatingAdmissionPolicyBinding its policy.
func TestNewerAPIReferences(t *testing.T) {
	tg := newTestGraph(t, nil)
	ctbs := gr("certificates.k8s.io", "clustertrustbundles")
	deviceClasses := gr("resource.k8s.io", "deviceclasses")
	tg.g.learn(ctbs, "ClusterTrustBundle", false)
	tg.g.learn(deviceClasses, "DeviceClass", false)
	tg.g.learn(resourceClaims, "ResourceClaim", true)
	tg.g.learn(resourceClaimTemplates, "ResourceClaimTemplate", true)
	tg.g.learn(gr("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"), "MutatingAdmissionPolicyBinding", false)
	tg.g.learn(gr("admissionregistration.k8s.io", "mutatingadmissionpolicies"), "MutatingAdmissionPolicy", false)
	tg.put(pods, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"volumes":[{"name":"v","projected":{"sources":[
	  {"clusterTrustBundle":{"name":"ca","path":"ca.pem"}},{"clusterTrustBundle":{"name":"extra","path":"x.pem","optional":true}},
	  {"clusterTrustBundle":{"signerName":"example.com/signer","labelSelector":{},"path":"s.pem"}}]}}]}}`)
	devices := `{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}},
	  {"name":"any","firstAvailable":[{"name":"big","deviceClassName":"big.example.com"},{"name":"small","deviceClassName":"small.example.com"}]}]}`
	tg.put(resourceClaims, `{"metadata":{"name":"c","namespace":"ns"},"spec":{"devices":`+devices+`}}`)
	tg.put(resourceClaimTemplates, `{"metadata":{"name":"t","namespace":"ns"},"spec":{"spec":{"devices":`+devices+`}}}`)
	tg.put(gr("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"), `{"metadata":{"name":"b"},"spec":{"policyName":"add-labels"}}`)
	assert.Equal(t, lines(`
		pods/ns/p -[pods:projected-clustertrustbundle]-> clustertrustbundles.certificates.k8s.io/ca (Missing: not found)
		resourceclaims.resource.k8s.io/ns/c -[resourceclaims.resource.k8s.io:deviceclass]-> deviceclasses.resource.k8s.io/big.example.com (Missing: not found)
		resourceclaims.resource.k8s.io/ns/c -[resourceclaims.resource.k8s.io:deviceclass]-> deviceclasses.resource.k8s.io/gpu.example.com (Missing: not found)
		resourceclaims.resource.k8s.io/ns/c -[resourceclaims.resource.k8s.io:deviceclass]-> deviceclasses.resource.k8s.io/small.example.com (Missing: not found)
		resourceclaimtemplates.resource.k8s.io/ns/t -[resourceclaimtemplates.resource.k8s.io:deviceclass]-> deviceclasses.resource.k8s.io/big.example.com (Missing: not found)
		resourceclaimtemplates.resource.k8s.io/ns/t -[resourceclaimtemplates.resource.k8s.io:deviceclass]-> deviceclasses.resource.k8s.io/gpu.example.com (Missing: not found)
		resourceclaimtemplates.resource.k8s.io/ns/t -[resourceclaimtemplates.resource.k8s.io:deviceclass]-> deviceclasses.resource.k8s.io/small.example.com (Missing: not found)
		mutatingadmissionpolicybindings.admissionregistration.k8s.io/b -[mutatingadmissionpolicybindings.admissionregistration.k8s.io:policy]-> mutatingadmissionpolicies.admissionregistration.k8s.io/add-labels (Missing: not found)
	`), strs(tg.Dangling()))
	assert.Contains(t, strs(tg.References(oref(pods, "ns", "p"), 1)),
		"pods/ns/p -[pods:projected-clustertrustbundle]-> clustertrustbundles.certificates.k8s.io/extra (optional) (Missing: not found)")
}

// A Pod uses the ResourceClaims made for it from its claim templates: its status names them
// ("<pod>-<claim>-<random>", in no spec field), so that they are not unreferenced while it
// runs. A template names none.
func TestPodUsesTheResourceClaimsMadeForIt(t *testing.T) {
	tg := newTestGraph(t, nil)
	tg.g.learn(resourceClaims, "ResourceClaim", true)
	tg.g.learn(resourceClaimTemplates, "ResourceClaimTemplate", true)
	tg.put(resourceClaimTemplates, `{"metadata":{"name":"gpu-template","namespace":"ns"},"spec":{"spec":{}}}`)
	tg.put(resourceClaims, `{"metadata":{"name":"shared","namespace":"ns"},"spec":{}}`)
	tg.put(resourceClaims, `{"metadata":{"name":"p-gpu-x7k2q","namespace":"ns","ownerReferences":[
	  {"apiVersion":"v1","kind":"Pod","name":"p","uid":"u1","controller":true}]},"spec":{}}`)
	tg.put(resourceClaims, `{"metadata":{"name":"unused","namespace":"ns"},"spec":{}}`)
	tg.put(pods, `{"metadata":{"name":"p","namespace":"ns","uid":"u1"},"spec":{"resourceClaims":[
	  {"name":"gpu","resourceClaimTemplateName":"gpu-template"},{"name":"shared","resourceClaimName":"shared"}]},
	  "status":{"resourceClaimStatuses":[{"name":"gpu","resourceClaimName":"p-gpu-x7k2q"}]}}`)
	assert.Equal(t, lines(`
		pods/ns/p -[pods:resourceclaim]-> resourceclaims.resource.k8s.io/ns/p-gpu-x7k2q
		pods/ns/p -[pods:resourceclaim]-> resourceclaims.resource.k8s.io/ns/shared
		pods/ns/p -[pods:resourceclaimtemplate]-> resourceclaimtemplates.resource.k8s.io/ns/gpu-template
	`), strs(tg.References(oref(pods, "ns", "p"), 1)))
	unused, err := tg.Unreferenced(resourceClaims)
	require.NoError(t, err)
	assert.Equal(t, []string{"resourceclaims.resource.k8s.io/ns/unused"}, refStrs(unused))
	for _, r := range BuiltinRules() {
		if r.Name == "deployments.apps:resourceclaim" {
			assert.NotContains(t, r.Path, "status")
		}
	}
}

// A Pod uses the claim Kubernetes makes for each of its generic ephemeral volumes, named
// <pod>-<volume>, which no field of the Pod holds: the rule names it after the Pod, decoded
// or as raw bytes; other volumes, and a workload's template (whose Pods have the claims),
// name no such claim.
func TestPodUsesItsEphemeralVolumesClaims(t *testing.T) {
	tg := newTestGraph(t, nil)
	spec := `{"volumes":[{"name":"scratch","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOnce"]}}}},
	  {"name":"tmp","emptyDir":{}},{"name":"data","persistentVolumeClaim":{"claimName":"data"}}],"containers":[{"name":"c"}]}`
	tg.put(pods, `{"metadata":{"name":"p","namespace":"ns"},"spec":`+spec+`}`)
	tg.upsert(tg.g.rulesOf(pods), newRawObject([]byte(`{"metadata":{"name":"q","namespace":"ns"},"spec":`+spec+`}`)))
	tg.upsert(tg.g.rulesOf(gr("apps", "deployments")), newRawObject([]byte(`{"metadata":{"name":"d","namespace":"ns"},"spec":{"template":{"spec":`+spec+`}}}`)))
	for _, name := range []string{"p-scratch", "q-scratch", "p-tmp", "d-scratch", "data", "scratch"} {
		tg.put(pvcs, `{"metadata":{"name":"`+name+`","namespace":"ns"}}`)
	}
	unused, err := tg.Unreferenced(pvcs)
	require.NoError(t, err)
	assert.Equal(t, []string{"persistentvolumeclaims/ns/d-scratch", "persistentvolumeclaims/ns/p-tmp", "persistentvolumeclaims/ns/scratch"}, refStrs(unused))
	assert.Equal(t, lines(`
		pods/ns/p -[pods:ephemeral-claim]-> persistentvolumeclaims/ns/p-scratch
	`), strs(tg.Referrers(oref(pvcs, "ns", "p-scratch"), 1)))
	// Before the claim exists, the Pod waits for it: a missing target.
	tg.put(pods, `{"metadata":{"name":"r","namespace":"ns"},"spec":`+spec+`}`)
	assert.Contains(t, strs(tg.Dangling()), "pods/ns/r -[pods:ephemeral-claim]-> persistentvolumeclaims/ns/r-scratch (Missing: not found)")
}
