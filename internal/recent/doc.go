// Package recent keeps the objects decoded last from a compact store, by key and
// resourceVersion, so that the several consumers of one informer's events (its handlers,
// and in crcache its index functions) decode each version of an object once and share it,
// as client-go's and controller-runtime's informers hand their one stored object to all of
// them. The compact store holds bytes, so each consumer would otherwise decode the object
// again: a Pod type with three IndexField indexes and two controllers watching it decoded
// every Pod five times during the initial sync, for 2.4x controller-runtime's client CPU
// (crcache/README.md, "Controllers").
//
// The index functions of one object run one after the other, and handlers, fed the same
// events on goroutines of their own, are seldom more than a few hundred events apart: with
// 128 objects kept, the two handlers of that benchmark shared an object in 6% of the
// initial adds; with 1,024 (Cap), in all of them. What is kept is bounded in number and in
// bytes (Bytes of JSON) and dropped a second (Idle) after the last decode, so that an idle
// cache holds only bytes; a consumer further behind decodes again. Objects shared this way
// must not be modified, as the objects of client-go's informers must not be.
package recent
