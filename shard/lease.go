package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kindex/kindex/informer"
)

// The member's loop: keeping its own Lease (renew) and reading the group's (observe).

// Run keeps the Lease until ctx ends, then deletes it so that the others take the range
// over at once (a replica that dies without deleting it keeps its range until the Lease
// expires). It returns ctx's error, or an error if the first renewal or the first list of
// the group's Leases fails for a reason other than ctx: a replica that can hold a Lease but
// cannot see the others' would be given a range by them and never take it, so it deletes
// its Lease and stops instead. Later failures are logged (the first of a run of them at
// level 0) and retried every RenewPeriod; a member whose lists fail for a LeaseDuration stops
// renewing its Lease until one succeeds (see the package doc).
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
	if m == nil || m.done == nil {
		return fmt.Errorf("%w: Member.Run: the Member was not made by New", ErrUninitialized)
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
	first := true        // until the first renewal and list succeed
	var listed time.Time // when a list of the group's Leases last succeeded
	blindSaid := false   // the lists' failure for a LeaseDuration was logged
	// A list of the group's Leases failed since the last that succeeded. A member that has
	// not listed for a LeaseDuration without a list failing (its process was paused) saw the
	// others renew as usual: their renewTimes say who is live, and a Lease nobody renewed
	// meanwhile is expired, not counted again from this member's first list.
	listFailed := false
	for {
		// A member that has not seen the group for a LeaseDuration follows an assignment the
		// others no longer compute: after a member died, the range it had is nobody's, as the
		// others give it to this one, which never takes it. It stops renewing its Lease, so
		// that they count it out and split the space without it, and keeps what it holds
		// until a list succeeds again; then it renews before it looks at the group, as usual.
		var err error
		blind := !listed.IsZero() && time.Since(listed) >= m.o.LeaseDuration
		if blind {
			probed := time.Now()
			if _, lerr := m.listLeases(ctx); lerr == nil {
				blind = false
				if listFailed {
					m.mu.Lock()
					m.recovered = probed
					m.mu.Unlock()
				}
				listFailed = false
			} else {
				listFailed = true
				err = fmt.Errorf("shard: list the Leases of group %q in %s: %w", m.o.Group, m.o.Namespace, lerr)
				if !blindSaid {
					blindSaid = true
					m.o.Logger.Info("Cannot list the shard group's Leases for a LeaseDuration: this replica stops renewing its Lease, so that the others count it out and take its range over, and keeps what it holds until it sees the group again",
						"lease", m.o.Namespace+"/"+m.leaseName())
				}
			}
		}
		if !blind {
			err = m.renew(ctx)
		}
		waiting := errors.Is(err, errWaiting)
		switch {
		case waiting, blind:
		case errors.Is(err, ErrIdentityInUse):
			return err
		case err != nil:
			err = fmt.Errorf("shard: renew Lease %s/%s: %w", m.o.Namespace, m.leaseName(), err)
		}
		// The group is listed after a failed renewal too (not the first: Run fails then): the
		// others count this member out once its Lease expires, and so must it.
		if !waiting && !blind && (err == nil || !first) {
			if lerr := m.observe(ctx); lerr != nil {
				listFailed = true
				err = errors.Join(err, fmt.Errorf("shard: list the Leases of group %q in %s: %w", m.o.Group, m.o.Namespace, lerr))
			} else {
				listed, blindSaid, listFailed = time.Now(), false, false
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

// renew keeps the member's Lease: created if it has none, updated otherwise. A conflict (the
// Lease changed or was deleted between the read and the write: the API server answers an
// update of a deleted object with a failed UID precondition, a conflict too) is not a
// failure to report: the Lease is read again at once, at most twice, and what that read
// finds decides (another instance's Lease, one to create, a reason it cannot be created).
func (m *Member) renew(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		err := m.renewOnce(ctx)
		if !apierrors.IsConflict(err) || attempt == 2 || ctx.Err() != nil {
			return err
		}
	}
}

func (m *Member) renewOnce(ctx context.Context) error {
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
// its own or nobody's (expired and seen unrenewed for a RenewPeriod at least, or without an
// instance, as one written by hand); errWaiting
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
		if exp := m.expiry(l.Spec.RenewTime, l.Spec.LeaseDurationSeconds, now, time.Time{}); exp.After(now) {
			wait = []any{"lease", name, "instance", inst, "holder", holder, "group", group, "expires", exp.Format(time.RFC3339)}
		}
		// Even if it looks expired: its renewTime may be behind this replica's clock (the other
		// instance's clock is late). The next renewal, a RenewPeriod later, takes it over if
		// nobody renewed it meanwhile.
		return errWaiting
	} else if !renew.Equal(w.renew) {
		why := "identities must be unique in a group"
		if group != m.o.Group || holder != m.o.Identity {
			// "a" + "b-c" and "a-b" + "c" name the same Lease.
			why = fmt.Sprintf("group %q with identity %q names the same Lease as this member's group %q with identity %q: choose names whose %q does not meet",
				group, holder, m.o.Group, m.o.Identity, "<group>-<identity>")
		}
		return fmt.Errorf("%w: Lease %s is renewed by instance %s (holder %q, group %q): %s",
			ErrIdentityInUse, name, inst, holder, group, why)
	}
	if m.expiry(l.Spec.RenewTime, l.Spec.LeaseDurationSeconds, w.seen, time.Time{}).After(now) {
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
// maxCountedLease (or this member's LeaseDuration, if longer). after, if not zero, is a
// moment (this replica's clock) the renewal is known to have followed, a list that showed an
// earlier renewTime having started then: the duration counts from it at the earliest, so
// that a renewTime behind this replica's clock (the holder's clock is late) does not make a
// Lease that is being renewed look expired. The zero time for a Lease without a renewTime or
// a duration.
func (m *Member) expiry(renew *metav1.MicroTime, secs *int32, seen, after time.Time) time.Time {
	if renew == nil || secs == nil || *secs <= 0 {
		return time.Time{}
	}
	d := min(time.Duration(*secs)*time.Second, max(maxCountedLease, m.o.LeaseDuration))
	from := renew.Time
	if seen.Before(from) {
		from = seen
	}
	if after.After(from) {
		from = after
	}
	return from.Add(d)
}

// listLeases lists the group's Leases.
func (m *Member) listLeases(ctx context.Context) (*coordinationv1.LeaseList, error) {
	return m.o.Client.CoordinationV1().Leases(m.o.Namespace).List(ctx,
		metav1.ListOptions{LabelSelector: GroupLabel + "=" + m.o.Group})
}

// observe lists the group's Leases and recomputes the membership and assignment.
func (m *Member) observe(ctx context.Context) error {
	start := time.Now() // the list reads the Leases after this
	list, err := m.listLeases(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	m.mu.Lock()
	leaving, prevSeen, prevIgnored := m.leaving, m.seen, m.ignored // only observe writes the last two
	recovered := m.recovered
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
		r := seenRenewal{renew: s.RenewTime.Time, at: now, listed: start}
		if prev, ok := prevSeen[l.Name]; ok {
			if prev.renew.Equal(r.renew) {
				r.at, r.after = prev.at, prev.after
			} else {
				r.after = prev.listed // renewed since that list: alive, whatever its clock
			}
			if prev.live && recovered.After(r.after) {
				// Live when this member last saw it, before a LeaseDuration in which this
				// member could not list (an outage of the API server, say): the others come
				// back at their own pace, and their renewals could not be seen meanwhile. It
				// counts from the moment this member sees the group again, so that this
				// member does not take the whole space, and list it, before they renew.
				r.after = recovered
			}
		}
		r.live = m.expiry(s.RenewTime, s.LeaseDurationSeconds, r.at, r.after).After(now)
		seen[l.Name] = r
		if !r.live {
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
	if !own && !(lapsed && len(live) > 0) {
		// This member's own Lease is gone (deleted by someone, or with its namespace): the
		// list is not the group as the others see it, and a member alone in it would take the
		// whole space. The assignment stays as it is until the Lease is back, unless it has
		// not been renewed for a LeaseDuration (it cannot be created again: RBAC) while other
		// members are live: they count this member out, and so does it (live holds only them).
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
