// Package refs keeps a graph of the references between the objects of a cluster, across
// every resource, custom ones included, current event by event: what an object uses
// (References), what uses it (Referrers), transitively; which references name an object
// that does not exist (Dangling); which objects nothing uses (Unreferenced); which
// selectors select nothing (EmptySelectors). These are the questions people ask before
// they change or delete something, and a kindex cache already holds every object needed to
// answer them.
//
// # Place in kindex
//
// refs sits on the public API only. A Graph (New, Start) watches every resource a filter
// selects through two watch-all sets that follow CRDs as they come and go: a metadata-only
// one (metadataonly) for the resources whose rules read only metadata (most resources:
// they have only owner references), and a compact one (dynamicinformer.NewCompactFactory,
// projected to the fields the rules read) for the others: Pods, workloads, bindings, and
// the custom resources users write rules for. Each set's handler feeds the graph; the graph
// keeps no object, only identities, labels of selected objects and edges.
//
// # Rules are data
//
// Every edge comes from a Rule: a JSONPath expression (kindex's jsonpath, kubectl's
// dialect) evaluated on the objects of one resource, and how its values name targets.
// Three forms cover the built-in rules and custom resources alike:
//
//	// names: each value is the name of a Secret in the object's namespace
//	{Name: "widgets:secret", From: widgets, Path: "{.spec.secretRef.name}", To: secrets, Namespace: refs.NamespaceSame}
//	// object references: each value names its kind (and group) and name
//	// (a value naming no kind or group names an Issuer in the group of To)
//	{Name: "certificates:issuer", From: certificates, Path: "{.spec.issuerRef}",
//	 To: schema.GroupResource{Group: "cert-manager.io"}, KindField: "kind", GroupField: "group", NameField: "name",
//	 DefaultKind: "Issuer"}
//	// label selectors: each value selects Pods in the object's namespace
//	{Name: "services:selector", From: services, Path: "{.spec.selector}", To: pods, Selector: refs.SelectorMap}
//
// A Path that ends at a list ("{.spec.secretNames}") reads its elements, as "[*]" would.
//
// An object reference may also say it is optional (OptionalField: a boolean field of the
// value, true for an optional reference), as Kubernetes lets ConfigMap and Secret volumes,
// projections, env key references and envFrom sources be:
//
//	{Name: "pods:volume-configmap", From: pods, Path: "{.spec.volumes[*].configMap}", To: configmaps,
//	 Namespace: refs.NamespaceSame, NameField: "name", OptionalField: "optional"}
//
// A rule may leave out the objects it does not apply to (Unless: a JSONPath expression and
// the values with which the rule reads nothing). A Service of type ExternalName has no
// endpoints, whatever its selector says, so that it selects no Pod:
//
//	{Name: "services:selector", From: services, Path: "{.spec.selector}", To: pods, Selector: refs.SelectorMap,
//	 Unless: refs.Condition{Path: "{.spec.type}", Values: []string{"ExternalName"}}}
//
// A rule may name its targets after the object that holds the values (NamedAfterSource:
// the target is "<source>-<value>"), as Kubernetes names the claim of a Pod's generic
// ephemeral volume, which no field of the Pod holds:
//
//	{Name: "pods:ephemeral-claim", From: pods, Path: "{.spec.volumes[?(@.ephemeral)].name}",
//	 To: persistentvolumeclaims, Namespace: refs.NamespaceSame, NamedAfterSource: true}
//
// Rules can be kept in files (YAML or JSON) and read with ParseRules, which takes the same
// fields in lower camel case and resources as kubectl names them ("secrets",
// "issuers.cert-manager.io"); the kubectl plugin's `kquery refs --rules FILE` reads them so.
//
// BuiltinRules lists kindex's own, in that form: owner references of every object; Pods'
// and every workload's Pod template's ConfigMaps, Secrets, claims, ServiceAccount, Node,
// PriorityClass, RuntimeClass, image pull Secrets and ephemeral volumes' StorageClasses;
// PVCs to PVs, StorageClasses and VolumeAttributesClasses; PVs to their classes, claim and
// volume Secrets; Ingresses to Services, IngressClasses and TLS Secrets; RBAC bindings to
// roles and ServiceAccount subjects; Services (but ExternalName ones), PodDisruptionBudgets
// and NetworkPolicies to the Pods they select; HPAs to their targets; APIServices and webhooks to their Services;
// and more (see BuiltinRules). A rule's target namespace is the source's, none, or the value's own
// (NamespaceField); NamespaceAuto asks discovery whether the target's resource is
// namespaced, so that a reference to a kind (RoleBinding to Role or ClusterRole, a
// cert-manager issuerRef to an Issuer or a ClusterIssuer) lands where the server would
// look. Kinds resolve to resources through discovery; a reference to a kind no server
// serves waits, Unknown, and resolves when a CRD serving it appears.
//
// # The graph and what each event costs
//
// Per object the graph keeps its outgoing edges, computed from the object's own fields at
// each event, and per target the set of edges to it (the reverse index); a target that is
// referenced and absent is an entry of its own, in a set of missing targets. Per resource it
// keeps a small record (its rules, kind, scope and other names) while the resource is served,
// a rule names it as a target, or an object of it is present or referenced; a CRD deleted
// takes its record with it once its objects are gone and nothing names them, so that CRD
// churn does not grow the graph, and created again it is followed as a new one. An event
// costs time proportional to the object's own edges, never a rescan:
//
//   - add or update: one JSONPath evaluation per rule of the object's resource (on the
//     decoded object handlers receive, or on its JSON bytes: on the bytes for a resource of
//     fewer than four rules, else on the bytes decoded once), then, under the graph's
//     lock, one map lookup per reference and a comparison with the previous edges; only
//     edges that changed touch their targets' reverse sets (O(1) each). An update that
//     changes no reference, a Pod's status say, changes nothing.
//   - delete: the object's edges leave their targets' sets; if others still reference it,
//     the object becomes a missing target (O(1)).
//   - a target appearing (or changing UID): its referrers are checked once against the
//     UID they require (owner references): O(its referrers).
//   - label selectors are kept from both sides. A selector that changes finds its
//     candidates through a per-namespace label index (the objects with the value of its
//     most selective equality or set requirement), then matches each. An object of a
//     selected resource (a Pod) that appears, goes or changes labels is matched against
//     every selector of its namespace that selects its resource, and every cluster-wide
//     one: O(selectors in the namespace), one label match each; its edges to the
//     selectors that stop or start matching are removed or added.
//
// Measured on the benchmark universe (BenchmarkEvent: about 100,000 objects in 100
// namespaces: 60,000 Pods, 6,000 ReplicaSets, 15,000 ConfigMaps, 10,000 Secrets, 2,000
// Services, ...; 650,000 edges), on a shared 2-core machine, in CPU time per event
// (2026-11-30, load average 3.6-4.1, 242 built-in rules, 23 of them for a Pod): a Pod
// update that changes no reference 7 µs, a Pod relabelled out of three selectors and into
// three others 12 µs, a Pod deleted or created 8 µs, a Service switching between two sets
// of 30 Pods 13 µs, a ConfigMap used by twelve objects deleted or recreated 0.7 µs; reading
// a Pod's references from its JSON bytes costs 6-9 µs more: an object held as bytes whose
// resource has four rules or more is decoded once per event (decodeFrom), where each rule
// scanning the bytes cost 25-70 µs more. The graph holds about 1.4 KB per object there
// (about 200 bytes per edge, measured with 186 rules).
// README.md, "References", has the commands and every figure.
//
// # Answers and what they know
//
// An edge's target is Present (cached), Missing (its resource is cached completely where
// the target would be, by a synced informer without selectors, and holds no such object,
// or holds one with another UID than an owner reference requires; or the owner reference
// is a cluster-scoped object's to a namespaced kind, which no object can satisfy) or
// Unknown (the cache cannot tell: the resource is not watched, not synced, parked as
// forbidden, or its kind is not served). Dangling lists the Missing and Unknown references but the optional ones
// (Edge.Optional: a Pod whose optional ConfigMap is absent runs all the same; an object
// naming one target by one rule both optionally and not has one edge, not optional);
// References and Referrers show optional edges with their state. A program acting on
// dangling references (a garbage collector) acts on Missing ones only, after confirming
// with the server, and not on an owner reference from a cluster-scoped object to a
// namespaced kind (its Reason says so): Kubernetes never collects such an object, whose
// owner cannot be found. An optional reference to an object that exists is a use of it
// (Unreferenced).
// Unreferenced, EmptySelectors and Referrers return an *IncompleteError (ErrIncomplete)
// beside the answer while some resource the answer depends on is not cached completely (an
// object of that resource might use one reported), References when the object's own
// resource is not. Every query names resources by their plural, as discovery does: another
// name (a kind, a short name, a typo) is ErrUnknownResource, not an empty answer. Selector
// edges exist only while both ends do and match, so they never dangle.
//
// Queries read the graph under a read lock; References and Referrers cost the edges they
// visit (each object expanded once, so cycles end), Dangling the missing targets' edges,
// Unreferenced and EmptySelectors one look per object of the resource. Tree arranges a
// walk's edges for printing.
//
// # Limits
//
//   - A rule sees what the objects hold: "unreferenced" means no rule names the object.
//     Uses outside the API (a controller's flag naming a ConfigMap, a leader-election
//     lock) need rules or judgement. So do defaults: a Pod spec that names no
//     ServiceAccount runs as its namespace's "default" one, which the ServiceAccount
//     admission plugin writes into each Pod (the Pods have the edge), but a workload
//     template that names none has no edge to it; an Ingress or a claim that names no
//     class (none was the default when it was created) has no edge to today's default.
//   - Namespace selectors (a NetworkPolicy's namespaceSelector, a webhook's) are not
//     followed; a selector of a cluster-scoped object selects in every namespace. A
//     NetworkPolicy's edges are to the Pods its spec.podSelector selects (those it
//     applies to), not to the peers of its ingress and egress rules, whose podSelector
//     selects in the namespaces of the peer's namespaceSelector.
//   - Living in a namespace is no reference to it: Unreferenced of namespaces lists the
//     namespaces no rule names, not the empty ones (an index of namespace, on any
//     informer, answers that).
//   - A rule's JSONPath has jsonpath's default budget: an object on which it yields more
//     than 16,384 values (or does too much work) keeps the references found before that,
//     and the rest are missing; Stats.Truncated counts such objects and each such event
//     is logged.
//   - In compact mode kindex hands handlers decoded objects; the graph's own compact
//     factory projects objects to the fields its rules read, so that each decode is small.
package refs
