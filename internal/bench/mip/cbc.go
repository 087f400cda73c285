package mip

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Status is how a solver run ended.
type Status uint8

const (
	Unknown    Status = iota
	Optimal           // proven optimal (within the solver's gap tolerances)
	Feasible          // stopped (time limit) with a solution and a bound
	NoSolution        // stopped (time limit) before finding any solution
	Infeasible        // proven infeasible
	Unbounded
)

func (s Status) String() string {
	switch s {
	case Optimal:
		return "optimal"
	case Feasible:
		return "feasible"
	case NoSolution:
		return "no solution"
	case Infeasible:
		return "infeasible"
	case Unbounded:
		return "unbounded"
	}
	return "unknown"
}

// Options configure [Solve]. The zero value runs "cbc" from PATH with no
// time limit, one thread and CBC's default gap tolerances.
type Options struct {
	Binary    string        // the solver program; "" means "cbc"
	TimeLimit time.Duration // 0: none (the context still applies)
	Threads   int           // 0 means 1
	// RatioGap, if > 0, stops at this relative gap (CBC's ratioGap); 0
	// keeps CBC's default, which proves optimality.
	RatioGap float64
	// Dir, if set, receives the model, log and solution files, named
	// after Name, and keeps them; otherwise a temporary directory is used
	// and removed.
	Dir  string
	Name string // file stem; "" means "model"
}

// Result is a solver run.
type Result struct {
	Status    Status
	Objective float64   // of the model (its sense), at Values; NaN without a solution
	Bound     float64   // the solver's bound on the optimum, in the model's sense; NaN if none
	Gap       float64   // |Objective − Bound| / max(|Objective|, 1e-9); 0 when Optimal
	Values    []float64 // one per model variable; nil without a solution
	Nodes     int       // branch-and-bound nodes
	Wall      time.Duration
	CPU       time.Duration // the solver process's user + system time
	Log       string        // the solver's output
}

// ErrSolver reports a solver that is missing, crashed or wrote output this
// package cannot read.
var ErrSolver = errors.New("mip: solver failed")

// Available reports whether the cbc binary is on PATH.
func Available() bool {
	_, err := exec.LookPath("cbc")
	return err == nil
}

// Solve writes m as an LP file and solves it with CBC. Hitting the time
// limit is not an error: the result's status says what was found.
func Solve(ctx context.Context, m *Model, opt Options) (*Result, error) {
	bin := opt.Binary
	if bin == "" {
		bin = "cbc"
	}
	if _, err := exec.LookPath(bin); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSolver, err)
	}
	dir, name, cleanup, err := workDir(opt.Dir, opt.Name, "orrery-mip-")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	lp := filepath.Join(dir, name+".lp")
	sol := filepath.Join(dir, name+".sol")
	f, err := os.Create(lp)
	if err != nil {
		return nil, err
	}
	if err := m.WriteLP(f); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	os.Remove(sol)

	threads := max(opt.Threads, 1)
	args := []string{lp, "threads", strconv.Itoa(threads)}
	if opt.TimeLimit > 0 {
		args = append(args, "sec", num(opt.TimeLimit.Seconds()))
	}
	if opt.RatioGap > 0 {
		args = append(args, "ratioGap", num(opt.RatioGap))
	}
	args = append(args, "printingOptions", "all", "solve", "solu", sol)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	runErr := cmd.Run()
	res := &Result{Wall: time.Since(t0), Log: out.String(), Objective: math.NaN(), Bound: math.NaN(), Gap: math.NaN()}
	if st := cmd.ProcessState; st != nil {
		res.CPU = st.UserTime() + st.SystemTime()
	}
	if opt.Dir != "" {
		os.WriteFile(filepath.Join(dir, name+".log"), out.Bytes(), 0o644)
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %v\n%s", ErrSolver, runErr, tail(res.Log))
	}
	parseLog(res, m)
	if err := readSolution(res, sol, m); err != nil {
		return nil, err
	}
	return res, nil
}

// parseLog reads the bound and node count from CBC's log:
//
//	Cbc0005I Partial search - best objective 10.331175 (best possible 10.331104), took ...
//	Result - Stopped on time limit
//	Objective value:                10.33117525
//	Lower bound:                    10.331
//	Enumerated nodes:               12016
//
// The bound is the last "best possible" (8 significant digits), else the
// summary's "Lower bound" (3 decimals). It is the LP file's (a
// minimization); it is turned back into m's sense and ObjConst is added.
func parseLog(res *Result, m *Model) {
	sign := 1.0
	if m.Maximize {
		sign = -1
	}
	possible, lower := math.NaN(), math.NaN()
	sc := bufio.NewScanner(strings.NewReader(res.Log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if _, after, ok := strings.Cut(line, "best possible "); ok {
			if f := strings.FieldsFunc(after, func(r rune) bool { return r == ' ' || r == ')' || r == ',' }); len(f) > 0 {
				if v, err := strconv.ParseFloat(f[0], 64); err == nil {
					possible = v
				}
			}
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "Lower bound":
			if v, err := strconv.ParseFloat(val, 64); err == nil {
				lower = v
			}
		case "Enumerated nodes":
			res.Nodes, _ = strconv.Atoi(val)
		}
	}
	b := possible
	if math.IsNaN(b) || math.Abs(b) >= 1e49 {
		b = lower
	}
	if !math.IsNaN(b) && math.Abs(b) < 1e49 {
		res.Bound = sign*b + m.ObjConst
	}
}

// readSolution sets the status from the first line of CBC's solution file
// and reads the values ("printingOptions all" lists rows, then columns):
//
//	Optimal - objective value -0.50000000
//	Stopped on time - objective value -0.50000000
//	Stopped on time (no integer solution - continuous used) - objective value ...
//	Infeasible - objective value ...
//	Integer infeasible - objective value ...
//	      0 x_0                    1                      -3
//
// with "**" before lines whose values break a bound. Only optimal and
// stopped-with-a-solution files hold a solution.
func readSolution(res *Result, path string, m *Model) error {
	b, err := os.ReadFile(path)
	if err != nil {
		// CBC writes no file when it stops before the search (an
		// infeasible LP found while reading); the log says why.
		if l := strings.ToLower(res.Log); strings.Contains(l, "infeasible") {
			res.Status = Infeasible
			return nil
		} else if strings.Contains(l, "unbounded") {
			res.Status = Unbounded
			return nil
		}
		return fmt.Errorf("%w: %v\n%s", ErrSolver, err, tail(res.Log))
	}
	lines := strings.Split(string(b), "\n")
	head := strings.ToLower(lines[0])
	switch {
	case strings.Contains(head, "no integer solution") || strings.Contains(head, "no feasible"):
		res.Status = NoSolution
	case strings.HasPrefix(head, "optimal"):
		res.Status = Optimal
	case strings.Contains(head, "infeasible"):
		res.Status = Infeasible
	case strings.Contains(head, "unbounded"):
		res.Status = Unbounded
	case strings.HasPrefix(head, "stopped"):
		res.Status = Feasible
	default:
		return fmt.Errorf("%w: solution header %q", ErrSolver, lines[0])
	}
	if res.Status != Optimal && res.Status != Feasible {
		res.Objective, res.Gap = math.NaN(), math.NaN()
		if res.Status != NoSolution {
			res.Bound = math.NaN()
		}
		return nil
	}
	index := make(map[string]int, len(m.Vars))
	for i, v := range m.Vars {
		index[v.Name] = i
	}
	x := make([]float64, len(m.Vars))
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == "**" {
			f = f[1:]
		}
		if len(f) < 3 {
			continue
		}
		i, ok := index[f[1]]
		if !ok {
			continue // a row's activity
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return fmt.Errorf("%w: value %q of %s", ErrSolver, f[2], f[1])
		}
		x[i] = v
	}
	res.Values = x
	// The objective of the values themselves, not the log's rounded print.
	res.Objective = m.Objective(x)
	if res.Status == Optimal {
		res.Bound = res.Objective // within CBC's gap tolerances
		res.Gap = 0
	} else if !math.IsNaN(res.Bound) {
		res.Gap = math.Abs(res.Objective-res.Bound) / max(math.Abs(res.Objective), 1e-9)
	}
	return nil
}

func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}

// workDir is dir, created if missing, or a new temporary folder named by
// pattern that cleanup removes; stem is name or "model".
func workDir(dir, name, pattern string) (_, stem string, cleanup func(), err error) {
	cleanup = func() {}
	if stem = name; stem == "" {
		stem = "model"
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", pattern); err != nil {
			return "", "", cleanup, err
		}
		return dir, stem, func() { os.RemoveAll(dir) }, nil
	}
	return dir, stem, cleanup, os.MkdirAll(dir, 0o755)
}
