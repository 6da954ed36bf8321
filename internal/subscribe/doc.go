// Package subscribe orders a discovery subscription against the list taken after it.
//
// Subscribers of discovery subscribe first and then list what is served, so that nothing
// served between the two is missed. The list is not necessarily newer than the events
// delivered while it is applied: a resource listed at v1 may be reported Changed to v2 or
// Removed before the loop over the list reaches it, and applying the stale entry then would
// undo the event for good (no later event corrects it). A Guard makes the two meet: events
// mark what they touch, and an entry of the list is applied only if no event touched its
// resource, atomically with that check. Events are deltas delivered in order, so a resource
// an event touched ends in its current state through events alone.
package subscribe
