package informer

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kindex/kindex/discovery"
)

// Object is what a front end hands to users: *unstructured.Unstructured or
// *metav1.PartialObjectMetadata.
type Object interface {
	runtime.Object
	metav1.Object
}

// Key identifies one shared informer in a factory: equal keys share one informer.
type Key struct {
	// GVR is the resource and the version it is listed and watched at.
	GVR       schema.GroupVersionResource
	Mode      string // storage mode name: "dynamic" (unstructured), "compact" or "metadata"
	Namespace string // "" for all namespaces and for cluster-scoped resources
	// Restricted is, for a cluster-scoped resource, the namespace the factory or the call
	// asked for (Options.Namespace, WithNamespace): were the resource served namespaced
	// later, such an informer parks rather than list every namespace, so it is not shared
	// with an informer asked for without one.
	Restricted    string
	LabelSelector string // canonical form ("" selects everything)
	FieldSelector string // canonical form
	Shard         string // the shard selector sent as ListOptions.ShardSelector, "" for none
}

// String prints the key as logs and errors name the informer: "plural.group/version",
// then the namespace, restriction, selectors and shard that are set, then the mode in
// parentheses.
func (k Key) String() string {
	var b strings.Builder
	b.WriteString(resourceName(k.GVR.GroupResource()))
	b.WriteString("/" + k.GVR.Version)
	if k.Namespace != "" {
		b.WriteString(" ns=" + k.Namespace)
	}
	if k.Restricted != "" {
		b.WriteString(" restricted=" + k.Restricted)
	}
	if k.LabelSelector != "" {
		b.WriteString(" labels=" + k.LabelSelector)
	}
	if k.FieldSelector != "" {
		b.WriteString(" fields=" + k.FieldSelector)
	}
	if k.Shard != "" {
		b.WriteString(" shard=" + k.Shard)
	}
	b.WriteString(" (" + k.Mode + ")")
	return b.String()
}

// resourceName is "plural.group", or "plural" for the core group: the form users type and
// discovery.Filter uses.
func resourceName(gr schema.GroupResource) string {
	if gr.Group == "" {
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}

// Phase is where an informer is in its life.
type Phase string

const (
	// PhaseSyncing: a list and watch is running and the initial list has not been applied
	// yet (first start, or after a resume).
	PhaseSyncing Phase = "Syncing"
	// PhaseSynced: the initial list has been applied and the watch is being kept up.
	// Transient errors (Reason) do not leave Synced: the cache stays valid at its last
	// resourceVersion while the reflector backs off and re-watches.
	PhaseSynced Phase = "Synced"
	// PhaseParked: no request is made for this resource until the outside world changes
	// (a grant, the resource served again). The cache and handlers are kept, except for
	// ReasonNotFound: the server deleted the objects, so the cache is emptied and handlers
	// get a cache.DeletedFinalStateUnknown for each.
	PhaseParked Phase = "Parked"
	// PhaseStopped: released or shut down; the cache was freed.
	PhaseStopped Phase = "Stopped"
)

// Reason says why an informer is parked or retrying; ReasonNone when healthy.
type Reason string

const (
	// ReasonNone: healthy, or the informer is syncing without an error so far.
	ReasonNone Reason = ""
	// ReasonNotFound: the server does not serve the resource (CRD deleted). Parks when
	// discovery confirms the resource is gone; a 404 while discovery still serves it is retried.
	ReasonNotFound Reason = "NotFound"
	// ReasonForbidden: list (or watch) is forbidden. Parks; re-checked with
	// SelfSubjectAccessReviews with backoff.
	ReasonForbidden Reason = "Forbidden"
	// ReasonWatchForbidden: list is allowed but watch is not. Parks after the list (the cache
	// holds that snapshot) instead of re-listing forever.
	ReasonWatchForbidden Reason = "WatchForbidden"
	// ReasonInvalid: the server rejects the request itself (a field selector it does not
	// support, a method it does not allow). Parks until discovery reports a change.
	ReasonInvalid Reason = "Invalid"
	// ReasonUnauthorized: the credentials were rejected (401). Retried with backoff.
	ReasonUnauthorized Reason = "Unauthorized"
	// ReasonTooManyRequests: 429. Retried with the reflector's backoff.
	ReasonTooManyRequests Reason = "TooManyRequests"
	// ReasonServerError: 5xx or a server timeout. Retried with backoff.
	ReasonServerError Reason = "ServerError"
	// ReasonUnreachable: the connection failed (refused, reset, EOF). Retried with backoff.
	ReasonUnreachable Reason = "Unreachable"
	// ReasonExpired: 410, the resourceVersion was compacted. The reflector relists; counted
	// but not kept as a Reason.
	ReasonExpired Reason = "Expired"
	// ReasonUnknown: any other error. Retried with backoff.
	ReasonUnknown Reason = "Unknown"
	// ReasonNotSynced appears only in a SyncFailure: the wait ended while the informer was
	// still syncing without any error (a large list, a slow server).
	ReasonNotSynced Reason = "NotSynced"
)

// Status is a snapshot of one informer's state.
type Status struct {
	// Key identifies the informer.
	Key Key
	// Resource is the resource the informer caches, as discovery describes it.
	Resource discovery.Resource
	// Phase is where the informer is: syncing, synced, parked or stopped.
	Phase Phase
	// Reason is why the informer is parked or retrying; ReasonNone when healthy.
	Reason Reason
	// LastError is the last list or watch error and LastErrorTime when it happened. They are
	// kept after recovery (Reason tells whether the problem is current).
	LastError     error
	LastErrorTime time.Time
	// LastSyncTime is when an initial list (first sync, relist after 410, resume) was last
	// applied completely.
	LastSyncTime time.Time
	// Objects is the number of objects in the cache.
	Objects int
	// Lists counts completed lists (initial list, relists after 410 or a restart, resumes;
	// a snapshot loaded at start counts as one, although it made no request), each once
	// received whole: its objects may still be being applied (LastSyncTime is set once
	// they are).
	Lists int
	// CallbackErrors counts calls of the caller's code for this informer that failed: a
	// handler that panicked (the notification was skipped), a transform that failed,
	// panicked or returned nil (the object was cached as received). LastCallbackError is the
	// latest. Each kind is logged once per informer; the rest are counted here and in
	// kindex_callback_failures_total.
	CallbackErrors    int64
	LastCallbackError error
	// ServingFromSnapshot is true while the cache holds the objects of a snapshot
	// (Options.SnapshotDir) and the informer is not current with the server yet: reads
	// answer from the snapshot, Phase is Syncing. SnapshotTime is when the snapshot the
	// informer started from was taken (zero if it did not start from one; its age is
	// time.Since(SnapshotTime)) and SnapshotResourceVersion the resourceVersion it was
	// consistent with.
	ServingFromSnapshot     bool
	SnapshotTime            time.Time
	SnapshotResourceVersion string
	// SnapshotMapped is the size of the snapshot file the informer started from when it
	// mapped the file instead of reading it (plaintext, Linux, the compact mode without
	// compression or the metadata-only mode; 0 otherwise): its objects (their strings, in
	// the metadata-only mode) are then views of the file's pages, memory outside the Go
	// heap that the kernel can drop and read again under pressure, mapped for the rest of
	// the process's life (see "Warm restart" in the package doc).
	SnapshotMapped int64
	// SnapshotError is why the informer's last attempt to write its snapshot failed (a
	// directory where the file should be, a full disk), nil once a write succeeds; it is
	// logged once per distinct failure, and the informer retries every SnapshotInterval
	// while it has changes to save. SnapshotErrorTime is when a write last failed.
	SnapshotError     error
	SnapshotErrorTime time.Time
	// ShardFilter says who applies the informer's Shard: ShardFilterServer when the
	// apiserver honoured the shard selector (its list echoed it in ListMeta.ShardInfo, or,
	// for a custom resource, whose lists echo nothing, it left out objects the selector
	// excludes), ShardFilterClient when it did not (feature gate ShardedListAndWatch off, an
	// older server) and kindex filters every listed object and watch event itself, "" without
	// a shard or until the first run's probe has answered (each run asks once, before its
	// first request; a run after a park or a release keeps the answer of the run before it
	// until its own probe answers, since a server rarely changes its answer between runs).
	// A custom resource with no object to list (within the informer's namespace and
	// selectors) when the run starts cannot tell: it says ShardFilterClient, and kindex
	// filters either way.
	ShardFilter ShardFilter
}

// String prints the key and the phase, with the reason when there is one:
// "pods/v1 (compact): Parked (Forbidden)".
func (s Status) String() string {
	out := fmt.Sprintf("%s: %s", s.Key, s.Phase)
	if s.Reason != ReasonNone {
		out += " (" + string(s.Reason) + ")"
	}
	return out
}
