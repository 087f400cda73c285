//go:build !unix

package timing

import "time"

// ProcessCPU returns 0: this system has no getrusage (a host there checks
// wall time only).
func ProcessCPU() time.Duration { return 0 }
