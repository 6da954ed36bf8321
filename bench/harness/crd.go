package harness

import (
	"fmt"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The custom resource the harness seeds next to the pods: an operator-managed database.
const (
	crdGroup         = "bench.kindex.io"
	crdKind          = "Database"
	crdPlural        = "databases"
	crManager        = "kubectl-client-side-apply"
	crStatusManager  = "database-operator"
	databaseInstance = 3
)

// Resources the harness measures.
var (
	PodsGVR      = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	DatabasesGVR = schema.GroupVersionResource{Group: crdGroup, Version: "v1", Resource: crdPlural}
)

// newCRD returns the Database CRD: typed top-level fields, free-form spec and status (as
// many operators ship them), a status subresource, printer columns and a short name.
func newCRD() *apiextv1.CustomResourceDefinition {
	preserve := true
	free := apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: crdPlural + "." + crdGroup},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: crdGroup,
			Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{
				Plural: crdPlural, Singular: "database", Kind: crdKind, ListKind: crdKind + "List",
				ShortNames: []string{"db"}, Categories: []string{"all", "bench"},
			},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextv1.CustomResourceColumnDefinition{
					{Name: "Engine", Type: "string", JSONPath: ".spec.engine"},
					{Name: "Version", Type: "string", JSONPath: ".spec.version"},
					{Name: "Phase", Type: "string", JSONPath: ".status.phase"},
					{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
				},
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextv1.JSONSchemaProps{
						"apiVersion": {Type: "string"},
						"kind":       {Type: "string"},
						"metadata":   {Type: "object"},
						"spec":       free,
						"status":     free,
					},
				}},
			}},
		},
	}
}

// newDatabase returns the i-th seeded Database without status.
func newDatabase(namespace string, i int) *unstructured.Unstructured {
	a := i % len(apps)
	app, team := apps[a], teams[a%len(teams)]
	name := DatabaseName(i)
	users := []any{}
	for k, role := range []string{"owner", "app", "readonly"} {
		users = append(users, map[string]any{
			"name":              fmt.Sprintf("%s_%s", app, role),
			"roles":             []any{role, "login"},
			"connectionLimit":   int64(50 * (k + 1)),
			"passwordSecretRef": map[string]any{"name": name + "-" + role, "key": "password"},
		})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": crdGroup + "/v1",
		"kind":       crdKind,
		"metadata": map[string]any{
			"name":      name,
			"namespace": namespace,
			"labels": map[string]any{
				"app.kubernetes.io/name":      app,
				"app.kubernetes.io/component": "database",
				"app.kubernetes.io/part-of":   "shop",
				"team.example.com/owner":      team,
				"bench.kindex.io/tier":        []string{"gold", "silver", "bronze"}[i%3],
			},
			"annotations": map[string]any{
				"bench.kindex.io/backup-bucket": "s3://backups-eu-west-1/" + app,
				"kubectl.kubernetes.io/last-applied-configuration": fmt.Sprintf(
					`{"apiVersion":"%s/v1","kind":"%s","metadata":{"name":"%s","namespace":"%s"},"spec":{"engine":"postgres","version":"16.4"}}`,
					crdGroup, crdKind, name, namespace),
			},
		},
		"spec": map[string]any{
			"engine":        "postgres",
			"version":       "16.4",
			"instances":     int64(databaseInstance),
			"instanceClass": "db.r6g.large",
			"storage": map[string]any{
				"size": fmt.Sprintf("%dGi", 50*(1+i%8)), "storageClassName": "fast-ssd",
				"autoscaling": map[string]any{"enabled": true, "maxSize": "1Ti", "thresholdPercent": int64(80)},
			},
			"backup": map[string]any{
				"enabled": true, "schedule": fmt.Sprintf("%d 3 * * *", i%60), "retentionDays": int64(14),
				"destination": "s3://backups-eu-west-1/" + app + "/" + name,
			},
			"users":     users,
			"databases": []any{map[string]any{"name": app, "owner": app + "_owner", "extensions": []any{"pg_stat_statements", "pgcrypto"}}},
			"parameters": map[string]any{
				"max_connections": "500", "shared_buffers": "4GB", "work_mem": "16MB",
				"maintenance_work_mem": "512MB", "effective_cache_size": "12GB", "log_min_duration_statement": "250ms",
			},
			"monitoring": map[string]any{"enabled": true, "podMonitorLabels": map[string]any{"release": "kube-prometheus-stack"}},
			"resources": map[string]any{
				"requests": map[string]any{"cpu": "2", "memory": "8Gi"},
				"limits":   map[string]any{"cpu": "4", "memory": "16Gi"},
			},
			"maintenanceWindow": map[string]any{"day": "Sunday", "startTime": "02:00", "duration": "2h"},
		},
	}}
}

// newDatabaseStatus returns the status the operator writes for the i-th Database.
func newDatabaseStatus(i int) map[string]any {
	start := baseTime.Add(time.Duration(i%3600) * time.Second)
	ts := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339) }
	name := DatabaseName(i)
	instances := []any{}
	for k := range databaseInstance {
		role := "replica"
		if k == 0 {
			role = "primary"
		}
		instances = append(instances, map[string]any{
			"name": fmt.Sprintf("%s-%d", name, k), "role": role, "ready": true,
			"zone": fmt.Sprintf("eu-west-1%c", 'a'+k), "lsn": fmt.Sprintf("0/%X", 0x3000000+i*4096+k),
		})
	}
	cond := func(typ, reason, msg string, d time.Duration) map[string]any {
		return map[string]any{
			"type": typ, "status": "True", "reason": reason, "message": msg,
			"lastTransitionTime": ts(d), "observedGeneration": int64(1),
		}
	}
	return map[string]any{
		"phase":              "Ready",
		"observedGeneration": int64(1),
		"currentVersion":     "16.4",
		"conditions": []any{
			cond("Provisioned", "InstancesCreated", "all 3 instances are provisioned", 90*time.Second),
			cond("Ready", "AllInstancesReady", "primary and 2 replicas accept connections", 150*time.Second),
			cond("BackupSucceeded", "ScheduledBackup", "last scheduled backup completed", 20*time.Hour),
		},
		"endpoints": map[string]any{
			"primary":  name + "-rw." + "svc.cluster.local:5432",
			"readOnly": name + "-ro." + "svc.cluster.local:5432",
		},
		"replicas":   map[string]any{"desired": int64(databaseInstance), "ready": int64(databaseInstance)},
		"instances":  instances,
		"lastBackup": map[string]any{"time": ts(20 * time.Hour), "sizeBytes": int64(1<<30 + i*4096), "id": hexOf(16, "backup", i)},
	}
}
