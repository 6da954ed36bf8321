package harness

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/rest"
)

// Names of the built-in subjects.
const (
	SubjectListJSON       = "apiserver-list-json"
	SubjectListJSONNoGzip = "apiserver-list-json-nogzip"
	SubjectListProtobuf   = "apiserver-list-protobuf"
	SubjectDynamic        = "client-go-dynamic"
	SubjectDynamicNoMF    = "client-go-dynamic-strip-mf"
	SubjectDynamicPaged   = "client-go-dynamic-paged-list"
	SubjectMetadata       = "client-go-metadata"
)

// The built-in subjects, in the order the report lists them: the apiserver floors first,
// then client-go. See the package documentation for what each one measures.
func init() {
	Register(&listFloor{name: SubjectListJSON, accept: contentTypeJSON, count: countJSONItems})
	Register(&listFloor{name: SubjectListJSONNoGzip, accept: contentTypeJSON, noGzip: true, count: countJSONItems})
	Register(&listFloor{name: SubjectListProtobuf, accept: contentTypeProtobuf, count: countProtobufItems})
	Register(SubjectFunc{SubjectDynamic, func(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string) (int, func(), error) {
		return syncDynamic(ctx, cfg, gvr, ns, nil)
	}})
	Register(SubjectFunc{SubjectDynamicNoMF, func(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string) (int, func(), error) {
		return syncDynamic(ctx, cfg, gvr, ns, stripManagedFields)
	}})
	Register(SubjectFunc{SubjectDynamicPaged, func(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, ns string) (int, func(), error) {
		// The child process is this subject's alone, so turning the gate off is safe.
		clientfeatures.ReplaceFeatureGates(withoutWatchList{clientfeatures.FeatureGates()})
		return syncDynamic(ctx, cfg, gvr, ns, nil)
	}})
	Register(SubjectFunc{SubjectMetadata, syncMetadata})
}
