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
//
// crcache uses it, for typed objects, about twice their JSON. kindex's own compact mode does
// not: its handlers are given *unstructured.Unstructured objects, four to five times their
// JSON, and with two handlers on 20,000 Pods sharing them saved 2% of the CPU and a quarter
// of the allocation but held 1.2 KB more heap per Pod as the sync ended and raised the peak
// RSS from 177 to 208 MB (bench/README.md, "Two handlers of decoded objects"): a bad trade
// where memory is the point. Handlers there that want to share should take Items
// (informer.ItemHandlerFuncs) and decode what they read.
package recent
