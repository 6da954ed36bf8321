// Package storage is the contract between kindex's informer core (package informer) and its
// storage modes: what a mode lists and watches (Target), how it is configured (Config) and
// what it must do (Mode). The dynamic and metadata modes on client-go's clients live here;
// the compact and kindex-unstructured modes live in internal/compact. Users never see this
// package: they pick a mode through a front end's constructor (dynamicinformer,
// metadataonly).
package storage
