// Package discovery resolves what users type ("po", "deploy.apps", "Deployment.v1.apps", a
// CRD's short name) to the API resource a server serves, from a local cache of the server's
// discovery documents that it keeps current, and reports resources as they are added,
// changed and removed.
//
// # Place in kindex
//
// discovery is the lowest Kubernetes-aware layer of kindex. The informer core resolves every
// request through it (Resolve, ResolveGVK, ResolveGVR), asks it for the watchable resources
// when a caller watches everything (Resources), and follows its events (Subscribe) to start,
// park and stop informers as CRDs come and go. It builds on client-go: the HTTP discovery,
// including aggregated discovery, is client-go's DiscoveryClient; CRDs and APIServices are
// followed with client-go informers. What is written here is what client-go's memory cache
// and RESTMapper do not do: refresh on a miss (collapsed, negatively cached), follow changes
// per group, report events, keep a failed group's resources as unknown rather than gone, and
// refuse credentials-leaking redirects.
//
// # Resolution
//
// Resolve accepts kubectl's forms and two path-like ones:
//
//	name                 pods, po, pod, Pod, PODS, a CRD's plural, singular, short name or kind, a category
//	name.group           deployments.apps, deploy.apps, Deployment.apps; deploy.app, ing.networking (a
//	                     group given by its start, when no group has that name, as kubectl reads it)
//	name.version.group   deployments.v1.apps, Deployment.v1.apps (tried before name.group, as kubectl does)
//	name.version.        pods.v1., Pod.v1., deployments.v1. (the group left empty, which kubectl
//	                     reads as any group: the name in a group that serves it in that version,
//	                     by the rules below); name. is name (pods.)
//	group/version/name   apps/v1/deployments
//	version/name         v1/pods (the core group); otherwise group/name, as in apps/deployments
//
// Within a group the name is matched in tiers, and the first tier with a match wins: plural
// or singular name, then short names, then kind. Names and kinds match case-insensitively
// (kubectl lower-cases resources, and a singular is the lower-cased kind). ResolveGVR matches
// plural or singular only; ResolveGVK matches the kind exactly, then case-insensitively. An
// empty group in ResolveGVR and ResolveGVK is the core group, never "any group". The result's
// version is the resource's preferred version (the first version, in the group's priority
// order, that serves it: the group's preferred version when it does) unless the input names
// one. Subresources (pods/status) are not resources. Input that fits none of the forms
// (empty, with spaces, "a..b", longer than 1 KB) is a miss at once, without any request, and
// error messages quote at most 256 bytes of what the user typed.
//
// Without a group, the priority rules are:
//
//  1. Built-in groups win. If any built-in resource matches (in any tier), the first one in
//     tier order and then in the server's group order is the answer; the core group comes
//     first, so "events", "event" and "ev" are core events, not events.k8s.io. A group is
//     built-in when it is the core group, has no dot (a CRD group must have one), or ends in
//     .k8s.io or .kubernetes.io (reserved: a CRD there needs an API-review approval). This is
//     kubectl's priority for the common case (its RESTMapper ranks core and the built-in
//     groups above CRD groups) made strict: a CRD can never shadow a built-in name, even with
//     a plural equal to a built-in short name, which kubectl would let win. "pods.other.io"
//     still names a CRD called pods.
//  2. Otherwise, tier by tier: one resource in the first matching tier is the answer; two or
//     more (two CRDs with the same plural, short name or kind in different groups) are an
//     *AmbiguousError listing the candidates, where kubectl would silently pick by group order.
//  3. Last, categories: a category that exactly one resource has resolves to it; with more
//     members (such as "all") it is ambiguous. ResolveCategory expands a category.
//
// # Caching and cost
//
// A Client holds an immutable snapshot that readers load without locking; a resolution from
// the snapshot sends no request. The first call (or Start) discovers everything; against a
// server with aggregated discovery that is exactly two requests, GET /api and GET /apis.
//
// A miss (no match, or an unavailable group) re-discovers everything once and resolves
// again. Concurrent misses of the same input share one re-discovery, and a re-discovery that
// started after the call began counts, so the first call of a typo costs two requests in all.
// A miss that persists is remembered for Options.NegativeCacheTTL (5s): the same typo in a loop
// costs nothing until then. Misses of different names share a budget: five re-discoveries,
// then one a second, so that a caller sending one unknown name after another (a user typing,
// a search box, a script over a list) cannot make the client re-discover everything back to
// back; a miss beyond the budget waits for the full re-discovery in flight, if any, and is
// otherwise answered from the snapshot (which a started client keeps current from its
// watches); it is not remembered. The negative cache is cleared when a resource is added or
// changes or a group fails or recovers, so a new CRD resolves at once. Refresh forces a
// re-discovery, shared with any in flight, and clears the negative cache.
//
// # Following changes
//
// Start watches CustomResourceDefinitions and APIServices (as protobuf, with CRD schemas
// dropped from the cache). A watch event only marks the affected group and records what the
// discovery documents should then show ("this CRD's plural is served in exactly its served
// versions", "this aggregated API's version answers"; of a local APIService, served by the
// apiserver itself, only that its version is not failed: whether it is listed is for the
// CRDs to say, since the aggregator marks a CRD group's APIService Available before the CRD
// is Established); if the snapshot already shows it, nothing is sent. Otherwise one worker
// re-discovers the marked groups with the per-group endpoints (GET /apis/<group> and GET
// /apis/<group>/<version>), in batches (more than four groups, or the
// core group, make it a full round instead), and repeats with backoff (50ms doubling to 5s)
// until the expectation holds: the apiserver updates its discovery documents a few
// milliseconds after the object changes. A new CRD is resolvable about 20ms after it is
// created; a deleted one stops resolving about 150ms after the delete call (its finalizer
// runs first). An expectation that still does not hold after 30 seconds (logged once) does
// not end the re-discovery: the group is then re-discovered every Options.RefreshInterval
// (30s) until it holds or the object changes again. Every round applies what the server
// says, so the group's resources are never more than one interval behind the server; the
// cost is one per-group round (1 + one per version requests) per interval while it lasts.
//
// While a watch is down (the apiserver restarting, and client-go's backoff between attempts
// to open it again, which grows to 30s and, with jitter, up to about a minute over repeated
// failures), no event reports a CRD created or deleted meanwhile. The client then
// re-discovers everything every RefreshInterval, as when the watch is refused, and
// Following reports false, so that informers parked on a missing resource ask the server
// afresh on their re-check timer (RecheckGVR) instead of trusting the cache. Once the watch
// opens again, its list reports what changed meanwhile.
//
// The aggregated document lags the per-group endpoints (an aggregated API server is fetched
// asynchronously), so a full round can show a group as it was before a change the watch has
// confirmed. For 30 seconds after an expectation is met, a full round that contradicts it
// keeps the confirmed state of that group and schedules a per-group round, whose answer is
// applied as is; events therefore do not flap. A round that read the aggregated document
// just before it was rebuilt, with no watch event after it, would show a deleted CRD until
// the next resync: RecheckGVR, which the informers call when the server answers 404 for a
// resource the cache still shows, corrects that from the group's own endpoints.
//
// Where the credentials may not list or watch CRDs or APIServices (403), or the server does
// not serve them, the informer is stopped instead of retrying forever, and the client
// re-discovers everything every Options.RefreshInterval (30s), probing each time whether
// watching has become possible. Every authenticated user may read the discovery endpoints,
// so resolution works for any user. A full re-discovery also runs every
// Options.ResyncInterval (10m) as a safety net.
//
// # Events
//
// Subscribe delivers Added, Removed and Changed events keyed by group and resource: a new
// preferred version (a CRD that now serves v2) is Changed, with the old description in Old,
// also when one update retires the old version: the apiserver's documents show for a moment
// neither version, and a round that finds a resource served at no version while a watched
// change of its group is not reflected yet keeps the group as it was until it is (30 s at
// most), rather than report a removal and an addition.
// Each subscription has its own goroutine; events arrive in the order the changes were
// applied, after the snapshot reflects them, and never under a lock of the client. A
// subscription made before Start sees the first discovery as Added events; one made later
// sees changes only, so a consumer that wants a consistent picture subscribes first, then
// calls Resources, and treats an Added for a resource it knows as a no-op.
//
// # Partial failure
//
// When the discovery of a group fails (an aggregated API server that is down is reported by
// the server as a stale group version, which client-go returns as ErrGroupDiscoveryFailed; a
// per-group request answered with an error status), the group is unavailable, not gone:
//
//   - the other groups resolve normally;
//   - resources the client knew in that group are kept as their last known description and
//     never reported Removed; Resolve of them, and of anything qualified with that group, is a
//     *GroupUnavailableError (errors.Is(err, ErrGroupUnavailable)) carrying the last known
//     description and the server's error, so callers can tell "unknown until the group
//     recovers" from "does not exist" (meta.IsNoMatchError);
//   - an unqualified name that matches nothing is a plain miss, even if a failed group might
//     serve it, so that one broken aggregated API does not turn every typo into "unavailable";
//   - Resources and ResolveCategory return what is known together with a
//     *PartialDiscoveryError naming the failed groups;
//   - when the group recovers, resources that are really gone are reported Removed then;
//   - no event reports the failure or the recovery: each is logged once (Options.Logger), with
//     the group's name and, for a failure, the server's error.
//
// A network error (as opposed to an error status from the server) fails the whole round
// instead and changes nothing, so a blip never marks groups unavailable.
//
// # Security
//
// The client's HTTP client refuses a redirect to another scheme, host or port: client-go's
// own clients follow redirects and add the bearer token to the redirected request, which
// would send it to whatever host the redirect names.
//
// # Lifecycle
//
// New sends nothing. Start returns after the first discovery and follows changes until its
// context ends; Wait then waits for every goroutine Start created. A Client that is never
// started still resolves, discovering on first use and on misses only. Returned Resources
// are copies the caller may modify. Every method that takes a context refuses a nil one with
// ErrNilContext. A Client that New did not make (the zero Client, a nil *Client) returns
// ErrUninitialized.
package discovery
