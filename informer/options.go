package informer

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/storage"
)

func validateConfig(o *config) error {
	if o.Namespace != "" {
		if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
			return fmt.Errorf("kindex: invalid Namespace %s: %v", quote(o.Namespace), errs)
		}
	}
	if o.AccessRecheckInterval < 0 {
		return fmt.Errorf("kindex: AccessRecheckInterval must not be negative, got %v", o.AccessRecheckInterval)
	}
	if o.AccessRecheckInterval == 0 {
		o.AccessRecheckInterval = 1500 * time.Millisecond
	}
	if o.ResyncPeriod < 0 {
		return fmt.Errorf("kindex: ResyncPeriod must not be negative, got %v", o.ResyncPeriod)
	}
	var err error
	if o.LabelSelector, o.FieldSelector, err = canonicalSelectors(o.LabelSelector, o.FieldSelector); err != nil {
		return err
	}
	sel := make(map[schema.GroupResource]Selectors, len(o.Selectors))
	for gr, s := range o.Selectors {
		l, f, err := canonicalSelectors(s.Label, s.Field)
		if err != nil {
			return fmt.Errorf("%w (Selectors[%s])", err, resourceName(gr))
		}
		sel[gr] = Selectors{Label: l, Field: f}
	}
	o.Selectors = sel
	if _, err := o.Shard.selector(); err != nil {
		return err
	}
	return nil
}

func canonicalSelectors(label, field string) (string, string, error) {
	ls, err := labels.Parse(label)
	if err != nil {
		return "", "", fmt.Errorf("kindex: invalid label selector %s: %w", quote(label), cappedError{err})
	}
	fs, err := fields.ParseSelector(field)
	if err != nil {
		return "", "", fmt.Errorf("kindex: invalid field selector %s: %w", quote(field), cappedError{err})
	}
	return ls.String(), fs.String(), nil
}

// callOptions are the per-informer overrides of Options.
type callOptions struct {
	namespace *string
	label     *string
	field     *string
	shard     *Shard
	handlers  []cache.ResourceEventHandler
	// versionFree: the caller named the resource without a version (Factory.Informer and
	// its GVR and GVK forms), so the informer may follow the resource to another version
	// (entry.follow). Set by the factory, never by a user's Option.
	versionFree bool
	// ownKey: the informer is the one of its key, never one that followed its resource to
	// that key's version from another (registry.followedTo): a watch-all member, whose
	// set moves from the member that followed to the one at the new version.
	ownKey bool
}

func parseCallOptions(opts []Option) callOptions {
	var co callOptions
	for _, o := range opts {
		if o != nil {
			o(&co)
		}
	}
	return co
}

// Option overrides a factory default for one informer. A nil Option overrides nothing, so
// that a caller can pass one it sets only in some cases.
type Option func(*callOptions)

// WithNamespace restricts the informer to one namespace ("" means all namespaces). It is
// ignored for cluster-scoped resources.
func WithNamespace(ns string) Option { return func(o *callOptions) { o.namespace = &ns } }

// WithLabelSelector sets the informer's label selector ("" selects everything).
func WithLabelSelector(s string) Option { return func(o *callOptions) { o.label = &s } }

// WithFieldSelector sets the informer's field selector ("" selects everything).
func WithFieldSelector(s string) Option { return func(o *callOptions) { o.field = &s } }

// anyVersion marks a call that named its resource without a version.
func anyVersion(o *callOptions) { o.versionFree = true }

// asMember marks a watch-all member's call: without a version, and for an informer of its
// own key (callOptions.ownKey).
func asMember(o *callOptions) { o.versionFree, o.ownKey = true, true }

// WithEventHandler adds handler to the informer as AddEventHandler does, but, when the call
// creates the informer, before it handles anything: the handler sees every object of the
// first list (or of the snapshot, Options.SnapshotDir) as an add and then every change,
// including, after a restart from a snapshot, each change made while the process was down
// as an update or a delete. A handler added after Factory.Informer returns can find some
// of those applied already and gets the objects as they are then, as adds (client-go's
// handlers added after Start behave alike). On an informer that exists already it is
// AddEventHandler. The registration belongs to the returned reference (Release removes
// it); Informer.Registrations lists it. Not for WatchAll, whose AddEventHandler takes a
// handler per member.
func WithEventHandler(handler cache.ResourceEventHandler) Option {
	return func(o *callOptions) { o.handlers = append(o.handlers, handler) }
}

// keyFor builds the registry key and target of res: call options override the
// per-resource selectors, which override the factory defaults.
func (c *core) keyFor(res discovery.Resource, opts []Option) (Key, storage.Target, error) {
	co := parseCallOptions(opts)
	ns := c.opts.Namespace
	if co.namespace != nil {
		ns = *co.namespace
		if ns != "" {
			if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
				return Key{}, storage.Target{}, fmt.Errorf("kindex: invalid namespace %s: %v", quote(ns), errs)
			}
		}
	}
	restricted := ""
	if !res.Namespaced {
		ns, restricted = "", ns
	}
	label, field := c.opts.LabelSelector, c.opts.FieldSelector
	if s, ok := c.opts.Selectors[res.GVR.GroupResource()]; ok {
		label, field = s.Label, s.Field
	}
	if co.label != nil || co.field != nil {
		if co.label != nil {
			label = *co.label
		}
		if co.field != nil {
			field = *co.field
		}
		var err error
		if label, field, err = canonicalSelectors(label, field); err != nil {
			return Key{}, storage.Target{}, err
		}
	}
	sh := c.opts.Shard
	if co.shard != nil {
		sh = *co.shard
	}
	sel, err := sh.selector()
	if err != nil {
		return Key{}, storage.Target{}, err
	}
	if sel != "" {
		c.shards.Store(sel, sh.Normalize())
	}
	key := Key{GVR: res.GVR, Mode: c.mode.Name(), Namespace: ns, Restricted: restricted, LabelSelector: label,
		FieldSelector: field, Shard: sel}
	return key, storage.Target{Resource: res, Namespace: ns, Restricted: restricted, LabelSelector: label,
		FieldSelector: field, ShardSelector: sel}, nil
}
