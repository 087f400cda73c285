package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/orrery/orrery"
	orrerywasm "github.com/orrery/orrery/bindings/go"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/internal/bench"
	"github.com/orrery/orrery/internal/bench/cassini"
)

//go:embed nodehost.mjs
var nodeHost []byte

// wasmCalls are the calls measured on every host: the flat link_search
// fast path, then request envelopes from testdata/corpus (the ones
// bindings/crosscheck benchmarks).
var wasmCalls = []struct{ name, what string }{
	{"ok/link_single_job.json", "cassini.link, one job of 50 ticks (the boundary's cost)"},
	{"search", "link_search fast path: two jobs, 255 and 181 ticks (46155-tick circle), exact"},
	{"ok/link_exact_coprime_periods.json", "cassini.link, the same two jobs, through JSON"},
	{"ok/link_exact_three_jobs.json", "cassini.link, three jobs of 180/200/240 ms, exact"},
	{"search3", "link_search fast path: the same three jobs, exact"},
	{"ok/link_paper_three_jobs.json", "cassini.link, the same, paper mode"},
	{"ok/rank_twelve_jobs.json", "cassini.rank, 12 jobs, 8 links, 10 candidates"},
	{"ok/plan_24_jobs.json", "shockwave.plan, 24 jobs, 10 rounds"},
}

// WasmRow is one call on every host.
type WasmRow struct {
	Call  string                 `json:"call"`
	What  string                 `json:"what"`
	Times map[string]bench.Stats `json:"cpu_seconds"` // native, wazero, node
	// OverNative: per round, the host's time over native's.
	OverNative map[string]bench.Stats `json:"over_native"`
	SameBytes  map[string]bool        `json:"same_bytes,omitempty"` // response identical to native's
}

// nodeProc is a running nodehost.mjs.
type nodeProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

type nodeResp struct {
	Ready  bool   `json:"ready"`
	Name   string `json:"name"`
	Ops    int    `json:"ops"`
	WallNS int64  `json:"wall_ns"`
	CPUNS  int64  `json:"cpu_ns"`
	Digest string `json:"digest"`
	Error  string `json:"error"`
}

func startNode(ctx context.Context, dir, root, module string) (*nodeProc, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "nodehost.mjs")
	if err := os.WriteFile(script, nodeHost, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", "--no-warnings", script,
		filepath.Join(root, "bindings", "js", "orrery.js"), module, filepath.Join(root, "testdata", "corpus"))
	cmd.Stderr = os.Stderr
	np := &nodeProc{cmd: cmd}
	var err error
	if np.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	np.out = bufio.NewScanner(out)
	np.out.Buffer(nil, 1<<20)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var r nodeResp
	if err := np.read(&r); err != nil || !r.Ready {
		np.stop()
		return nil, fmt.Errorf("node host did not start: %v", err)
	}
	return np, nil
}

func (np *nodeProc) read(r *nodeResp) error {
	if !np.out.Scan() {
		if err := np.out.Err(); err != nil {
			return err
		}
		return errors.New("node host exited")
	}
	if err := json.Unmarshal(np.out.Bytes(), r); err != nil {
		return err
	}
	if r.Error != "" {
		return errors.New(r.Error)
	}
	return nil
}

func (np *nodeProc) do(name string, target time.Duration) (nodeResp, error) {
	b, _ := json.Marshal(map[string]any{"name": name, "target_ms": float64(target) / 1e6})
	if _, err := np.in.Write(append(b, '\n')); err != nil {
		return nodeResp{}, err
	}
	var r nodeResp
	err := np.read(&r)
	return r, err
}

func (np *nodeProc) stop() {
	np.in.Close()
	np.cmd.Wait()
}

// buildModule builds the module (package ./wasm, with extra build flags)
// into path as make wasm ships it (wasm/build.sh: wasm-opt -Oz where
// installed) and compiles it in wazero with one instance.
func buildModule(ctx context.Context, root, path string, flags ...string) ([]byte, *orrerywasm.Module, error) {
	build := exec.CommandContext(ctx, filepath.Join(root, "wasm", "build.sh"), append([]string{path}, flags...)...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("building the module (%v): %v\n%s", flags, err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	mod, err := orrerywasm.New(ctx, b, orrerywasm.Options{Instances: 1})
	if err != nil {
		return nil, nil, err
	}
	return b, mod, nil
}

func wasmSection(ctx context.Context, cfg *config) ([]bench.Section, []bench.Gate, error) {
	tmp, err := os.MkdirTemp("", "orrery-bench-wasm-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	w, err := startWasmHosts(ctx, cfg.root, tmp)
	if err != nil {
		return nil, nil, err
	}
	defer w.close(ctx)
	calls, err := w.prepare(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := w.measure(ctx, cfg, calls); err != nil {
		return nil, nil, err
	}
	sec, gates := w.report(cfg, calls)
	return []bench.Section{sec}, gates, nil
}

// wasmHosts are the hosts the section compares: the module as shipped (its
// kernels imported: native in wazero, SIMD in node) and the purego build
// (its kernels in WebAssembly, as on a host that provides none), both in
// wazero, and node when it runs here.
type wasmHosts struct {
	names                  []string // "native", "wazero", "wazero-portable"[, "node"]
	mod, portable          *orrerywasm.Module
	wasmSize, portableSize int
	node                   *nodeProc
	nodeNote               string
}

func startWasmHosts(ctx context.Context, root, tmp string) (*wasmHosts, error) {
	w := &wasmHosts{names: []string{"native", "wazero", "wazero-portable"}}
	module := filepath.Join(tmp, "orrery.wasm")
	b, mod, err := buildModule(ctx, root, module)
	if err != nil {
		return nil, err
	}
	w.mod, w.wasmSize = mod, len(b)
	if b, w.portable, err = buildModule(ctx, root, filepath.Join(tmp, "orrery-portable.wasm"), "-tags", "purego"); err != nil {
		w.mod.Close(ctx)
		return nil, err
	}
	w.portableSize = len(b)
	if np, err := startNode(ctx, tmp, root, module); err != nil {
		w.nodeNote = fmt.Sprintf(" node is not measured here (%v).", err)
	} else {
		w.node = np
		w.names = append(w.names, "node")
	}
	return w, nil
}

func (w *wasmHosts) close(ctx context.Context) {
	if w.node != nil {
		w.node.stop()
	}
	w.portable.Close(ctx)
	w.mod.Close(ctx)
}

// wasmCall is one of wasmCalls, ready to measure: its cases on the Go
// hosts, calibrated, and its samples so far.
type wasmCall struct {
	cases  map[string]bench.Case
	ops    map[string]int
	digest string // SHA-256 of native's response
	row    WasmRow
	raw    map[string][]bench.Sample
}

// prepare builds and calibrates every call's cases, and records whether
// the Go hosts answer native's bytes.
func (w *wasmHosts) prepare(ctx context.Context, cfg *config) ([]wasmCall, error) {
	corpus := filepath.Join(cfg.root, "testdata", "corpus")
	pr, err := cassini.CorpusSearchProblem(corpus)
	if err != nil {
		return nil, err
	}
	pr3, err := cassini.CorpusProblem(corpus, "link_exact_three_jobs.json")
	if err != nil {
		return nil, err
	}
	var nw link.Workspace
	opt := bench.Options{Target: cfg.target}
	calls := make([]wasmCall, len(wasmCalls))
	for i, c := range wasmCalls {
		st := &calls[i]
		st.cases, st.ops, st.raw = map[string]bench.Case{}, map[string]int{}, map[string][]bench.Sample{}
		st.row = WasmRow{Call: c.name, What: c.what, Times: map[string]bench.Stats{}, OverNative: map[string]bench.Stats{}, SameBytes: map[string]bool{}}
		if c.name == "search" || c.name == "search3" {
			p := pr
			if c.name == "search3" {
				p = pr3
			}
			dst := make([]int, len(p.Jobs))
			st.cases["native"] = bench.Case{Name: "native", Op: func() error { _, err := nw.Search(ctx, p, link.Options{}, dst); return err }}
			st.cases["wazero"] = bench.Case{Name: "wazero", Op: func() error { _, err := w.mod.Search(ctx, p, link.Options{}, dst); return err }}
			st.cases["wazero-portable"] = bench.Case{Name: "wazero-portable", Op: func() error { _, err := w.portable.Search(ctx, p, link.Options{}, dst); return err }}
			if err := sameSearch(ctx, p, w); err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
		} else {
			env, err := os.ReadFile(filepath.Join(corpus, filepath.FromSlash(c.name)))
			if err != nil {
				return nil, err
			}
			want := orrery.Handle(ctx, env)
			for _, m := range []struct {
				host string
				mod  *orrerywasm.Module
			}{{"wazero", w.mod}, {"wazero-portable", w.portable}} {
				got, err := m.mod.Handle(ctx, env)
				if err != nil {
					return nil, fmt.Errorf("%s: %s: %w", c.name, m.host, err)
				}
				st.row.SameBytes[m.host] = bytes.Equal(got, want)
			}
			sum := sha256.Sum256(want)
			st.digest = hex.EncodeToString(sum[:])
			st.cases["native"] = bench.Case{Name: "native", Op: func() error { orrery.Handle(ctx, env); return nil }}
			st.cases["wazero"] = bench.Case{Name: "wazero", Op: func() error { _, err := w.mod.Handle(ctx, env); return err }}
			st.cases["wazero-portable"] = bench.Case{Name: "wazero-portable", Op: func() error { _, err := w.portable.Handle(ctx, env); return err }}
		}
		for _, h := range []string{"native", "wazero", "wazero-portable"} {
			n, err := bench.Calibrate(ctx, st.cases[h], opt)
			if err != nil {
				return nil, fmt.Errorf("%s on %s: %w", c.name, h, err)
			}
			st.ops[h] = n
		}
	}
	return calls, nil
}

// sameSearch checks that both modules answer the flat search p as the
// engine does natively: the whole result, evaluations included.
func sameSearch(ctx context.Context, p link.Problem, w *wasmHosts) error {
	var nw link.Workspace
	want, err := nw.Search(ctx, p, link.Options{}, nil)
	if err != nil {
		return err
	}
	for _, m := range []*orrerywasm.Module{w.mod, w.portable} {
		got, err := m.Search(ctx, p, link.Options{}, nil)
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("the module answers %+v, native %+v", got, want)
		}
	}
	return nil
}

// measure runs cfg.rounds rounds, every call on every host in each,
// rotating which host goes first.
func (w *wasmHosts) measure(ctx context.Context, cfg *config, calls []wasmCall) error {
	for r := range cfg.rounds {
		for i := range calls {
			c := &calls[i]
			for k := range w.names {
				h := w.names[(r+k)%len(w.names)]
				if err := ctx.Err(); err != nil {
					return err
				}
				if h == "node" {
					resp, err := w.node.do(c.row.Call, cfg.target)
					if err != nil {
						return fmt.Errorf("%s on node: %w", c.row.Call, err)
					}
					if resp.Digest != "" {
						c.row.SameBytes["node"] = resp.Digest == c.digest
					}
					c.raw[h] = append(c.raw[h], bench.Sample{CPU: time.Duration(resp.CPUNS / int64(resp.Ops)), Wall: time.Duration(resp.WallNS / int64(resp.Ops))})
					continue
				}
				s, err := bench.Run(c.cases[h], c.ops[h])
				if err != nil {
					return fmt.Errorf("%s on %s: %w", c.row.Call, h, err)
				}
				c.raw[h] = append(c.raw[h], s)
			}
		}
	}
	return nil
}

// report is the section's table and its gates.
func (w *wasmHosts) report(cfg *config, calls []wasmCall) (bench.Section, []bench.Gate) {
	sec := bench.Section{ID: "wasm", Title: "Native vs WebAssembly (the same calls through the module)",
		Notes:  []string{fmt.Sprintf("The same requests answered by the engine linked natively (orrery.Handle, link.Workspace.Search), by the WebAssembly module (GOOS=wasip1, %.1f MB as make wasm ships it) hosted by wazero (bindings/go: the module's kernel imports run natively) and by node (bindings/js: they run in the SIMD module kernels.wasm), and by the purego build (%.1f MB, no imports: the kernels in WebAssembly, as on any host that provides none) in wazero. CPU time per call of each host process, median over %d interleaved rounds (min–max); the ratio to native is per round.%s", float64(w.wasmSize)/1e6, float64(w.portableSize)/1e6, cfg.rounds, w.nodeNote)},
		Header: append([]string{"call"}, w.names...),
	}
	var gates []bench.Gate
	rows := make([]WasmRow, len(calls))
	for i := range calls {
		c := &calls[i]
		row := &c.row
		cells := []string{row.What}
		for _, h := range w.names {
			row.Times[h] = bench.Summarize(bench.Times(c.raw[h]))
			cell := bench.Spread(row.Times[h])
			if h != "native" {
				row.OverNative[h] = bench.Summarize(bench.Ratios(c.raw[h], c.raw["native"]))
				cell += " " + bench.Ratio(row.OverNative[h].Median)
			}
			cells = append(cells, cell)
		}
		sec.Rows = append(sec.Rows, cells)
		rows[i] = *row
		if row.Call == "ok/rank_twelve_jobs.json" {
			// The imports must pay where the kernels do the work: a ratio
			// of two hosts measured in the same rounds (5x here).
			r := bench.Summarize(bench.Ratios(c.raw["wazero-portable"], c.raw["wazero"]))
			gates = append(gates, bench.Gate{Name: "wasm cassini.rank: the kernel imports make wazero at least 2x faster than the purego build",
				Pass: r.Median >= 2, Value: r.Median, Threshold: 2, Detail: bench.Ratio(r.Median)})
		}
		if row.Call == "search" || row.Call == "search3" {
			continue // a flat result, not response bytes (sameSearch compared it)
		}
		for _, h := range w.names[1:] {
			ok := row.SameBytes[h]
			gates = append(gates, bench.Gate{Name: fmt.Sprintf("wasm %s: %s answers the same bytes as native", row.Call, h),
				Pass: ok, Value: b2f(ok), Threshold: 1, Detail: yesNo(ok)})
		}
	}
	sec.Data = rows
	return sec, gates
}
