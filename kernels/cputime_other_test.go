//go:build !linux

package kernels

import "time"

// threadCPU is not measured here; benchmarks report wall-clock rates only.
func threadCPU() time.Duration { return 0 }
