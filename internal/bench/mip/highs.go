package mip

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// The HiGHS driver: a Python script that hands a model to SciPy's milp.
//
//go:embed highs.py
var highsDriver []byte

// HiGHSOptions configure [SolveHiGHS]. The zero value runs the first Python
// of [HiGHSPythons] that has SciPy, with no time limit and HiGHS's default
// gap tolerances (relative 1e-4, absolute 1e-6).
type HiGHSOptions struct {
	Python    string        // the interpreter; "" means the first of HiGHSPythons with scipy.optimize.milp
	TimeLimit time.Duration // 0: none (the context still applies)
	// RelGap, if ≥ 0 and Set, is HiGHS's mip_rel_gap; otherwise HiGHS's
	// default (1e-4) applies.
	RelGap    float64
	SetRelGap bool
	// Dir, if set, receives the model (JSON), the driver's output and its
	// log, named after Name, and keeps them; otherwise a temporary
	// directory is used and removed.
	Dir  string
	Name string // file stem; "" means "model"
}

// HiGHSPythons are the interpreters [HiGHSAvailable] tries, in order:
// Debian's python3-scipy installs into the system Python, which a version
// manager's python3 on PATH may hide.
var HiGHSPythons = []string{"/usr/bin/python3", "python3"}

// HiGHSPython returns the first interpreter of HiGHSPythons that imports
// scipy.optimize.milp, or "" if none does.
func HiGHSPython() string {
	for _, py := range HiGHSPythons {
		if _, err := exec.LookPath(py); err != nil {
			continue
		}
		if exec.Command(py, "-c", "from scipy.optimize import milp").Run() == nil {
			return py
		}
	}
	return ""
}

// HiGHSAvailable reports whether SciPy's milp (HiGHS) can be run.
func HiGHSAvailable() bool { return HiGHSPython() != "" }

// SolveHiGHS solves m with HiGHS through SciPy's milp. Hitting the time
// limit is not an error: the result's status says what was found. The
// result's Gap is HiGHS's own (relative to the primal objective); Bound is
// its dual bound in m's sense, with ObjConst added. CPU is the driver's
// process time inside milp (HiGHS's work, without Python's start-up and the
// model's reading); Wall likewise.
func SolveHiGHS(ctx context.Context, m *Model, opt HiGHSOptions) (*Result, error) {
	py := opt.Python
	if py == "" {
		if py = HiGHSPython(); py == "" {
			return nil, fmt.Errorf("%w: no python3 with scipy.optimize.milp (Debian: apt-get install python3-scipy)", ErrSolver)
		}
	}
	dir, name, cleanup, err := workDir(opt.Dir, opt.Name, "orrery-highs-")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	script := filepath.Join(dir, "highs_driver.py")
	if err := os.WriteFile(script, highsDriver, 0o644); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name+".json")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	gap := -1.0
	if opt.SetRelGap {
		gap = opt.RelGap
	}
	if err := m.WriteJSON(f, opt.TimeLimit.Seconds(), gap); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	// HiGHS does not always check its clock (a model with coefficients
	// near 1e300 stays in its LP past any limit): the driver is killed
	// once it has run twice its limit and 30 s more, as a time-out.
	runCtx := ctx
	if opt.TimeLimit > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, 2*opt.TimeLimit+30*time.Second)
		defer cancel()
	}
	cmd := exec.CommandContext(runCtx, py, script, path)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	runErr := cmd.Run()
	if opt.Dir != "" {
		os.WriteFile(filepath.Join(dir, name+".highs.json"), out.Bytes(), 0o644)
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if runCtx.Err() != nil {
			res := &Result{Status: NoSolution, Objective: math.NaN(), Bound: math.NaN(), Gap: math.NaN(),
				Wall: time.Since(t0), Log: "killed: HiGHS overran its time limit of " + opt.TimeLimit.String()}
			if st := cmd.ProcessState; st != nil {
				res.CPU = st.UserTime() + st.SystemTime()
			}
			return res, nil
		}
		return nil, fmt.Errorf("%w: %v\n%s", ErrSolver, runErr, tail(errb.String()))
	}
	return readHiGHS(out.Bytes(), m)
}

// highsOutput is what the driver prints.
type highsOutput struct {
	Status    int       `json:"status"`
	Message   string    `json:"message"`
	Wall      float64   `json:"wall"`
	CPU       float64   `json:"cpu"`
	X         []float64 `json:"x"`
	Fun       *float64  `json:"fun"`
	DualBound *float64  `json:"mip_dual_bound"`
	Gap       *float64  `json:"mip_gap"`
	Nodes     *float64  `json:"mip_node_count"`
}

// readHiGHS turns the driver's output into a Result. SciPy's statuses: 0
// optimal (within the gap tolerances), 1 a limit reached, 2 infeasible,
// 3 unbounded, 4 other.
func readHiGHS(b []byte, m *Model) (*Result, error) {
	var o highsOutput
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("%w: driver output: %v", ErrSolver, err)
	}
	res := &Result{Objective: math.NaN(), Bound: math.NaN(), Gap: math.NaN(), Log: o.Message,
		Wall: time.Duration(o.Wall * float64(time.Second)), CPU: time.Duration(o.CPU * float64(time.Second))}
	if o.Nodes != nil {
		res.Nodes = int(*o.Nodes)
	}
	switch o.Status {
	case 0:
		res.Status = Optimal
	case 1:
		res.Status = Feasible
		if o.X == nil {
			res.Status = NoSolution
		}
	case 2:
		res.Status = Infeasible
	case 3:
		res.Status = Unbounded
	default:
		if o.X == nil {
			return nil, fmt.Errorf("%w: HiGHS: %s", ErrSolver, o.Message)
		}
		res.Status = Feasible
	}
	sign := 1.0
	if m.Maximize {
		sign = -1
	}
	if o.DualBound != nil && res.Status != Infeasible {
		res.Bound = sign*(*o.DualBound) + m.ObjConst
	}
	if o.X != nil && (res.Status == Optimal || res.Status == Feasible) {
		if len(o.X) != len(m.Vars) {
			return nil, fmt.Errorf("%w: HiGHS returned %d values for %d variables", ErrSolver, len(o.X), len(m.Vars))
		}
		res.Values = o.X
		res.Objective = m.Objective(o.X)
		if o.Gap != nil {
			res.Gap = *o.Gap
		}
	}
	return res, nil
}

// WriteJSON writes m in the JSON form the HiGHS driver reads: the objective
// c (in m's sense, "maximize" saying which), integrality (0 continuous, 1
// integer), variable bounds lb, ub, and the rows as a CSR matrix with
// bounds row_lo ≤ A·x ≤ row_hi; infinite bounds are the strings "inf" and
// "-inf". timeLimit (seconds) > 0 and relGap ≥ 0 set HiGHS's options.
// ObjConst is left out.
func (m *Model) WriteJSON(w io.Writer, timeLimit, relGap float64) error {
	if err := m.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	list := func(key string, n int, at func(i int) string) {
		fmt.Fprintf(bw, "%q:[", key)
		for i := range n {
			if i > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString(at(i))
		}
		bw.WriteString("],\n")
	}
	jnum := func(x float64) string {
		switch {
		case math.IsInf(x, 1):
			return `"inf"`
		case math.IsInf(x, -1):
			return `"-inf"`
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	c := make([]float64, len(m.Vars))
	for _, t := range m.Obj {
		c[t.Var] += t.Coef
	}
	fmt.Fprintf(bw, "{\"maximize\":%t,\"rows\":%d,\"time_limit\":%s,\"mip_rel_gap\":%s,\n", m.Maximize, len(m.Rows), jnum(timeLimit), jnum(relGap))
	list("c", len(c), func(i int) string { return jnum(c[i]) })
	list("integrality", len(m.Vars), func(i int) string {
		if m.Vars[i].Type == Continuous {
			return "0"
		}
		return "1"
	})
	list("lb", len(m.Vars), func(i int) string { return jnum(m.Vars[i].Lo) })
	list("ub", len(m.Vars), func(i int) string { return jnum(m.Vars[i].Hi) })
	lo := func(r Row) float64 {
		if r.Sense == LE {
			return math.Inf(-1)
		}
		return r.RHS
	}
	hi := func(r Row) float64 {
		if r.Sense == GE {
			return math.Inf(1)
		}
		return r.RHS
	}
	list("row_lo", len(m.Rows), func(i int) string { return jnum(lo(m.Rows[i])) })
	list("row_hi", len(m.Rows), func(i int) string { return jnum(hi(m.Rows[i])) })
	ptr := make([]int, len(m.Rows)+1)
	var idx []int
	var data []float64
	for i, r := range m.Rows {
		// Merge repeated variables: CSR readers may reject or sum them.
		seen := map[int]int{}
		for _, t := range r.Terms {
			if k, ok := seen[t.Var]; ok {
				data[k] += t.Coef
				continue
			}
			seen[t.Var] = len(idx)
			idx = append(idx, t.Var)
			data = append(data, t.Coef)
		}
		ptr[i+1] = len(idx)
	}
	list("indptr", len(ptr), func(i int) string { return strconv.Itoa(ptr[i]) })
	list("indices", len(idx), func(i int) string { return strconv.Itoa(idx[i]) })
	fmt.Fprintf(bw, "%q:[", "data")
	for i, v := range data {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(jnum(v))
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}
