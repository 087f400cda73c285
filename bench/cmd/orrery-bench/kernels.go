package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/orrery/orrery/internal/bench"
	"github.com/orrery/orrery/internal/bench/cassini"
	"github.com/orrery/orrery/kernels"
)

// The kernel paths are chosen once per process (ORRERY_KERNELS, read at
// start), so each path runs in a worker: this program re-executed with
// workerArg and the variable set. The coordinator sends one request at a
// time, rotating over the workers, so the paths are measured interleaved
// and never compete with each other for a core; each worker times its
// batches on its own thread's CPU clock.

const workerArg = "kernel-worker"

// kernelReq asks a worker for one timed batch.
type kernelReq struct {
	Op     string        `json:"op"` // "rotations", "excess", or one of loopOps
	N      int           `json:"n"`  // circle length
	Shifts int           `json:"shifts"`
	Plain  bool          `json:"plain"` // the plain Go loop instead of the kernels
	Target time.Duration `json:"target"`
}

// kernelResp is a batch's measurement.
type kernelResp struct {
	Impl  string  `json:"impl"` // kernels.Implementation() of the worker
	Pairs float64 `json:"pairs"`
	Ops   int     `json:"ops"`
	CPU   int64   `json:"cpu_ns"`
	Wall  int64   `json:"wall_ns"`
	Sum   int64   `json:"sum"` // checksum of the output: equal on every path
	Err   string  `json:"err,omitempty"`
}

// kernelInput is engine/kernels' benchmark input: values in [0, 1000) and
// a threshold of 1000, so about half the pairs exceed it.
type kernelInput struct {
	base, rot, rotor []int32
	out              []int64
	c                int32

	dst []int32 // AddRotated's target, a copy of base
	psi []int64 // FoldDelta's fold, len(base)/foldModulus entries
}

// loopOps are the link search's other loops over the circle (kernels'
// ExcessSlack, AddRotated, FoldDelta), measured in one section.
var loopOps = []string{"excess_slack", "add_rotated", "fold_delta"}

// foldModulus: FoldDelta folds n ticks into n/foldModulus residues, as a
// ranking's run scans do (1443 ticks into 143 on average on the 12-job
// instance).
const foldModulus = 10

// foldV is the demand FoldDelta adds (base is below 1000, c = 1000).
const foldV = 300

func newKernelInput(n int) *kernelInput {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	in := &kernelInput{base: make([]int32, n), rot: make([]int32, n), c: 1000}
	for i := range in.base {
		in.base[i] = rng.Int32N(1000)
		in.rot[i] = rng.Int32N(1000)
	}
	in.rotor = kernels.PrepareRotor(nil, in.rot)
	in.dst = slices.Clone(in.base)
	in.psi = make([]int64, max(n/foldModulus, 1))
	return in
}

// loopOp returns loop kernel op (plain: the loop as its definition reads)
// on in, and the checksum of one call from a fresh state (equal on every
// path); pairs is one per tick.
func loopOp(op string, plain bool, in *kernelInput) (run func(), check func() int64) {
	switch op {
	case "excess_slack":
		es := kernels.ExcessSlack
		if plain {
			es = plainExcessSlack
		}
		var sink int64
		return func() { e, s := es(in.base, in.c); sink += e + s }, func() int64 { e, s := es(in.base, in.c); return e ^ s<<1 }
	case "add_rotated":
		ar := kernels.AddRotated
		if plain {
			ar = plainAddRotated
		}
		t := len(in.dst) / 3
		return func() { ar(in.dst, in.rot, t) }, func() int64 {
			d := slices.Clone(in.base)
			ar(d, in.rot, t)
			return checksum32(d)
		}
	default:
		fd := kernels.FoldDelta
		if plain {
			fd = plainFoldDelta
		}
		return func() { fd(in.psi, in.base, foldV, in.c) }, func() int64 {
			psi := make([]int64, len(in.psi))
			fd(psi, in.base, foldV, in.c)
			var h int64
			for i, v := range psi {
				h += int64(i+1) * v
			}
			return h
		}
	}
}

func plainExcessSlack(a []int32, c int32) (excess, slack int64) {
	for _, v := range a {
		excess += max(int64(v)-int64(c), 0)
		slack += max(int64(c)-int64(v), 0)
	}
	return excess, slack
}

func plainAddRotated(dst, tile []int32, t int) {
	n := len(dst)
	for i := range dst {
		dst[i] += tile[(i-t+n)%n]
	}
}

func plainFoldDelta(psi []int64, base []int32, v, c int32) {
	m := len(psi)
	for i, b := range base {
		psi[i%m] += max(int64(b)+int64(v)-int64(c), 0) - max(int64(b)-int64(c), 0)
	}
}

func checksum32(v []int32) int64 {
	var h int64
	for i, x := range v {
		h += int64(i+1) * int64(x)
	}
	return h
}

// kernelWorker serves kernelReqs on stdin until it closes.
func kernelWorker() int {
	runtime.LockOSThread() // ThreadCPU measures this thread
	inputs := map[int]*kernelInput{}
	batch := map[string]int{} // ops per batch, by request shape
	enc := json.NewEncoder(os.Stdout)
	enc.Encode(kernelResp{Impl: kernels.Implementation()})
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var rq kernelReq
		if err := json.Unmarshal(sc.Bytes(), &rq); err != nil {
			enc.Encode(kernelResp{Err: err.Error()})
			continue
		}
		if rq.N < 1 || rq.Shifts < 0 || rq.Shifts > rq.N || rq.Op != "rotations" && rq.Op != "excess" && !slices.Contains(loopOps, rq.Op) {
			enc.Encode(kernelResp{Err: fmt.Sprintf("bad request %+v", rq)})
			continue
		}
		in := inputs[rq.N]
		if in == nil {
			in = newKernelInput(rq.N)
			inputs[rq.N] = in
		}
		if len(in.out) < rq.Shifts {
			in.out = make([]int64, rq.Shifts)
		}
		var sum int64
		var op func()
		var check func() int64
		var pairs float64
		switch {
		case slices.Contains(loopOps, rq.Op):
			op, check = loopOp(rq.Op, rq.Plain, in)
			pairs = float64(rq.N)
		case rq.Op == "rotations" && rq.Plain:
			op = func() { cassini.PlainRotations(in.out[:rq.Shifts], in.base, in.rot, in.c) }
			pairs = float64(rq.N) * float64(rq.Shifts)
		case rq.Op == "rotations":
			op = func() { kernels.Rotations(in.out[:rq.Shifts], in.base, in.rotor, in.c, 0) }
			pairs = float64(rq.N) * float64(rq.Shifts)
		case rq.Plain:
			op = func() { sum += cassini.PlainExcess(in.base, in.rot, in.c) }
			pairs = float64(rq.N)
		default:
			op = func() { sum += kernels.Excess(in.base, in.rot, in.c) }
			pairs = float64(rq.N)
		}
		key := fmt.Sprintf("%s/%d/%d/%v", rq.Op, rq.N, rq.Shifts, rq.Plain)
		n := batch[key]
		if n == 0 { // warm up, then size the batch from one timed op
			op()
			c0 := bench.ThreadCPU()
			op()
			t := max(bench.ThreadCPU()-c0, time.Microsecond)
			n = max(1, int(rq.Target/t)+1)
		}
		sum = 0
		c0, w0 := bench.ThreadCPU(), time.Now()
		for range n {
			op()
		}
		cpu, wall := bench.ThreadCPU()-c0, time.Since(w0)
		if cpu > 0 && cpu < rq.Target { // grow towards the target for the next batch
			batch[key] = max(n+1, int(float64(n)*float64(rq.Target)/float64(cpu)))
		} else {
			batch[key] = n
		}
		switch {
		case check != nil:
			sum = check()
		case rq.Op == "rotations":
			for _, v := range in.out[:rq.Shifts] {
				sum += v
			}
		default:
			sum /= int64(n)
		}
		enc.Encode(kernelResp{Impl: kernels.Implementation(), Pairs: pairs, Ops: n, CPU: int64(cpu), Wall: int64(wall), Sum: sum})
	}
	return 0
}

// worker is a running kernel worker.
type worker struct {
	impl string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
}

func startWorker(ctx context.Context, env string) (*worker, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe, workerArg)
	cmd.Env = append(os.Environ(), kernels.EnvVar+"="+env, "GOMAXPROCS=1")
	cmd.Stderr = os.Stderr
	w := &worker{cmd: cmd}
	if w.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	w.out = bufio.NewScanner(out)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var hello kernelResp
	if err := w.read(&hello); err != nil {
		w.stop()
		return nil, err
	}
	w.impl = hello.Impl
	return w, nil
}

func (w *worker) read(r *kernelResp) error {
	if !w.out.Scan() {
		if err := w.out.Err(); err != nil {
			return err
		}
		return errors.New("kernel worker exited")
	}
	if err := json.Unmarshal(w.out.Bytes(), r); err != nil {
		return err
	}
	if r.Err != "" {
		return errors.New(r.Err)
	}
	return nil
}

func (w *worker) do(rq kernelReq) (kernelResp, error) {
	b, _ := json.Marshal(rq)
	if _, err := w.in.Write(append(b, '\n')); err != nil {
		return kernelResp{}, err
	}
	var r kernelResp
	err := w.read(&r)
	return r, err
}

func (w *worker) stop() {
	w.in.Close()
	w.cmd.Wait()
}

// column is one measured implementation: a worker's kernels, or the plain
// loop (run by the generic worker).
type column struct {
	name  string
	w     *worker
	plain bool
}

// KernelRow is one (op, n) of the kernel section: pair evaluations per
// CPU-second by implementation.
type KernelRow struct {
	Op     string                 `json:"op"`
	N      int                    `json:"n"`
	Shifts int                    `json:"shifts,omitempty"`
	Rates  map[string]bench.Stats `json:"pairs_per_cpu_s"`
	Wall   map[string]bench.Stats `json:"pairs_per_wall_s"`
	// SIMDOverGeneric: per round, the fastest vector path's rate over the
	// generic path's (rounds interleave the paths); PlainOverGeneric
	// likewise for the generic path over the plain loop.
	SIMDOverGeneric  bench.Stats `json:"simd_over_generic"`
	GenericOverPlain bench.Stats `json:"generic_over_plain"`
	Identical        bool        `json:"identical"` // every path returned the same sums
}

func shiftsFor(n int) int { return min(n, 4096) }

func kernelSection(ctx context.Context, cfg *config) ([]bench.Section, []bench.Gate, error) {
	cols, stop, err := startKernelWorkers(ctx)
	defer stop()
	if err != nil {
		return nil, nil, err
	}
	m := kernelRuns{ns: []int{72, 360, 1024, 4096, 46155}, ops: append([]string{"rotations", "excess"}, loopOps...)}
	if cfg.smoke {
		m.ns, m.ops = []int{4096}, []string{"rotations"}
	}
	if err := m.measure(ctx, cfg, cols); err != nil {
		return nil, nil, err
	}
	var sections []bench.Section
	var gates []bench.Gate
	for _, op := range m.ops {
		if slices.Contains(loopOps, op) {
			continue
		}
		sec, g := m.report(cfg, cols, op)
		sections, gates = append(sections, sec), append(gates, g...)
	}
	if slices.Contains(m.ops, loopOps[0]) {
		sec, g := m.reportLoops(cfg, cols)
		sections, gates = append(sections, sec), append(gates, g...)
	}
	return sections, gates, nil
}

// startKernelWorkers starts one worker process per kernel path this CPU
// has (ORRERY_KERNELS unset, noavx512, generic; paths that resolve to the
// same implementation measured once) and returns the columns, fastest
// first, the plain loop last; stop stops them.
func startKernelWorkers(ctx context.Context) (cols []column, stop func(), err error) {
	var workers []*worker
	stop = func() {
		for _, w := range workers {
			w.stop()
		}
	}
	seen := map[string]bool{}
	for _, env := range []string{"", "noavx512", "generic"} {
		w, err := startWorker(ctx, env)
		if err != nil {
			return nil, stop, fmt.Errorf("kernel worker (%s=%q): %w", kernels.EnvVar, env, err)
		}
		workers = append(workers, w)
		if seen[w.impl] {
			continue
		}
		seen[w.impl] = true
		cols = append(cols, column{name: w.impl, w: w})
	}
	// The plain loop runs in the generic worker (any would do).
	cols = append(cols, column{name: "plain", w: workers[len(workers)-1], plain: true})
	slices.SortStableFunc(cols, func(a, b column) int { return implRank(a.name) - implRank(b.name) })
	return cols, stop, nil
}

// kernelKey is one measured problem: a kernel at a circle size.
type kernelKey struct {
	op string
	n  int
}

// kernelRuns are the samples of every problem on every column: pair
// evaluations per CPU-second and per wall-second, by column name.
type kernelRuns struct {
	ns        []int
	ops       []string
	cpu, wall map[kernelKey]map[string][]float64
	sums      map[kernelKey]map[string]int64
	identical map[kernelKey]bool
}

// measure runs cfg.rounds rounds of every problem on every column,
// rotating which column goes first, and checks that every path returns the
// same sums.
func (m *kernelRuns) measure(ctx context.Context, cfg *config, cols []column) error {
	m.cpu, m.wall = map[kernelKey]map[string][]float64{}, map[kernelKey]map[string][]float64{}
	m.sums, m.identical = map[kernelKey]map[string]int64{}, map[kernelKey]bool{}
	for _, op := range m.ops {
		for _, n := range m.ns {
			k := kernelKey{op, n}
			m.cpu[k], m.wall[k], m.sums[k], m.identical[k] = map[string][]float64{}, map[string][]float64{}, map[string]int64{}, true
		}
	}
	for r := range cfg.rounds {
		for _, op := range m.ops {
			for _, n := range m.ns {
				if err := m.round(ctx, cfg, cols, r, kernelKey{op, n}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// round measures problem k once on every column, starting at column r.
func (m *kernelRuns) round(ctx context.Context, cfg *config, cols []column, r int, k kernelKey) error {
	shifts := 0
	if k.op == "rotations" {
		shifts = shiftsFor(k.n)
	}
	for i := range cols {
		c := cols[(r+i)%len(cols)]
		if err := ctx.Err(); err != nil {
			return err
		}
		resp, err := c.w.do(kernelReq{Op: k.op, N: k.n, Shifts: shifts, Plain: c.plain, Target: cfg.target})
		if err != nil {
			return fmt.Errorf("kernels %s n=%d %s: %w", k.op, k.n, c.name, err)
		}
		work := resp.Pairs * float64(resp.Ops)
		m.cpu[k][c.name] = append(m.cpu[k][c.name], work/(float64(resp.CPU)/1e9))
		m.wall[k][c.name] = append(m.wall[k][c.name], work/(float64(resp.Wall)/1e9))
		if s, ok := m.sums[k][c.name]; ok && s != resp.Sum {
			m.identical[k] = false
		}
		m.sums[k][c.name] = resp.Sum
	}
	for _, c := range cols[1:] {
		if m.sums[k][c.name] != m.sums[k][cols[0].name] {
			m.identical[k] = false
		}
	}
	return nil
}

// report is kernel op's section and its gates.
func (m *kernelRuns) report(cfg *config, cols []column, op string) (bench.Section, []bench.Gate) {
	sec := bench.Section{ID: "kernels-" + op}
	if op == "rotations" {
		sec.Title = "Kernels: rotation scan (kernels.Rotations)"
		sec.Notes = []string{fmt.Sprintf("Billions of pair evaluations (one shift at one tick) per CPU-second, scoring all shifts of a random profile against another on a circle of n ticks (%d shifts at n = 46155). Each path runs in its own process (%s), one request at a time, rotating over the paths every round; `plain` is the loop a user would write (`max(base[i]+rot[(i-s) mod n]-c, 0)`). Median over %d rounds (min–max).", shiftsFor(46155), kernels.EnvVar, cfg.rounds)}
	} else {
		sec.Title = "Kernels: excess of one alignment (kernels.Excess)"
		sec.Notes = []string{fmt.Sprintf("Billions of pair evaluations per CPU-second of one alignment's excess over n ticks. Median over %d rounds (min–max).", cfg.rounds)}
	}
	sec.Header = []string{"n"}
	for _, c := range cols {
		sec.Header = append(sec.Header, c.name)
	}
	sec.Header = append(sec.Header, "SIMD / generic", "generic / plain", "identical")
	var rows []KernelRow
	var gates []bench.Gate
	for _, n := range m.ns {
		row, cells := m.row(cols, kernelKey{op, n})
		sec.Rows = append(sec.Rows, cells)
		rows = append(rows, row)
		gates = append(gates, bench.Gate{Name: fmt.Sprintf("kernels %s n=%d: every path returns the same sums", op, n),
			Pass: row.Identical, Value: b2f(row.Identical), Threshold: 1, Detail: yesNo(row.Identical)})
		if op == "rotations" && n == 4096 {
			g := bench.Gate{Name: "kernels rotations n=4096: fastest SIMD path ≥ 3× generic (median of per-round ratios, CPU time)", Threshold: 3}
			if row.SIMDOverGeneric.N == 0 {
				g.Skipped, g.Detail = true, "no vector path on this CPU/build ("+kernels.Implementation()+")"
			} else {
				g.Value = row.SIMDOverGeneric.Median
				g.Pass = g.Value >= g.Threshold
				g.Detail = fmt.Sprintf("%s (min %s)", bench.Ratio(g.Value), bench.Ratio(row.SIMDOverGeneric.Min))
			}
			gates = append(gates, g)
		}
	}
	sec.Data = rows
	return sec, gates
}

// reportLoops is the loop kernels' section (one row per kernel and n) and
// its gates.
func (m *kernelRuns) reportLoops(cfg *config, cols []column) (bench.Section, []bench.Gate) {
	sec := bench.Section{ID: "kernels-loops", Title: "Kernels: the link search's other loops (ExcessSlack, AddRotated, FoldDelta)"}
	sec.Notes = []string{fmt.Sprintf("Billions of ticks per CPU-second: ExcessSlack (the excess and the room below c of one profile: a node's mass bound), AddRotated (adding a job's tile at a shift: building a state's demand), FoldDelta (what a demand of %d adds at each tick, folded modulo n/%d: the run scan's deltas), on the same random profiles as above, each path in its own process. `plain` is each kernel's definition as a Go loop. Median over %d rounds (min–max).", foldV, foldModulus, cfg.rounds)}
	sec.Header = []string{"kernel", "n"}
	for _, c := range cols {
		sec.Header = append(sec.Header, c.name)
	}
	sec.Header = append(sec.Header, "SIMD / generic", "generic / plain", "identical")
	var rows []KernelRow
	var gates []bench.Gate
	for _, op := range loopOps {
		for _, n := range m.ns {
			row, cells := m.row(cols, kernelKey{op, n})
			sec.Rows = append(sec.Rows, append([]string{op}, cells...))
			rows = append(rows, row)
			gates = append(gates, bench.Gate{Name: fmt.Sprintf("kernels %s n=%d: every path returns the same sums", op, n),
				Pass: row.Identical, Value: b2f(row.Identical), Threshold: 1, Detail: yesNo(row.Identical)})
		}
	}
	sec.Data = rows
	return sec, gates
}

// row summarizes problem k: rates per column, and per round the fastest
// SIMD path over generic and generic over the plain loop.
func (m *kernelRuns) row(cols []column, k kernelKey) (KernelRow, []string) {
	cpu := m.cpu[k]
	row := KernelRow{Op: k.op, N: k.n, Rates: map[string]bench.Stats{}, Wall: map[string]bench.Stats{}, Identical: m.identical[k]}
	if k.op == "rotations" {
		row.Shifts = shiftsFor(k.n)
	}
	cells := []string{strconv.Itoa(k.n)}
	for _, c := range cols {
		row.Rates[c.name] = bench.Summarize(cpu[c.name])
		row.Wall[c.name] = bench.Summarize(m.wall[k][c.name])
		cells = append(cells, bench.GigaSpread(row.Rates[c.name]))
	}
	gen := cpu["generic"]
	var simd, plain []float64
	for i := range gen {
		best := 0.0
		for _, name := range []string{"avx512", "avx2"} {
			if v, ok := cpu[name]; ok {
				best = max(best, v[i])
			}
		}
		if best > 0 {
			simd = append(simd, best/gen[i])
		}
		plain = append(plain, gen[i]/cpu["plain"][i])
	}
	row.SIMDOverGeneric = bench.Summarize(simd)
	row.GenericOverPlain = bench.Summarize(plain)
	cells = append(cells, ratioCell(row.SIMDOverGeneric), ratioCell(row.GenericOverPlain), yesNo(row.Identical))
	return row, cells
}

func implRank(name string) int {
	switch name {
	case "avx512":
		return 0
	case "avx2":
		return 1
	case "generic":
		return 2
	}
	return 3
}

func ratioCell(s bench.Stats) string {
	if s.N == 0 {
		return "–"
	}
	if s.N == 1 {
		return bench.Ratio(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", bench.Ratio(s.Median), bench.Ratio(s.Min), bench.Ratio(s.Max))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
