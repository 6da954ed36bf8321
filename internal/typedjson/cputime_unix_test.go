//go:build unix

package typedjson

import "syscall"

// cpuTime returns the CPU time the process has used, in nanoseconds, GC workers
// included: on a shared machine it varies less than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
