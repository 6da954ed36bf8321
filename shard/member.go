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
	"sync"
	"time"

	"github.com/go-logr/logr"
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
	// LeaseDuration/3; at least 100 ms and at most LeaseDuration/2: a renewal that comes
	// later than LeaseDuration after the previous one (a period close to the duration, plus
	// a few milliseconds of scheduling and latency) lets the others count the member out
	// and in again, and the whole group hands its ranges over twice.
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

	instance  string                 // InstanceAnnotation's value: this Member's, random
	holding   bool                   // this Run created or renewed the Lease as instance
	renewed   time.Time              // the renewTime of its last renewal that succeeded
	gone      bool                   // the Lease was found deleted (logged once) and is not back yet
	lapsed    bool                   // the Lease is expired: not renewed for a LeaseDuration
	recovered time.Time              // when the first list after a LeaseDuration without one started
	waiting   *foreignLease          // the live Lease of another instance this member waits for
	seen      map[string]seenRenewal // the renewTime of each Lease of the group, and when it was first seen
	ignored   map[string]bool        // Leases of the group that are not a member's, logged once
	done      chan struct{}          // closed when Run returns
}

// seenRenewal is a Lease's renewTime and when this member first saw it (its clock).
type seenRenewal struct {
	renew, at time.Time
	listed    time.Time // when the last list that showed the Lease started
	after     time.Time // when the last list that showed an earlier renewTime started, or zero
	live      bool      // not expired when last listed
}

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
	if o.RenewPeriod < minRenewPeriod || o.RenewPeriod > o.LeaseDuration/2 {
		return nil, fmt.Errorf("shard: RenewPeriod %v must be at least %v and at most half of LeaseDuration %v", o.RenewPeriod, minRenewPeriod, o.LeaseDuration)
	}
	instance := make([]byte, 8)
	if _, err := rand.Read(instance); err != nil {
		return nil, fmt.Errorf("shard: instance identifier: %w", err)
	}
	return &Member{o: o, changed: make(chan struct{}), kick: make(chan struct{}, 1), others: map[string]informer.Shard{},
		held: map[any]informer.Shard{}, instance: hex.EncodeToString(instance), done: make(chan struct{})}, nil
}

// Identity is Options.Identity.
func (m *Member) Identity() string {
	if m == nil {
		return ""
	}
	return m.o.Identity
}

// Field is what the group hashes.
func (m *Member) Field() informer.ShardField {
	if m == nil {
		return ""
	}
	return m.o.Field
}

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
	if m == nil {
		return informer.Shard{}, false
	}
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
	if m == nil {
		return fmt.Errorf("%w: Member.Leave of a nil Member", ErrUninitialized)
	}
	m.mu.Lock()
	m.leaving = true
	m.mu.Unlock()
	m.kickRenew()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		m.mu.Lock()
		// Nothing held by any Informer (what the Lease publishes is what all of them hold, and
		// is empty while one of them holds nothing), and the others know it: they leave the
		// member out of the split, or it keeps no Lease (Run has not started, has ended, or
		// waits for another instance's).
		left := m.holdsNothing() && (!m.holding || m.known && m.assigned.IsZero())
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
	if m == nil {
		return false
	}
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
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.known && !m.leaving && !m.assigned.IsZero() && m.assigned.Matches(value)
}

// Members returns the live identities of the group, sorted, as this member last saw them.
func (m *Member) Members() []string {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.members)
}

// Changed returns a channel closed at the next change of the assignment or of what the
// other members hold.
func (m *Member) Changed() <-chan struct{} {
	if m == nil {
		return nil
	}
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

// holdsNothing reports whether no Informer of the replica holds anything synced. Called with
// m.mu held.
func (m *Member) holdsNothing() bool {
	for _, s := range m.held {
		if len(s.Ranges) > 0 {
			return false
		}
	}
	return true
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
	if m == nil {
		return informer.Shard{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u := informer.Shard{Field: m.o.Field}
	for _, s := range m.others {
		u = u.Union(s)
	}
	return u
}

func (m *Member) leaseName() string { return m.o.Group + "-" + m.o.Identity }
