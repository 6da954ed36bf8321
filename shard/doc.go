// Package shard lets N replicas of a program split a resource's objects between them, on
// the API server's terms: the hash ranges of ListOptions.ShardSelector (Kubernetes 1.36+,
// feature gate ShardedListAndWatch; kindex filters itself where the server does not, see
// informer.Shard) and membership by coordination.k8s.io Leases.
//
// A Member keeps its replica's Lease "<Group>-<Identity>" in a namespace, renewing it every
// RenewPeriod, and lists the group's Leases as often. The live members are those whose
// Lease has not expired (renewTime + leaseDurationSeconds after now, on this replica's
// clock; a renewTime ahead of that clock counts as a renewal when this replica first sees
// it, so a Lease nobody renews expires one duration later whatever its renewTime says; a
// renewTime that changed between two of this replica's lists counts as a renewal after the
// first of them, so a replica whose clock is behind stays live while it renews; a duration
// counts for an hour at most, or this member's LeaseDuration if longer). Only a Lease named
// "<Group>-<holderIdentity>" is a member's: others with the group's label (written by hand,
// say) are left out and logged. The assignment is a function
// of the sorted live identities alone, so every member that sees the same Leases computes
// the same one: the hash space [0, 2^64) split into N equal contiguous ranges, the i-th
// to the i-th identity (Split). A member takes its first assignment from its second list of
// Leases, one RenewPeriod after Run starts, so that replicas started together do not each
// take (and list) the whole space first. A replica being stopped should call Member.Leave
// first (examples/sharded does on SIGTERM): its Lease is
// marked leaving, the others take its range into their assignment, and it releases what
// it holds as they hold it synced (make-before-break again); then Run's end deletes the
// Lease. A member stopped without Leave deletes its Lease, and its range is uncovered
// until the others have synced it; one that dies keeps its range until its Lease expires.
// One whose renewals fail for a LeaseDuration (its RBAC revoked, say) counts itself out as
// the others do, says so, and releases its range as they hold it synced; it rejoins once a
// renewal succeeds. One whose lists of Leases fail for a LeaseDuration (the others may have
// split the space anew since: a member died, say) stops renewing its Lease, so that the
// others count it out and take its range as well, keeps what it holds, and renews again once
// it sees the group; the Leases it last saw live count from that moment, so that members
// coming back from an outage of the API server do not each take the whole space (and list
// it) before the others have renewed; a member that merely did not list for that long (its
// process paused) judges the Leases by their renewTimes as usual, so that one whose holder
// died meanwhile is not counted live again. A member whose own Lease is missing from the list (deleted by someone,
// and created again at the next renewal; or gone with its namespace) keeps its assignment
// until the Lease is back, rather than take the whole space as if it were alone; unless the
// Lease cannot be created again for a LeaseDuration (its RBAC) while other members are live:
// then it counts itself out as they do, as for any renewal that fails that long.
//
// An Informer holds one resource's objects of the assignment and follows it,
// make-before-break: on a change it acquires an informer of the new range (a separate
// informer of the factory, with informer.WithShard) while keeping the old one, waits for it
// to sync, publishes what it holds synced in its Lease (HeldAnnotation), and releases the
// old informer only when the part of the old range it gives up is held synced by other
// members, as their Leases say, each within its own assignment (as this member computes it,
// and as the other publishes it in AssignedAnnotation): a member never counts on a leaving
// member, or on what another still holds of an earlier assignment, since that other may
// be counting on it for the same range at the same moment, even while their views of the
// group differ. So on a healthy group every object is held by at least one
// synced replica at every moment, and by exactly one once the handoff is over. With several
// Informers on one Member (several resources), the Lease publishes the ranges every one of
// them holds synced. The window
// where an object is held twice is one sync of the new range plus a RenewPeriod.
//
// Members that hash another field than this member's (Options.Field; FieldAnnotation says
// each member's) split their own hash space: during a rolling change of Field, each object
// is held by a member of each field, twice for a while, never by none, and a member logs
// that others of another field are live.
//
// Why two informers during a handoff rather than one informer whose range is widened and
// narrowed: a kindex informer's list and watch are fixed by its key (resource, namespace,
// selectors, shard), which makes sharing and release exact; a new range is a new list and
// watch anyway (the server filters by it), and releasing the old informer frees its cache
// at once. The cost is that the objects both ranges share are held twice for one sync.
//
// Failures are loud rather than silent gaps: Member.Run fails if its first renewal or list
// of Leases does (a member that cannot see the others would be given a range and never
// take it), and Informer.Run fails if the informer of its assignment parks before it has
// synced (a resource this replica may not list); stop the Member then, and the others
// take its range over. An Informer ends when its Member's Run does.
//
// Identities must be unique in a group. A Lease is kept by one instance (InstanceAnnotation):
// a replica started with the identity of a live one waits for that one's Lease to expire,
// fails with ErrIdentityInUse as soon as it sees it renewed, and leaves it alone; a replica
// restarted under the name of one that died takes the Lease over once it expires. A member
// deletes its Lease only while it is its own.
//
// Handlers (InformerOptions.Handler) see the union: an object that enters the replica's
// shard arrives as an add, one that leaves it (handed to another replica) as a delete, as
// if it had been created and deleted; Member.Owns says whether a UID is the replica's
// own under the current assignment. The objects that the informer of a new range delivers
// before it is synced, and that no other informer of the replica holds, reach the handler
// once it is synced, those it still holds then: its cache may start behind what the handler
// was told (a snapshot written when an earlier informer of the range was released, a list
// behind the other informer's watch), and an object deleted since must not come back. The Informer keeps each object's last version as an
// informer.Item, a view of the cache, and decodes it for the handler when delivering it (an
// informer.ItemHandlerFuncs gets the Items): in the compact mode a handler no longer costs a
// decoded copy of every object held. Measured on 2,000 ConfigMaps of 2 KB
// (BenchmarkHandlerHeap, `go test -run '^$' -bench HandlerHeap -benchtime 3x -count 2
// ./shard/`, 2026-11-27): the handler keeps 230-310 bytes per object, where the decoded
// copies kept 3.5 KB, as much as the compact cache itself (3.6-4.6 KB per object, the
// process's baseline included). A query across shards (a count, a "who owns x") needs
// every replica's answer: ask each, or merge their published results; no replica sees the
// others' objects.
package shard
