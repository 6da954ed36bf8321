// Package storage is the contract between kindex's informer core (package informer) and its
// storage modes: what a mode lists and watches (Target), how it is configured (Config) and
// what it must do (Mode). The dynamic mode on client-go's dynamic client and the metadata
// mode live here, the latter with a client of its own (metadata_client.go: client-go's
// metadata requests, decoded without managedFields and without copies); the compact and
// kindex-unstructured modes live in internal/compact. Users never see this
// package: they pick a mode through a front end's constructor (dynamicinformer,
// metadataonly).
package storage
