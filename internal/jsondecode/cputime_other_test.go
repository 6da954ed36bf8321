//go:build !unix

package jsondecode

// cpuTime is not measured here.
func cpuTime() int64 { return -1 }
