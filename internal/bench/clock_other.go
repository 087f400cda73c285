//go:build !linux

package bench

import "time"

// ProcessCPU returns 0: this system's CPU clocks are not wired up, and
// figures fall back to wall time.
func ProcessCPU() time.Duration { return 0 }

// ThreadCPU returns 0; see [ProcessCPU].
func ThreadCPU() time.Duration { return 0 }

// HasCPUClock reports whether ProcessCPU and ThreadCPU measure CPU time.
const HasCPUClock = false
