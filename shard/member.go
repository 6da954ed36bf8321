package shard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/kindex/kindex/informer"
)

const (
	// GroupLabel is the label every member's Lease carries, with Options.Group as value.
	GroupLabel = "kindex.io/shard-group"
	// HeldAnnotation is the annotation in which a member publishes the hash ranges it holds
	// synced ("start-last" in hex, comma-separated). Other members read it to decide when a
	// range they are giving up is covered (make-before-break).
	HeldAnnotation = "kindex.io/shard-held"
	// LeavingAnnotation marks the Lease of a member that is leaving (Member.Leave): the
	// others leave it out of the assignment.
	LeavingAnnotation = "kindex.io/shard-leaving"
	// AssignedAnnotation is the annotation in which a member publishes its assignment as it
	// sees it (HeldAnnotation's form; empty before it knows one and while it leaves). Another
	// member counts on what it holds only within this and within the assignment that other
	// member computes for it: two members whose views of the group differ for a moment then
	// cannot each count on the other for the same range.
	AssignedAnnotation = "kindex.io/shard-assigned"
	// InstanceAnnotation is the annotation in which a member says which process keeps the
	// Lease (a random value per Member). A member never takes over the Lease of its identity
	// while another instance keeps it (see ErrIdentityInUse), and deletes the Lease at the end
	// of Run only if it is still its own.
	InstanceAnnotation = "kindex.io/shard-instance"
	// FieldAnnotation is the annotation in which a member publishes what it hashes
	// (Options.Field). Members that hash another field split their own hash space: a member
	// leaves them out of its group, so that during a change of Field (a rolling update) each
	// object is held by a member of each field, twice for a while, never by none. A Lease
	// without it is counted as hashing the same field.
	FieldAnnotation = "kindex.io/shard-field"
)

// ErrIdentityInUse is wrapped by the error Member.Run returns when another live process
// keeps the Lease of the same Identity: one that renews it while this member waits for it
// to expire (two replicas given one identity), or one that took it over while this member
// kept it (this member could not renew it for a LeaseDuration). Identities must be unique
// in a group: two members of one identity would hold the same range, each counting itself
// once. A Lease that is not renewed (a replica that died, restarted under the same name) is
// taken over once it expires, without an error.
var ErrIdentityInUse = errors.New("shard: another live instance keeps the Lease of this identity")

// Options configures a Member.
type Options struct {
	// Client creates, renews, lists and deletes Leases (coordination.k8s.io/v1) in
	// Namespace. Required.
	Client kubernetes.Interface
	// Namespace holds the group's Leases. Required.
	Namespace string
	// Group names the set of replicas that split the hash space: the Lease name prefix and
	// the value of GroupLabel (so a label value: at most 63 characters). Default "kindex".
	Group string
	// Identity is this replica's name, unique in the group (a Pod name). Required; the
	// Lease is "<Group>-<Identity>".
	Identity string
	// Field is what is hashed. Default informer.ShardByUID.
	Field informer.ShardField
	// LeaseDuration is how long a Lease stays valid without renewal: how long a replica that
	// died without deleting its Lease keeps its range. A whole number of seconds (a Lease
	// holds seconds; anything else is refused rather than rounded); default 15 s, at least
	// 1 s.
	LeaseDuration time.Duration
	// RenewPeriod is how often a member renews its Lease and lists the others. Default
	// LeaseDuration/3; at least 100 ms and shorter than LeaseDuration.
	RenewPeriod time.Duration
	// Logger receives one line per membership change, and one per run of failures to renew
	// the Lease or list the group's. The zero Logger discards.
	Logger logr.Logger
}

// Member is one replica of a group: it keeps its own Lease, reads the others', and derives
// the group's assignment. It is safe for concurrent use.
type Member struct {
	o Options

	mu         sync.Mutex
	members    []string // live identities, sorted
	otherField []string // live members hashing another field (FieldAnnotation), sorted
	assigned   informer.Shard
	known      bool
	held       map[any]informer.Shard    // what each Informer of this replica holds synced
	others     map[string]informer.Shard // what the other live members hold synced
	cover      informer.Shard            // what the other members hold synced of their own assignment
	failing    bool                      // the last renewal or list failed (logged once per run of failures)
	leaving    bool                      // Leave was called
	observed   int                       // Lease lists seen
	changed    chan struct{}
	kick       chan struct{}
	crash      bool  // tests: end Run without deleting the Lease, as a killed process would
	started    bool  // Run was called: a Member runs once
	runErr     error // what Run returned

	instance string                 // InstanceAnnotation's value: this Member's, random
	holding  bool                   // this Run created or renewed the Lease as instance
	renewed  time.Time              // the renewTime of its last renewal that succeeded
	gone     bool                   // the Lease was found deleted (logged once) and is not back yet
	lapsed   bool                   // the Lease is expired: not renewed for a LeaseDuration
	waiting  *foreignLease          // the live Lease of another instance this member waits for
	seen     map[string]seenRenewal // the renewTime of each Lease of the group, and when it was first seen
	ignored  map[string]bool        // Leases of the group that are not a member's, logged once
	done     chan struct{}          // closed when Run returns
}

// seenRenewal is a Lease's renewTime and when this member first saw it (its clock).
type seenRenewal struct{ renew, at time.Time }

// foreignLease is another instance's Lease of this member's identity, as first seen.
type foreignLease struct {
	instance, holder, group string
	renew                   time.Time // its renewTime when first seen
	seen                    time.Time // when first seen, on this replica's clock
}

// minRenewPeriod bounds the requests a member makes: a renewal and a list per period.
const minRenewPeriod = 100 * time.Millisecond

// New validates o and returns a Member that does nothing until Run.
func New(o Options) (*Member, error) {
	if o.Client == nil {
		return nil, errors.New("shard: Options.Client is nil")
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return nil, fmt.Errorf("shard: invalid Namespace %q: %v", o.Namespace, errs)
	}
	if o.Group == "" {
		o.Group = "kindex"
	}
	if errs := validation.IsValidLabelValue(o.Group); len(errs) > 0 {
		return nil, fmt.Errorf("shard: invalid Group %q (the value of label %s): %v", o.Group, GroupLabel, errs)
	}
	if o.Identity == "" {
		return nil, errors.New("shard: Options.Identity is empty")
	}
	if errs := validation.IsDNS1123Subdomain(o.Group + "-" + o.Identity); len(errs) > 0 {
		return nil, fmt.Errorf("shard: Lease name %q: %v", o.Group+"-"+o.Identity, errs)
	}
	if o.Field == "" {
		o.Field = informer.ShardByUID
	}
	if o.Field != informer.ShardByUID && o.Field != informer.ShardByNamespace {
		return nil, fmt.Errorf("shard: invalid Field %q", o.Field)
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = 15 * time.Second
	}
	if o.LeaseDuration < time.Second || o.LeaseDuration%time.Second != 0 || o.LeaseDuration/time.Second > math.MaxInt32 {
		return nil, fmt.Errorf("shard: LeaseDuration %v is not a whole number of seconds from 1s to %ds", o.LeaseDuration, math.MaxInt32)
	}
	if o.RenewPeriod == 0 {
		o.RenewPeriod = o.LeaseDuration / 3
	}
	if o.RenewPeriod < minRenewPeriod || o.RenewPeriod >= o.LeaseDuration {
		return nil, fmt.Errorf("shard: RenewPeriod %v must be at least %v and shorter than LeaseDuration %v", o.RenewPeriod, minRenewPeriod, o.LeaseDuration)
	}
	instance := make([]byte, 8)
	if _, err := rand.Read(instance); err != nil {
		return nil, fmt.Errorf("shard: instance identifier: %w", err)
	}
	return &Member{o: o, changed: make(chan struct{}), kick: make(chan struct{}, 1), others: map[string]informer.Shard{},
		held: map[any]informer.Shard{}, instance: hex.EncodeToString(instance), done: make(chan struct{})}, nil
}

// Identity is Options.Identity.
func (m *Member) Identity() string { return m.o.Identity }

// Field is what the group hashes.
func (m *Member) Field() informer.ShardField { return m.o.Field }

// Split divides the hash space into n contiguous, equal ranges (the last one takes the
// remainder), in order: what member i of n sorted identities is assigned.
func Split(field informer.ShardField, n int) []informer.Shard {
	if n <= 0 {
		return nil
	}
	out := make([]informer.Shard, n)
	var step uint64 // 2^64 / n; unused for n == 1 (the whole space)
	if n > 1 {
		step, _ = bits.Div64(1, 0, uint64(n))
	}
	for i := range n {
		start := uint64(i) * step
		last := start + step - 1
		if i == n-1 {
			last = math.MaxUint64
		}
		out[i] = informer.Shard{Field: field, Ranges: []informer.ShardRange{{Start: start, Last: last}}}
	}
	return out
}

// Assignment returns the shard this replica owns now and true, or false before the member
// has seen the group (one RenewPeriod after Run starts: the first list of Leases may miss
// replicas started together) and while it leaves (it owns nothing).
func (m *Member) Assignment() (informer.Shard, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.known || m.leaving || m.assigned.IsZero() {
		return informer.Shard{}, false
	}
	return m.assigned, true
}

// Leave hands this replica's ranges over before it stops, make-before-break: the Lease is
// marked leaving, the other members take its ranges into their assignment, and each of its
// Informers releases a range once other members hold it synced. Leave returns when nothing
// is held any more (then cancel Run's context: the Lease is deleted), or ctx's error if
// ctx ends first, which it does for the last member of a group: nobody can take over.
func (m *Member) Leave(ctx context.Context) error {
	m.mu.Lock()
	m.leaving = true
	m.mu.Unlock()
	m.kickRenew()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		m.mu.Lock()
		// Nothing held, and the others know it: they leave the member out of the split, or it
		// keeps no Lease (Run has not started, has ended, or waits for another instance's).
		left := len(m.published().Ranges) == 0 && (!m.holding || m.known && m.assigned.IsZero())
		m.mu.Unlock()
		if left {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Leaving reports whether Leave was called.
func (m *Member) Leaving() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leaving
}

// handingOver reports whether the member hands everything it holds over: it leaves, or its
// Lease has expired (the group counts it out).
func (m *Member) handingOver() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leaving || m.lapsed
}

// Owns reports whether an object whose Field is value (its UID, or its namespace) is this
// replica's own under the current assignment. During a handoff the replica may still hold
// objects it no longer owns (Informer.Held says what it holds); exactly one live member
// owns each value once the members agree on who is live. A member owns nothing from the
// moment Leave is called.
func (m *Member) Owns(value string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.known && !m.leaving && !m.assigned.IsZero() && m.assigned.Matches(value)
}

// Members returns the live identities of the group, sorted, as this member last saw them.
func (m *Member) Members() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.members)
}

// Changed returns a channel closed at the next change of the assignment or of what the
// other members hold.
func (m *Member) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

// setHeld records what one Informer of this replica (owner) holds synced; the Lease is
// updated at once when what the replica publishes changes. An owner that holds nothing
// synced yet makes the replica publish nothing: see published.
func (m *Member) setHeld(owner any, s informer.Shard) {
	m.mu.Lock()
	before := m.published()
	m.held[owner] = s.Normalize()
	changed := !before.Equal(m.published())
	m.mu.Unlock()
	if changed {
		m.kickRenew()
	}
}

// forget drops a stopped Informer from what the replica publishes.
func (m *Member) forget(owner any) {
	m.mu.Lock()
	delete(m.held, owner)
	m.mu.Unlock()
	m.kickRenew()
}

func (m *Member) kickRenew() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// published is what the replica holds synced for every one of its Informers: the
// intersection of theirs (a range is another member's to drop only when it is held for
// every resource). Called with m.mu held.
func (m *Member) published() informer.Shard {
	var out informer.Shard
	first := true
	for _, s := range m.held {
		if first {
			out, first = s, false
			continue
		}
		out = intersect(out, s)
	}
	return out
}

// intersect is the part of the hash space both a and b hold (empty Ranges for none), in
// one pass over both sorted lists of ranges: a Lease may list thousands.
func intersect(a, b informer.Shard) informer.Shard {
	x, y := a.Normalize().Ranges, b.Normalize().Ranges
	var out []informer.ShardRange
	for i, j := 0, 0; i < len(x) && j < len(y); {
		if lo, hi := max(x[i].Start, y[j].Start), min(x[i].Last, y[j].Last); lo <= hi {
			out = append(out, informer.ShardRange{Start: lo, Last: hi})
		}
		if x[i].Last < y[j].Last { // the range that ends first meets nothing further on
			i++
		} else {
			j++
		}
	}
	return informer.Shard{Field: a.Field, Ranges: out}.Normalize()
}

// covered returns what the other members hold synced of their own assignment, as their
// Leases publish it: the part of the hash space an Informer of this replica may stop
// holding. A member counts on no other for a range that is not that other's to keep (a
// leaving member's, or what an active member still holds of an earlier assignment): two
// members that each hold a range they are giving up would otherwise each drop it because
// the other's Lease still says it holds it, and nobody would.
func (m *Member) covered() informer.Shard {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cover
}

// OthersHeld returns the union of what the other live members hold synced, as published
// in their Leases (leaving members included), for diagnostics.
func (m *Member) OthersHeld() informer.Shard {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := informer.Shard{Field: m.o.Field}
	for _, s := range m.others {
		u = u.Union(s)
	}
	return u
}

func (m *Member) leaseName() string { return m.o.Group + "-" + m.o.Identity }

// Run keeps the Lease until ctx ends, then deletes it so that the others take the range
// over at once (a replica that dies without deleting it keeps its range until the Lease
// expires). It returns ctx's error, or an error if the first renewal or the first list of
// the group's Leases fails for a reason other than ctx: a replica that can hold a Lease but
// cannot see the others' would be given a range by them and never take it, so it deletes
// its Lease and stops instead. Later failures are logged (the first of a run of them at
// level 0) and retried every RenewPeriod.
//
// The Lease of the member's identity is kept by one instance (InstanceAnnotation): a member
// that finds it kept by another, not expired, waits (logging it once) until it expires or is
// deleted, as when a replica that died is restarted under the same name, and then takes it;
// Run returns an error wrapping ErrIdentityInUse, and leaves the Lease alone, if that other
// instance renews it meanwhile, or if another instance takes the Lease over while this
// member keeps it. Run deletes the Lease at its end only while it is still its own. A
// Member runs once: a second call returns ErrRunOnce. When Run returns, the member has no
// assignment any more, and the Informers that follow it end.
func (m *Member) Run(ctx context.Context) error {
	if m.done == nil {
		return errors.New("shard: Member.Run: the Member was not made by New")
	}
	m.mu.Lock()
	again := m.started
	m.started = true
	m.mu.Unlock()
	if again {
		return ErrRunOnce
	}
	err := m.run(ctx)
	m.mu.Lock()
	m.holding, m.known, m.runErr = false, false, err
	wake := m.changed
	m.changed = make(chan struct{})
	m.mu.Unlock()
	close(wake)
	close(m.done)
	return err
}

func (m *Member) run(ctx context.Context) error {
	tick := time.NewTicker(m.o.RenewPeriod)
	defer tick.Stop()
	first := true // until the first renewal and list succeed
	for {
		err := m.renew(ctx)
		waiting := errors.Is(err, errWaiting)
		switch {
		case waiting:
		case errors.Is(err, ErrIdentityInUse):
			return err
		case err != nil:
			err = fmt.Errorf("shard: renew Lease %s/%s: %w", m.o.Namespace, m.leaseName(), err)
		}
		// The group is listed after a failed renewal too (not the first: Run fails then): the
		// others count this member out once its Lease expires, and so must it.
		if !waiting && (err == nil || !first) {
			if lerr := m.observe(ctx); lerr != nil {
				err = errors.Join(err, fmt.Errorf("shard: list the Leases of group %q in %s: %w", m.o.Group, m.o.Namespace, lerr))
			}
		}
		switch {
		case waiting:
		case err != nil && ctx.Err() == nil:
			if first {
				m.deleteLease(ctx)
				return err
			}
			m.mu.Lock()
			streak := m.failing
			m.failing = true
			m.mu.Unlock()
			v := 0 // the first failure of a run of them is news; the rest are not
			if streak {
				v = 1
			}
			m.o.Logger.V(v).Info("Cannot renew the shard Lease or list the group's", "err", err)
		case err == nil:
			first = false
			m.mu.Lock()
			m.failing = false
			m.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			m.mu.Lock()
			crash := m.crash
			m.mu.Unlock()
			if !crash {
				m.deleteLease(ctx)
			}
			return ctx.Err()
		case <-tick.C:
		case <-m.kick:
		}
	}
}

// deleteLease deletes the member's Lease, even once ctx has ended, if it is still its own
// (another instance may have taken it over, or keep it while this member waits).
func (m *Member) deleteLease(ctx context.Context) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	leases := m.o.Client.CoordinationV1().Leases(m.o.Namespace)
	for range 3 {
		l, err := leases.Get(dctx, m.leaseName(), metav1.GetOptions{})
		if err != nil || l.Annotations[InstanceAnnotation] != m.instance {
			return
		}
		err = leases.Delete(dctx, m.leaseName(), metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &l.UID, ResourceVersion: &l.ResourceVersion}})
		if !apierrors.IsConflict(err) {
			return
		}
	}
}

// errWaiting: the Lease of the member's identity is kept by another live instance; the
// member waits for it to expire or be deleted.
var errWaiting = errors.New("shard: waiting for the Lease of another instance")

func (m *Member) renew(ctx context.Context) error {
	leases := m.o.Client.CoordinationV1().Leases(m.o.Namespace)
	m.mu.Lock()
	held := formatHeld(m.published())
	leaving := strconv.FormatBool(m.leaving)
	assigned := ""
	if m.known && !m.leaving {
		assigned = formatHeld(m.assigned)
	}
	m.mu.Unlock()
	now := metav1.NewMicroTime(time.Now())
	secs := int32(m.o.LeaseDuration / time.Second)
	id := m.o.Identity
	l, err := leases.Get(ctx, m.leaseName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		m.mu.Lock()
		report := m.holding && !m.gone
		m.gone = m.holding
		m.mu.Unlock()
		if report {
			m.o.Logger.Info("The shard Lease was deleted while this replica kept it; creating it again",
				"lease", m.o.Namespace+"/"+m.leaseName())
		}
		l = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: m.leaseName(), Labels: map[string]string{GroupLabel: m.o.Group},
				Annotations: map[string]string{HeldAnnotation: held, LeavingAnnotation: leaving, AssignedAnnotation: assigned,
					FieldAnnotation: string(m.o.Field), InstanceAnnotation: m.instance}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now},
		}
		_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return errWaiting // created meanwhile by another instance: the next renewal looks at it
		}
		if err == nil {
			m.setHolding(now.Time)
		}
		return err
	}
	if err != nil {
		return err
	}
	if err := m.mayRenew(l, now.Time); err != nil {
		return err
	}
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[GroupLabel] = m.o.Group
	l.Annotations[HeldAnnotation] = held
	l.Annotations[LeavingAnnotation] = leaving
	l.Annotations[AssignedAnnotation] = assigned
	l.Annotations[FieldAnnotation] = string(m.o.Field)
	l.Annotations[InstanceAnnotation] = m.instance
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &id, &secs, &now
	if _, err = leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		return err
	}
	m.setHolding(now.Time)
	return nil
}

func (m *Member) setHolding(renewed time.Time) {
	m.mu.Lock()
	m.holding, m.waiting, m.renewed, m.gone = true, nil, renewed, false
	m.mu.Unlock()
}

// mayRenew says whether the member may write l, the Lease of its identity: nil if it is
// its own or nobody's (expired, or without an instance, as one written by hand); errWaiting
// while another instance keeps it; an error wrapping ErrIdentityInUse if that instance
// renews it meanwhile, or took it over from this member.
func (m *Member) mayRenew(l *coordinationv1.Lease, now time.Time) error {
	inst := l.Annotations[InstanceAnnotation]
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	group := l.Labels[GroupLabel]
	var renew time.Time
	if l.Spec.RenewTime != nil {
		renew = l.Spec.RenewTime.Time
	}
	name := m.o.Namespace + "/" + m.leaseName()
	var wait []any // logged once m.mu is released
	defer func() {
		if wait != nil {
			m.o.Logger.Info("The shard Lease of this identity is kept by another instance; waiting until it expires or is deleted (identities must be unique in a group)", wait...)
		}
	}()
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case inst == m.instance:
		return nil
	case m.holding && inst == "":
		return nil // the instance was edited out: the Lease is still this member's
	case m.holding:
		return fmt.Errorf("%w: Lease %s, kept by this member (instance %s), was taken over by instance %s (holder %q): identities must be unique in a group",
			ErrIdentityInUse, name, m.instance, inst, holder)
	case inst == "" && holder == m.o.Identity && group == m.o.Group:
		return nil // not an instance's: written by hand or by an earlier version
	}
	w := m.waiting
	if w == nil || w.instance != inst || w.holder != holder || w.group != group {
		w = &foreignLease{instance: inst, holder: holder, group: group, renew: renew, seen: now}
		m.waiting = w
		if exp := m.expiry(l.Spec.RenewTime, l.Spec.LeaseDurationSeconds, now); exp.After(now) {
			wait = []any{"lease", name, "instance", inst, "holder", holder, "group", group, "expires", exp.Format(time.RFC3339)}
			return errWaiting
		}
	} else if !renew.Equal(w.renew) {
		return fmt.Errorf("%w: Lease %s is renewed by instance %s (holder %q, group %q): identities must be unique in a group",
			ErrIdentityInUse, name, inst, holder, group)
	}
	if m.expiry(l.Spec.RenewTime, l.Spec.LeaseDurationSeconds, w.seen).After(now) {
		return errWaiting
	}
	m.waiting = nil
	return nil // expired: this member takes it over
}

// maxCountedLease bounds how long another's Lease counts without being seen renewed, whatever
// its leaseDurationSeconds says, unless this member's own LeaseDuration is longer.
const maxCountedLease = time.Hour

// expiry is when a Lease of this renewTime and leaseDurationSeconds, first seen with that
// renewTime at seen (this replica's clock), expires: its duration after the earlier of the
// two, so that a renewTime ahead of this replica's clock (or written by hand far in the
// future) holds no longer than a Lease seen renewed now; and the duration counts for at most
// maxCountedLease (or this member's LeaseDuration, if longer). The zero time for a Lease
// without a renewTime or a duration.
func (m *Member) expiry(renew *metav1.MicroTime, secs *int32, seen time.Time) time.Time {
	if renew == nil || secs == nil || *secs <= 0 {
		return time.Time{}
	}
	d := min(time.Duration(*secs)*time.Second, max(maxCountedLease, m.o.LeaseDuration))
	from := renew.Time
	if seen.Before(from) {
		from = seen
	}
	return from.Add(d)
}

// observe lists the group's Leases and recomputes the membership and assignment.
func (m *Member) observe(ctx context.Context) error {
	list, err := m.o.Client.CoordinationV1().Leases(m.o.Namespace).List(ctx,
		metav1.ListOptions{LabelSelector: GroupLabel + "=" + m.o.Group})
	if err != nil {
		return err
	}
	now := time.Now()
	m.mu.Lock()
	leaving, prevSeen, prevIgnored := m.leaving, m.seen, m.ignored // only observe writes the last two
	// A Lease not renewed for a LeaseDuration (the renewals fail: 403, say) is expired for
	// the others: they split the space without this member, and so does it, handing its
	// range over as they hold it, until a renewal succeeds again.
	renewed := m.renewed
	lapsed := m.holding && !now.Before(renewed.Add(m.o.LeaseDuration))
	m.mu.Unlock()
	var live []string // the members the assignment is split between
	if !leaving && !lapsed {
		live = append(live, m.o.Identity)
	}
	others := map[string]informer.Shard{}
	claims := map[string]informer.Shard{} // what each other member says is its assignment
	var otherField []string               // live members that hash another field
	seen := make(map[string]seenRenewal, len(list.Items))
	ignored := map[string]bool{} // Leases that are not a member's
	var ignore []string          // those seen for the first time, and their holders
	own := false
	for _, l := range list.Items {
		s := l.Spec
		if l.Name == m.leaseName() && l.Annotations[InstanceAnnotation] == m.instance {
			own = true
		}
		if s.HolderIdentity == nil || *s.HolderIdentity == m.o.Identity || s.RenewTime == nil || s.LeaseDurationSeconds == nil {
			continue
		}
		if l.Name != m.o.Group+"-"+*s.HolderIdentity {
			// Written by hand, or a member's Lease edited: whatever it says is not what a
			// member holds (it could speak for a real member of that name).
			if ignored[l.Name] = true; !prevIgnored[l.Name] {
				ignore = append(ignore, l.Name, *s.HolderIdentity)
			}
			continue
		}
		r := seenRenewal{renew: s.RenewTime.Time, at: now}
		if prev, ok := prevSeen[l.Name]; ok && prev.renew.Equal(r.renew) {
			r.at = prev.at
		}
		seen[l.Name] = r
		if !m.expiry(s.RenewTime, s.LeaseDurationSeconds, r.at).After(now) {
			continue // expired: a replica that died
		}
		if f := l.Annotations[FieldAnnotation]; f != "" && f != string(m.o.Field) {
			otherField = append(otherField, *s.HolderIdentity)
			continue // hashes another field: not a member of this split (FieldAnnotation)
		}
		if l.Annotations[LeavingAnnotation] != "true" {
			live = append(live, *s.HolderIdentity)
		}
		if h, err := parseHeld(m.o.Field, l.Annotations[HeldAnnotation]); err == nil {
			others[*s.HolderIdentity] = h
		}
		if a, err := parseHeld(m.o.Field, l.Annotations[AssignedAnnotation]); err == nil {
			claims[*s.HolderIdentity] = a
		}
	}
	if !own {
		// This member's own Lease is gone (deleted by someone, or with its namespace): the
		// list is not the group as the others see it, and a member alone in it would take the
		// whole space. The assignment stays as it is until the Lease is back.
		return nil
	}
	for i := 0; i < len(ignore); i += 2 {
		m.o.Logger.Info("Lease of the shard group left out: a member's Lease is named <group>-<holderIdentity>",
			"lease", m.o.Namespace+"/"+ignore[i], "holderIdentity", ignore[i+1], "group", m.o.Group)
	}
	slices.Sort(live)
	live = slices.Compact(live)
	var assigned informer.Shard // none while leaving
	split := Split(m.o.Field, len(live))
	cover := informer.Shard{Field: m.o.Field}
	for i, id := range live {
		if id == m.o.Identity {
			assigned = split[i]
		} else if h, ok := others[id]; ok {
			cover = cover.Union(intersect(intersect(h, split[i]), claims[id]))
		}
	}

	slices.Sort(otherField)
	m.mu.Lock()
	lapsedChanged := lapsed != m.lapsed
	m.seen, m.ignored, m.lapsed = seen, ignored, lapsed
	fieldsChanged := !slices.Equal(otherField, m.otherField)
	m.otherField = otherField
	membersChanged := !slices.Equal(live, m.members)
	changed := membersChanged || !m.known || !assigned.Equal(m.assigned) || !sameShards(others, m.others) || !cover.Equal(m.cover)
	// The first list may miss replicas started at the same moment: the assignment is known
	// from the second on, one RenewPeriod later, so that replicas started together do not
	// each take, and list, the whole space first.
	m.observed++
	m.members, m.assigned, m.known, m.others, m.cover = live, assigned, m.observed >= 2, others, cover
	var wake chan struct{}
	if changed {
		wake = m.changed
		m.changed = make(chan struct{})
	}
	m.mu.Unlock()
	switch {
	case lapsedChanged && lapsed:
		m.o.Logger.Info("The shard Lease has not been renewed for a LeaseDuration: the group counts this replica out; it hands its range over as the others hold it",
			"lease", m.o.Namespace+"/"+m.leaseName(), "renewed", renewed.Format(time.RFC3339))
	case lapsedChanged:
		m.o.Logger.Info("The shard Lease is renewed again: this replica rejoins the group", "lease", m.o.Namespace+"/"+m.leaseName())
	}
	if membersChanged {
		m.o.Logger.Info("Shard membership changed", "members", live, "assigned", assigned.String())
	}
	if fieldsChanged && len(otherField) > 0 {
		m.o.Logger.Info("Shard group has live members that hash another field; they split their own hash space, and objects are held by both until they are gone",
			"field", string(m.o.Field), "others", otherField)
	}
	if wake != nil {
		close(wake)
	}
	return nil
}

func sameShards(a, b map[string]informer.Shard) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

// formatHeld is the HeldAnnotation form of s: "start-last" pairs in hex, comma-separated.
func formatHeld(s informer.Shard) string {
	parts := make([]string, 0, len(s.Ranges))
	for _, r := range s.Normalize().Ranges {
		parts = append(parts, strconv.FormatUint(r.Start, 16)+"-"+strconv.FormatUint(r.Last, 16))
	}
	return strings.Join(parts, ",")
}

func parseHeld(field informer.ShardField, v string) (informer.Shard, error) {
	s := informer.Shard{Field: field}
	if v == "" {
		return s, nil
	}
	for _, p := range strings.Split(v, ",") {
		a, b, ok := strings.Cut(p, "-")
		if !ok {
			return s, fmt.Errorf("shard: malformed range %q", p)
		}
		start, err1 := strconv.ParseUint(a, 16, 64)
		last, err2 := strconv.ParseUint(b, 16, 64)
		if err := errors.Join(err1, err2); err != nil {
			return s, err
		}
		if start > last {
			return s, fmt.Errorf("shard: range %q ends before it starts", p)
		}
		s.Ranges = append(s.Ranges, informer.ShardRange{Start: start, Last: last})
	}
	return s.Normalize(), nil
}

// stopped is the error of an Informer whose Member's Run has returned.
func (m *Member) stopped() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fmt.Errorf("shard: the Member's Run has returned: %w", m.runErr)
}

// renewedAt is the renewTime of the member's last renewal that succeeded.
func (m *Member) renewedAt() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.renewed
}
