//go:build !unix

package typedjson

// cpuTime is not measured here.
func cpuTime() int64 { return -1 }
