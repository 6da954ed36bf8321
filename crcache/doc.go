// Package crcache is a controller-runtime cache backed by kindex.
package crcache
