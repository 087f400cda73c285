//go:build wasip1 && orrery_stats

package main

import "runtime"

// The orrery_stats build tag adds these exports, which read the module's
// own heap counters, so that a host can measure what a call allocates and
// how often the collector runs inside the module (bindings/go's
// BenchmarkModuleHeap). The modules make wasm ships have none of them.

var memStats runtime.MemStats

//go:wasmexport stats_num_gc
func statsNumGC() int64 { runtime.ReadMemStats(&memStats); return int64(memStats.NumGC) }

//go:wasmexport stats_total_alloc
func statsTotalAlloc() int64 { runtime.ReadMemStats(&memStats); return int64(memStats.TotalAlloc) }

//go:wasmexport stats_mallocs
func statsMallocs() int64 { runtime.ReadMemStats(&memStats); return int64(memStats.Mallocs) }
