//go:build linux

package kernels

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time the calling OS thread has used, so that
// benchmarks on a shared machine can report work per CPU-second alongside
// work per wall-clock second.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
