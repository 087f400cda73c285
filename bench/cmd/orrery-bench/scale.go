package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/internal/bench"
	"github.com/orrery/orrery/internal/bench/cassini"
)

// scaleWorkerArg runs the program as a ranking-at-scale worker: one
// process per fabric, so that its peak memory is that fabric's alone.
const scaleWorkerArg = "scale-worker"

// scaleGPUs is the GPUs per server of the growth benchmark's fabrics, and
// scaleJobsPer the running jobs per server: 3000 jobs on 12,500 servers.
const (
	scaleGPUs    = 8
	scaleJobsPer = 3000.0 / 12500
)

// ScaleRow is the ranking of one fabric of the growth benchmark.
type ScaleRow struct {
	Servers  int `json:"servers"`
	GPUs     int `json:"gpus"`
	Jobs     int `json:"jobs"`
	Links    int `json:"directed_links"`
	Shared   int `json:"shared_links"` // over all candidates
	Searches int `json:"searches"`
	Fit      int `json:"fit"` // of the searches, answered without one: the jobs' summed peaks fit the link
	Kept     int `json:"kept"`
	// BuildCPU is the fabric's and the candidates' construction (topology,
	// routes, rings), in CPU seconds.
	BuildCPU float64     `json:"build_cpu_seconds"`
	RankCPU  bench.Stats `json:"rank_cpu_seconds_1_worker"`
	// BuildPeak is the process's peak resident memory after building,
	// RankPeak its peak while ranking (the instance included), in bytes.
	BuildPeak int64 `json:"build_peak_rss_bytes"`
	RankPeak  int64 `json:"rank_peak_rss_bytes"`
}

// scaleWorker builds the growth benchmark's instance on os.Args[2] servers,
// ranks it os.Args[3] times and prints a ScaleRow.
func scaleWorker() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "scale worker:", err)
		return 1
	}
	if len(os.Args) != 4 {
		return fail(fmt.Errorf("want %s SERVERS ROUNDS", scaleWorkerArg))
	}
	servers, err1 := strconv.Atoi(os.Args[2])
	rounds, err2 := strconv.Atoi(os.Args[3])
	if err1 != nil || err2 != nil || rounds < 1 {
		return fail(fmt.Errorf("bad arguments %q", os.Args[2:]))
	}
	spec, err := cassini.ScaleSpec(servers)
	if err != nil {
		return fail(err)
	}
	c0 := bench.ProcessCPU()
	in, err := cassini.Clos(rand.New(rand.NewPCG(1, 2)), cassini.ClosConfig{Spec: spec, GPUsPerServer: scaleGPUs,
		Jobs: max(1, int(scaleJobsPer*float64(servers))), Candidates: 10})
	if err != nil {
		return fail(err)
	}
	row := ScaleRow{Servers: servers, GPUs: servers * scaleGPUs, Jobs: len(in.Jobs), Links: len(in.Links),
		BuildCPU: (bench.ProcessCPU() - c0).Seconds(), BuildPeak: peakRSS()}
	resetPeakRSS()
	var ws candidate.Workspace
	opt := candidate.Options{Link: link.Options{Circle: circle.Options{Round: true}}, Workers: 1}
	var times []float64
	for range rounds {
		runtime.GC()
		c0 := bench.ProcessCPU()
		r, err := ws.Rank(context.Background(), in.Jobs, in.Links, in.Candidates, opt)
		if err != nil {
			return fail(err)
		}
		times = append(times, (bench.ProcessCPU() - c0).Seconds())
		row.Searches, row.Fit, row.Kept, row.Shared = r.Searches, r.Fit, len(r.Order), 0
		for _, o := range r.Outcomes {
			row.Shared += len(o.Links)
		}
	}
	row.RankCPU = bench.Summarize(times)
	row.RankPeak = peakRSS()
	json.NewEncoder(os.Stdout).Encode(row)
	return 0
}

// peakRSS is the process's peak resident set (VmHWM), in bytes, or -1.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return -1
}

// resetPeakRSS starts the peak resident set afresh from the current one
// (Linux: "5" to /proc/self/clear_refs), after returning freed memory to
// the system.
func resetPeakRSS() {
	debug.FreeOSMemory()
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// scaleSizes are the growth benchmark's fabrics, in servers.
func scaleSizes(smoke bool) []int {
	if smoke {
		return []int{100, 1000}
	}
	return []int{100, 500, 1000, 2500, 5000, 12500}
}

// scaleSection ranks 10 candidates on Clos fabrics of 100 to 12,500 8-GPU
// servers, each in its own process.
func scaleSection(ctx context.Context, cfg *config) (bench.Section, []bench.Gate, error) {
	exe, err := os.Executable()
	if err != nil {
		return bench.Section{}, nil, err
	}
	sec := bench.Section{ID: "rank-scale", Title: "Ranking at scale: 10 candidates on Clos fabrics of 8-GPU servers",
		Notes:  []string{fmt.Sprintf("cassini.Clos instances (internal/bench/cassini): fabrics of cassini.ScaleSpec (10 servers per ToR, 25 ToRs and 4 aggregation switches per pod, 16 cores, 400 Gbps links; two-tier up to 250 servers), %d GPUs per server, %.2f running jobs per server (3000 on 12,500 servers) of 1 to 128 GPUs at 20-90 Gbps, 10%% of servers held by other work, 10 locality-aware candidates; GPUs of one server talk over no link. Each fabric is measured in its own process: *build* is the fabric, the routes and the rings of every candidate (CPU time); *rank* is candidate.Workspace.Rank with one worker (CPU time, median of %d, min–max; periods rounded past the cap as in the table above); *fit* counts the distinct link problems (of *searches*) whose jobs' summed peaks fit the link, which no shift can exceed: candidate.Rank answers them without a search (candidate.Ranking.Fit), and a candidate whose every shared link fits without Algorithm 1's walk; *peak memory* is the process's peak resident set (VmHWM) after building, and while ranking (the instance included). Routing comes from the fabric's structure, so memory grows with the fabric's links; the servers x nodes distance table it replaced would alone take servers x nodes x 4 bytes (12,500 servers: 710 MB).", scaleGPUs, scaleJobsPer, cfg.rounds)},
		Header: []string{"servers", "GPUs", "jobs", "directed links", "shared links", "searches", "fit", "build (CPU)", "rank, 1 worker (CPU)", "peak memory: built", "ranking"},
	}
	var rows []ScaleRow
	var gates []bench.Gate
	for _, servers := range scaleSizes(cfg.smoke) {
		cmd := exec.CommandContext(ctx, exe, scaleWorkerArg, strconv.Itoa(servers), strconv.Itoa(cfg.rounds))
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return bench.Section{}, nil, fmt.Errorf("%d servers: %w", servers, err)
		}
		var r ScaleRow
		if err := json.Unmarshal(out, &r); err != nil {
			return bench.Section{}, nil, fmt.Errorf("%d servers: %w", servers, err)
		}
		rows = append(rows, r)
		sec.Rows = append(sec.Rows, []string{fmt.Sprint(r.Servers), fmt.Sprint(r.GPUs), fmt.Sprint(r.Jobs), fmt.Sprint(r.Links),
			fmt.Sprint(r.Shared), fmt.Sprint(r.Searches), fmt.Sprint(r.Fit), bench.Duration(r.BuildCPU), bench.Spread(r.RankCPU), mib(r.BuildPeak), mib(r.RankPeak)})
		if servers == 12500 {
			ok := r.RankPeak > 0 && r.RankPeak < 1<<30
			gates = append(gates, bench.Gate{Name: "rank-scale: 3000 jobs on 12,500 8-GPU servers rank in under 1 GB",
				Pass: ok, Value: float64(r.RankPeak) / (1 << 20), Threshold: 1024, Detail: mib(r.RankPeak)})
			fast := r.RankCPU.Median > 0 && r.RankCPU.Median < 0.1
			gates = append(gates, bench.Gate{Name: "rank-scale: 3000 jobs on 12,500 8-GPU servers rank in under 100 ms of CPU with one worker (median)",
				Pass: fast, Value: 1000 * r.RankCPU.Median, Threshold: 100, Detail: bench.Duration(r.RankCPU.Median)})
		}
	}
	sec.Data = rows
	return sec, gates, nil
}

func mib(b int64) string {
	if b < 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f MB", float64(b)/1e6)
}
