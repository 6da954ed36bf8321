package dynamicinformer

import "github.com/kindex/kindex/internal/informer"

// Types shared by both front ends, re-exported from kindex's informer core.
type (
	// Key identifies one shared informer: resource and version, mode, namespace, selectors.
	Key = informer.Key
	// Status is a snapshot of one informer's state; see Factory.SubscribeStatus.
	Status = informer.Status
	// Phase is Syncing, Synced, Parked or Stopped.
	Phase = informer.Phase
	// Reason says why an informer is parked or retrying.
	Reason = informer.Reason
	// Selectors are a label and a field selector (Options.Selectors).
	Selectors = informer.Selectors
	// Option overrides a factory default for one informer.
	Option = informer.Option
	// Registration is a handler added to an informer.
	Registration = informer.Registration
	// AllRegistration is a handler added to a watch-all set.
	AllRegistration = informer.AllRegistration
	// SyncError is returned by WaitForSync when its context ends first.
	SyncError = informer.SyncError
	// SyncFailure is one informer in a SyncError.
	SyncFailure = informer.SyncFailure
	// Discovery is what Options.Discovery needs; *discovery.Client implements it.
	Discovery = informer.Discovery
	// IndexStats describes one index of an informer (Informer.IndexStats).
	IndexStats = informer.IndexStats
	// IndexConflictError is returned when an index name is registered with two definitions.
	IndexConflictError = informer.IndexConflictError
	// UnknownOwner is an owner reference Factory.Orphans could not check.
	UnknownOwner = informer.UnknownOwner
)

// Phases.
const (
	PhaseSyncing = informer.PhaseSyncing
	PhaseSynced  = informer.PhaseSynced
	PhaseParked  = informer.PhaseParked
	PhaseStopped = informer.PhaseStopped
)

// Reasons.
const (
	ReasonNone            = informer.ReasonNone
	ReasonNotFound        = informer.ReasonNotFound
	ReasonForbidden       = informer.ReasonForbidden
	ReasonWatchForbidden  = informer.ReasonWatchForbidden
	ReasonInvalid         = informer.ReasonInvalid
	ReasonUnauthorized    = informer.ReasonUnauthorized
	ReasonTooManyRequests = informer.ReasonTooManyRequests
	ReasonServerError     = informer.ReasonServerError
	ReasonUnreachable     = informer.ReasonUnreachable
	ReasonExpired         = informer.ReasonExpired
	ReasonUnknown         = informer.ReasonUnknown
	ReasonNotSynced       = informer.ReasonNotSynced
)

// Errors.
var (
	ErrNotStarted   = informer.ErrNotStarted
	ErrShutdown     = informer.ErrShutdown
	ErrReleased     = informer.ErrReleased
	ErrNotWatchable = informer.ErrNotWatchable
	// ErrIndexNotFound: a query or RemoveIndex names an index that is not registered.
	ErrIndexNotFound = informer.ErrIndexNotFound
	// ErrIndexConflict: an index name is already registered with another definition.
	ErrIndexConflict = informer.ErrIndexConflict
	// ErrInvalidIndex: an empty name, a JSONPath that does not compile, an unknown built-in.
	ErrInvalidIndex = informer.ErrInvalidIndex
	// ErrIndexesUnsupported: the informer's store has no run-time indexes.
	ErrIndexesUnsupported = informer.ErrIndexesUnsupported
	// ErrOwnerNotCached: Orphans could not check an owner, its resource is not cached.
	ErrOwnerNotCached = informer.ErrOwnerNotCached
)

// Per-informer options.
var (
	// WithNamespace restricts one informer to a namespace ("" for all).
	WithNamespace = informer.WithNamespace
	// WithLabelSelector sets one informer's label selector.
	WithLabelSelector = informer.WithLabelSelector
	// WithFieldSelector sets one informer's field selector.
	WithFieldSelector = informer.WithFieldSelector
)
