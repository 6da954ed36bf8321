package shard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/mailbox"
)

// InformerOptions configures an Informer.
type InformerOptions struct {
	// Options are passed to every informer.Factory.Informer call (namespace, selectors);
	// the shard is the Informer's to set.
	Options []informer.Option
	// Handler, if set, sees the union of what the replica holds: an object entering the
	// replica's shard as an add, leaving it (a handoff to another replica, or a deletion) as
	// a delete, and changes as updates, each object once even while two informers hold it
	// during a handoff. Calls come from one goroutine, in order. To deliver deletes for
	// objects that leave, the Informer keeps the last version of each object as an
	// informer.Item (shared with the cache in every mode) and decodes it for Handler when it
	// delivers it; an informer.ItemHandlerFuncs[T] gets the Items themselves.
	Handler cache.ResourceEventHandler
	// Poll is how often the Informer re-checks sync states besides the Member's changes.
	// Default 100 ms.
	Poll time.Duration
}

// Informer holds one resource's objects of the Member's shard and follows its
// assignment, make-before-break: when the assignment changes it acquires an informer of
// the new shard from the factory and keeps the old one until the new one is synced and
// the rest of the old shard is held synced by other members (their Leases say so). Only
// then does it release the old informer. So, on a healthy group, every object is held by
// at least one synced replica at every moment; during a handoff an object may be held by
// two replicas (and, within one replica, by two informers: twice the memory of the moving
// part for the time of one sync). A replica that dies leaves its range uncovered until
// its Lease expires and the others have synced it.
type Informer[T informer.Object] struct {
	m    *Member
	f    *informer.Factory[T]
	res  string
	o    InformerOptions
	disp *dispatcher[T]

	mu      sync.Mutex
	pieces  []*piece[T]
	synced  chan struct{} // closed once the assignment's informer is synced
	ended   chan struct{} // closed when Run has returned runErr
	runErr  error
	started bool // Run was called: an Informer runs once

	clusterSaid bool // logged that a cluster-scoped resource all falls in one namespace shard (Run's goroutine)

	beforeList func() // tests: called by List between reading its pieces and listing them
}

// piece is one informer of one shard.
type piece[T informer.Object] struct {
	shard  informer.Shard
	inf    *informer.Informer[T]
	synced bool
	// removed: released, its events ignored from then on (dispatcher.mu). A flag of the
	// piece's own, not a set of the dispatcher's, which would keep every piece ever released,
	// and through it the informer's emptied cache, for as long as the Informer runs.
	removed bool
	// pending (dispatcher.mu), for a piece made while others are held, until it is synced:
	// the last version of each object it delivered that no other piece held. Until then its
	// cache may be behind what the handler was told: a snapshot written when an earlier
	// informer of the range was released, or a list behind the other piece's watch, holding
	// an object whose delete the handler already got. Delivered as adds once it is synced
	// (dispatcher.live), those it still holds; nil: delivered as they come.
	pending map[types.UID]version[T]
}

// NewInformer returns an Informer of resource (what a user types: "pods", "widgets.example.com")
// from f, following m. f must be started; Run does the work. A nil m or f, or an empty
// resource, is an error.
//
// The replica's Lease publishes a range as held only when every Informer made on m holds
// it synced, from NewInformer until its Run returns because its context ended: one whose Run
// starts late delays the handoff rather than let the others drop that resource's range
// first, and one never run, or whose Run failed, keeps the replica from publishing anything
// (the others then keep what they would hand it). Make the Informers of a Member before any of them syncs: one made later finds the
// range the others handed over for the other resources already dropped for its own.
//
// With a Member that hashes namespaces (informer.ShardByNamespace), the objects of a
// cluster-scoped resource all hash the empty namespace: the replica whose range holds that
// hash holds every one of them, the others none (Run logs it once).
func NewInformer[T informer.Object](m *Member, f *informer.Factory[T], resource string, o InformerOptions) (*Informer[T], error) {
	switch {
	case m == nil:
		return nil, fmt.Errorf("%w: NewInformer: nil Member", ErrUninitialized)
	case f == nil:
		return nil, errors.New("shard: NewInformer: nil Factory")
	case resource == "":
		return nil, errors.New("shard: NewInformer: empty resource")
	case m.done == nil:
		return nil, fmt.Errorf("%w: NewInformer: the Member was not made by New", ErrUninitialized)
	}
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	s := &Informer[T]{m: m, f: f, res: resource, o: o, synced: make(chan struct{}), ended: make(chan struct{})}
	if o.Handler != nil {
		s.disp = newDispatcher[T](o.Handler, m.o.Logger)
	}
	// Counted from now, holding nothing: the replica publishes no range as held until this
	// Informer holds it too, even while its Run has not started.
	m.setHeld(s, informer.Shard{Field: m.o.Field})
	return s, nil
}

// ErrRunOnce is returned by a second call of Informer.Run or Member.Run: an Informer runs
// once (its handler's stream ends with the first Run), and so does a Member (its Lease is
// deleted at the end of the first); make new ones to join the group again.
var ErrRunOnce = errors.New("shard: Run called twice")

// ErrUninitialized is returned for a Member that New did not make, or an Informer that
// NewInformer did not make (the zero value, a nil pointer): by Member.Run, Member.Leave,
// NewInformer, Informer.Run, Informer.WaitForSync and Informer.List. Their other methods
// answer zero values: no assignment, nothing held, nothing owned.
var ErrUninitialized = errors.New("shard: zero or nil Member or Informer: make it with New or NewInformer")

// valid reports whether NewInformer made s: the zero Informer and a nil *Informer were not.
func (s *Informer[T]) valid() bool { return s != nil && s.m != nil }

// Run follows the Member's assignment until ctx ends, then releases every informer it
// holds (handlers get no deletes for that). It returns ctx's error, the first error
// acquiring an informer, ErrRunOnce if Run was called before, or an error wrapping
// informer.ErrParked and the server's answer if the informer of the replica's assignment
// parks before it has synced (the resource is forbidden to this replica or not served):
// the replica cannot hold its range, so stop its Member (cancel Member.Run's context) and
// the others take the range over. An informer that parks once synced keeps serving what it
// holds, as unsharded informers do; its Status says so. Run also ends, with an error
// wrapping what Member.Run returned, when the Member's Run returns first: the others take
// the range of a member that stopped, and the Informer does not keep holding it; and with an
// error wrapping informer.ErrShutdown when the factory stops (Shutdown, or the end of its
// Start's context): its caches are empty, and the Lease stops saying that it holds them.
func (s *Informer[T]) Run(ctx context.Context) (err error) {
	if !s.valid() {
		return ErrUninitialized
	}
	s.mu.Lock()
	again := s.started
	s.started = true
	s.mu.Unlock()
	if again {
		return ErrRunOnce
	}
	defer func() {
		s.close(ctx.Err() != nil)
		s.mu.Lock()
		s.runErr = err
		s.mu.Unlock()
		close(s.ended)
	}()
	tick := time.NewTicker(s.o.Poll)
	defer tick.Stop()
	for {
		changed := s.m.Changed()
		if err := s.factoryStopped(); err != nil {
			return err
		}
		if err := s.reconcile(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.m.done:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return s.m.stopped()
		case <-changed:
		case <-tick.C:
		}
	}
}

// close releases what the Informer holds. Stopped by its context (stopped), it no longer
// counts in what the replica publishes; ended by a failure, it counts as holding nothing for
// as long as the Member runs: the replica's other Informers may hold ranges this one does
// not, and the others would drop this resource's objects on their word.
func (s *Informer[T]) close(stopped bool) {
	s.mu.Lock()
	ps := s.pieces
	s.pieces = nil
	s.mu.Unlock()
	for _, p := range ps {
		p.inf.Release()
	}
	if s.disp != nil {
		s.disp.close()
	}
	if stopped {
		s.m.forget(s)
		return
	}
	s.m.setHeld(s, informer.Shard{Field: s.m.o.Field})
}

// factoryStopped returns an error wrapping informer.ErrShutdown if an informer the Informer
// holds has stopped with its factory: it holds nothing any more.
func (s *Informer[T]) factoryStopped() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pieces {
		if p.inf.Status().Phase == informer.PhaseStopped {
			return fmt.Errorf("shard: the informer of %s for %s stopped with its factory: %w", s.res, p.shard, informer.ErrShutdown)
		}
	}
	return nil
}

// reconcile makes one step towards holding exactly the assignment.
func (s *Informer[T]) reconcile(ctx context.Context) error {
	if s.m.handingOver() {
		s.drain()
		return nil
	}
	target, ok := s.m.Assignment()
	if !ok {
		return nil
	}
	s.mu.Lock()
	var cur *piece[T]
	for _, p := range s.pieces {
		if p.shard.Equal(target) {
			cur = p
		}
	}
	s.mu.Unlock()
	if cur == nil {
		opts := append(append([]informer.Option{}, s.o.Options...), informer.WithShard(target))
		inf, err := s.f.Informer(ctx, s.res, opts...)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("shard: informer for %s: %w", target, err)
		}
		if target.Field == informer.ShardByNamespace && !inf.Resource().Namespaced && !s.clusterSaid {
			s.clusterSaid = true
			s.m.o.Logger.Info("The resource is cluster-scoped and the group hashes namespaces: every object hashes the empty namespace, so one replica holds them all",
				"resource", s.res)
		}
		cur = &piece[T]{shard: target.Normalize(), inf: inf}
		s.mu.Lock()
		if s.disp != nil && len(s.pieces) > 0 {
			cur.pending = map[types.UID]version[T]{}
		}
		s.mu.Unlock()
		if s.disp != nil {
			if _, err := inf.AddEventHandler(s.disp.handler(cur)); err != nil {
				inf.Release()
				return err
			}
		}
		s.mu.Lock()
		s.pieces = append(s.pieces, cur)
		s.mu.Unlock()
	}
	// Sync states, then what is held synced, published for the other members.
	held := informer.Shard{Field: target.Field}
	var live []*piece[T]
	s.mu.Lock()
	for _, p := range s.pieces {
		if !p.synced && p.inf.Status().Phase == informer.PhaseSynced && p.inf.HasSynced() {
			p.synced = true
			live = append(live, p)
		}
		if p.synced {
			held = held.Union(p.shard)
		}
	}
	curSynced := cur.synced
	s.mu.Unlock()
	if s.disp != nil {
		for _, p := range live {
			s.disp.live(p)
		}
	}
	s.m.setHeld(s, held)
	if !curSynced {
		if st := cur.inf.Status(); st.Phase == informer.PhaseParked && !cur.inf.HasSynced() {
			cause := st.LastError
			if cause == nil {
				cause = errors.New(string(st.Reason))
			}
			return fmt.Errorf("shard: the informer of %s for %s cannot sync: %w: %w", s.res, target, informer.ErrParked, cause)
		}
		return nil
	}
	s.mu.Lock()
	select {
	case <-s.synced:
	default:
		close(s.synced)
	}
	// Break: drop every other piece whose objects the assignment or other members hold.
	cover := target.Union(s.m.covered())
	var drop []*piece[T]
	kept := s.pieces[:0]
	for _, p := range s.pieces {
		if p != cur && cover.Covers(p.shard) {
			drop = append(drop, p)
			continue
		}
		kept = append(kept, p)
	}
	clear(s.pieces[len(kept):]) // the dropped ones, past the end of kept
	s.pieces = kept
	s.mu.Unlock()
	for _, p := range drop {
		if s.disp != nil {
			s.disp.remove(p)
		}
		p.inf.Release()
	}
	if len(drop) > 0 {
		s.m.setHeld(s, target)
	}
	return nil
}

// drain is reconcile while the Member leaves or is counted out: it releases every piece the
// other members hold synced (and every piece not synced yet, which holds nothing), and
// publishes the rest.
func (s *Informer[T]) drain() {
	cover := s.m.covered()
	held := informer.Shard{Field: s.m.Field()}
	var drop []*piece[T]
	s.mu.Lock()
	kept := s.pieces[:0]
	for _, p := range s.pieces {
		if !p.synced || (len(cover.Ranges) > 0 && cover.Covers(p.shard)) {
			drop = append(drop, p)
			continue
		}
		kept = append(kept, p)
		held = held.Union(p.shard)
	}
	clear(s.pieces[len(kept):]) // the dropped ones, past the end of kept
	s.pieces = kept
	s.mu.Unlock()
	for _, p := range drop {
		if s.disp != nil {
			s.disp.remove(p)
		}
		p.inf.Release()
	}
	s.m.setHeld(s, held)
}

// WaitForSync waits until the informer of the Member's first assignment is synced. It
// returns an error wrapping what Run returned if Run returns first (the resource cannot be
// listed, the Member stopped), or ctx's error if ctx ends first.
func (s *Informer[T]) WaitForSync(ctx context.Context) error {
	if !s.valid() {
		return ErrUninitialized
	}
	select {
	case <-s.synced:
		return nil
	case <-s.ended:
		select {
		case <-s.synced:
			return nil
		default:
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return fmt.Errorf("shard: the Informer's Run returned before it synced: %w", s.runErr)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Held returns what the replica holds synced now: its assignment once settled, the union
// of the old and new shards during a handoff.
func (s *Informer[T]) Held() informer.Shard {
	if !s.valid() {
		return informer.Shard{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var h informer.Shard
	for _, p := range s.pieces {
		if p.synced {
			h = h.Union(p.shard)
		}
	}
	return h
}

// Settled reports whether the replica holds exactly its assignment, synced.
func (s *Informer[T]) Settled() bool {
	if !s.valid() {
		return false
	}
	target, ok := s.m.Assignment()
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pieces) == 1 && s.pieces[0].synced && s.pieces[0].shard.Equal(target)
}

// List returns the objects the replica holds synced, each once (by UID), read-only. An
// informer released by a handoff while List reads it is replaced by what the replica holds
// then: a List during a handoff does not fail, nor miss the objects the replica keeps.
func (s *Informer[T]) List() ([]T, error) {
	if !s.valid() {
		return nil, ErrUninitialized
	}
	listed := map[*piece[T]]bool{}
	var seen map[types.UID]struct{}
	var out []T
	var errs []error
	for {
		ps := s.syncedPieces(listed)
		if len(ps) == 0 {
			return out, errors.Join(errs...)
		}
		if s.beforeList != nil {
			s.beforeList()
		}
		for _, p := range ps {
			listed[p] = true
			objs, err := p.inf.List(nil)
			if errors.Is(err, informer.ErrReleased) {
				continue // dropped meanwhile: the next round reads what holds its objects now
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if seen == nil && out == nil && len(ps) == 1 {
				out = objs // the one informer of a settled replica: no UID appears twice
				continue
			}
			if seen == nil {
				seen = make(map[types.UID]struct{}, len(out)+len(objs))
				for _, o := range out {
					seen[o.GetUID()] = struct{}{}
				}
			}
			for _, o := range objs {
				if _, ok := seen[o.GetUID()]; !ok {
					seen[o.GetUID()] = struct{}{}
					out = append(out, o)
				}
			}
		}
	}
}

// syncedPieces returns the synced pieces not in listed.
func (s *Informer[T]) syncedPieces(listed map[*piece[T]]bool) []*piece[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ps []*piece[T]
	for _, p := range s.pieces {
		if p.synced && !listed[p] {
			ps = append(ps, p)
		}
	}
	return ps
}

// Informers returns the informers the replica holds now (one once settled, two during a
// handoff), for queries; they stay valid until the next handoff releases them (then
// calls fail with informer.ErrReleased), or until the factory stops (informer.ErrShutdown).
func (s *Informer[T]) Informers() []*informer.Informer[T] {
	if !s.valid() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*informer.Informer[T], 0, len(s.pieces))
	for _, p := range s.pieces {
		out = append(out, p.inf)
	}
	return out
}

// dispatcher merges the events of a replica's informers into one stream (see
// InformerOptions.Handler). It receives and keeps Items (informer.ItemHandlerFuncs): views
// of the cached objects, so that what it keeps per object is shared with the cache in every
// mode; a handler of objects gets each decoded when it is delivered, an ItemHandlerFuncs
// the Items themselves.
type dispatcher[T informer.Object] struct {
	mu     sync.Mutex
	objs   map[types.UID]*heldObj[T]
	user   cache.ResourceEventHandler
	items  bool // user is an informer.ItemHandlerFuncs[T]
	logger logr.Logger
	box    *mailbox.Mailbox[func()]
}

// version is one state of an object as the dispatcher keeps it: an informer.Item[T].
type version[T informer.Object] interface {
	Key() string
	UID() types.UID
	ResourceVersion() string
	Object() (T, error)
}

type heldObj[T informer.Object] struct {
	last version[T]
	from *piece[T] // the piece that delivered last
	in   []*piece[T]
}

func newDispatcher[T informer.Object](h cache.ResourceEventHandler, logger logr.Logger) *dispatcher[T] {
	_, items := h.(informer.ItemHandlerFuncs[T])
	if _, ok := h.(*informer.ItemHandlerFuncs[T]); ok {
		items = true
	}
	return &dispatcher[T]{objs: map[types.UID]*heldObj[T]{}, user: h, items: items,
		logger: logger, box: mailbox.New(func(fn func()) { fn() }, mailbox.Options[func()]{})}
}

func (d *dispatcher[T]) close() { d.box.Close() }

func (d *dispatcher[T]) handler(p *piece[T]) cache.ResourceEventHandler {
	return informer.ItemHandlerFuncs[T]{
		AddFunc: func(it informer.Item[T], _ bool) { d.upsert(p, it) },
		UpdateFunc: func(old, it informer.Item[T]) {
			if old.UID() != it.UID() {
				// The name's object was deleted and created again while the informer did not
				// watch (a relist found the new one in its place): the old one is gone.
				d.deleted(p, old, true)
			}
			d.upsert(p, it)
		},
		DeleteFunc: func(it informer.Item[T], unknown bool) { d.deleted(p, it, unknown) },
	}
}

// push queues a call of the user's handler with the forms of vs it takes (Items, or objects
// decoded now, on the mailbox's goroutine): calls happen in order, never under d.mu. A
// version that cannot be decoded is logged and its call skipped.
func (d *dispatcher[T]) push(call func(u cache.ResourceEventHandler, objs ...any), vs ...version[T]) {
	u := d.user
	d.box.Push(func() {
		objs := make([]any, len(vs))
		for k, v := range vs {
			if d.items {
				objs[k] = v
				continue
			}
			o, err := v.Object()
			if err != nil {
				d.logger.Error(err, "Cannot decode an object for the shard handler; event skipped", "key", v.Key())
				return
			}
			objs[k] = o
		}
		call(u, objs...)
	})
}

func (d *dispatcher[T]) upsert(p *piece[T], v version[T]) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.upsertLocked(p, v)
}

func (d *dispatcher[T]) upsertLocked(p *piece[T], v version[T]) {
	if p.removed {
		return
	}
	h := d.objs[v.UID()]
	if h != nil && p.pending != nil {
		delete(p.pending, v.UID())
	}
	if h == nil && p.pending != nil {
		p.pending[v.UID()] = v
		return
	}
	if h == nil {
		d.objs[v.UID()] = &heldObj[T]{last: v, from: p, in: []*piece[T]{p}}
		d.push(func(u cache.ResourceEventHandler, o ...any) { u.OnAdd(o[0], false) }, v)
		return
	}
	if !containsPiece(h.in, p) {
		h.in = append(h.in, p)
	}
	if h.last.ResourceVersion() == v.ResourceVersion() {
		return // the same version through the other informer of a handoff
	}
	if h.from != p && olderVersion(v.ResourceVersion(), h.last.ResourceVersion()) {
		// An earlier version through the informer of a handoff that lags behind the other
		// (its watch has not caught up with the other's list): the handler has seen a later
		// one. The same informer's versions are delivered as they come.
		return
	}
	old := h.last
	h.last, h.from = v, p
	d.push(func(u cache.ResourceEventHandler, o ...any) { u.OnUpdate(o[0], o[1]) }, old, v)
}

// deleted: p no longer holds v's object (deleted, or, with unknown, inferred deleted).
func (d *dispatcher[T]) deleted(p *piece[T], v version[T], unknown bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p.removed {
		return
	}
	if p.pending != nil {
		delete(p.pending, v.UID())
	}
	h := d.objs[v.UID()]
	if h == nil {
		return
	}
	h.in = deletePiece(h.in, p)
	if len(h.in) == 0 {
		delete(d.objs, v.UID())
		key := v.Key()
		d.push(func(u cache.ResourceEventHandler, o ...any) {
			if unknown {
				u.OnDelete(cache.DeletedFinalStateUnknown{Key: key, Obj: o[0]})
				return
			}
			u.OnDelete(o[0])
		}, v)
	}
}

// remove forgets a released piece: objects no other piece holds are deleted.
func (d *dispatcher[T]) remove(p *piece[T]) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p.removed = true
	p.pending = nil
	for uid, h := range d.objs {
		if h.from == p {
			h.from = nil // nothing keeps a released piece, nor its informer
		}
		if !containsPiece(h.in, p) {
			continue
		}
		h.in = deletePiece(h.in, p)
		if len(h.in) == 0 {
			delete(d.objs, uid)
			d.push(func(u cache.ResourceEventHandler, o ...any) { u.OnDelete(o[0]) }, h.last)
		}
	}
}

// live delivers what a piece made during a handoff kept pending, now that it is synced: the
// objects it holds that no other piece held, as adds, and its events as they come from now on.
func (d *dispatcher[T]) live(p *piece[T]) {
	d.mu.Lock()
	defer d.mu.Unlock()
	pending := p.pending
	p.pending = nil
	for _, v := range pending {
		d.upsertLocked(p, v)
	}
}

// olderVersion reports whether resourceVersion a is before b, when both are the API
// server's numbers (they are opaque to clients otherwise: then no order is assumed).
func olderVersion(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x < y
}

func containsPiece[T informer.Object](ps []*piece[T], p *piece[T]) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

func deletePiece[T informer.Object](ps []*piece[T], p *piece[T]) []*piece[T] {
	out := ps[:0]
	for _, q := range ps {
		if q != p {
			out = append(out, q)
		}
	}
	return out
}
