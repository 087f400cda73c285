//go:build linux

package bench

import (
	"syscall"
	"time"
	"unsafe"
)

// clock_gettime clock ids (linux/time.h).
const (
	clockProcessCPU = 2 // CLOCK_PROCESS_CPUTIME_ID
	clockThreadCPU  = 3 // CLOCK_THREAD_CPUTIME_ID
)

func cpuClock(id uintptr) time.Duration {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// ProcessCPU returns the CPU time every thread of the process has used
// (user and system). It is what a computation costs, whatever else the
// machine runs; it includes the garbage collector's work.
func ProcessCPU() time.Duration { return cpuClock(clockProcessCPU) }

// ThreadCPU returns the CPU time the calling OS thread has used; call it
// between runtime.LockOSThread and UnlockOSThread.
func ThreadCPU() time.Duration { return cpuClock(clockThreadCPU) }

// HasCPUClock reports whether ProcessCPU and ThreadCPU measure CPU time (on
// other systems they return 0 and figures fall back to wall time).
const HasCPUClock = true
