package policy

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bruteAssign returns the least total cost of assigning each row to a
// distinct column, by enumeration.
func bruteAssign(c [][]float64) float64 {
	nr, nc := len(c), len(c[0])
	used := make([]bool, nc)
	best := math.Inf(1)
	var rec func(i int, s float64)
	rec = func(i int, s float64) {
		if i == nr {
			best = min(best, s)
			return
		}
		for j := range nc {
			if !used[j] {
				used[j] = true
				rec(i+1, s+c[i][j])
				used[j] = false
			}
		}
	}
	rec(0, 0)
	return best
}

func randomCosts(rng *rand.Rand, nr, nc, levels int) [][]float64 {
	c := make([][]float64, nr)
	for i := range c {
		c[i] = make([]float64, nc)
		for j := range c[i] {
			c[i][j] = float64(rng.IntN(levels))
		}
	}
	return c
}

// The assignment is a permutation of distinct columns with the optimal
// total cost, on random matrices with many ties.
func TestAssignmentOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var a assignment
	for k := range 3000 {
		nr := 1 + rng.IntN(5)
		nc := nr + rng.IntN(3)
		c := randomCosts(rng, nr, nc, 1+rng.IntN(6))
		col, err := a.solve(nr, nc, func(i, j int) float64 { return c[i][j] })
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		var total float64
		for i, j := range col {
			if j < 0 || j >= nc || seen[j] {
				t.Fatalf("case %d: columns %v", k, col)
			}
			seen[j] = true
			total += c[i][j]
		}
		if want := bruteAssign(c); total != want {
			t.Fatalf("case %d %v: cost %v, optimum %v", k, c, total, want)
		}
	}
	if _, err := a.solve(1, 2, func(i, j int) float64 { return math.Inf(1) }); err == nil {
		t.Fatal("an infeasible assignment was solved")
	}
}

// scipyPython returns a Python with SciPy, or "".
func scipyPython() string {
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import scipy.optimize").Run() == nil {
			return py
		}
	}
	return ""
}

// On matrices with ties, including the AlloX matrices of identical
// workers, the assignment is SciPy's linear_sum_assignment's, column for
// column (the authors' AlloX uses it; its ties decide which jobs run).
// Skipped without a Python with SciPy (Debian's python3-scipy).
func TestAssignmentMatchesSciPy(t *testing.T) {
	py := scipyPython()
	if py == "" {
		t.Skip("no python3 with scipy")
	}
	rng := rand.New(rand.NewPCG(2, 3))
	var cases [][][]float64
	for range 300 {
		nr := 1 + rng.IntN(8)
		cases = append(cases, randomCosts(rng, nr, nr+rng.IntN(6), 1+rng.IntN(4)))
	}
	for range 100 { // AlloX-shaped: k·q_r + d_r over n workers and L positions
		L, n := 1+rng.IntN(7), 1+rng.IntN(4)
		c := make([][]float64, L)
		for r := range c {
			q, d := float64(1+rng.IntN(4))*100, float64(rng.IntN(3))*50
			for col := range n * L {
				c[r] = append(c[r], float64(float64(col/n+1)*q)+d)
			}
		}
		cases = append(cases, c)
	}
	var in bytes.Buffer
	for _, c := range cases {
		fmt.Fprintf(&in, "%d %d", len(c), len(c[0]))
		for _, row := range c {
			for _, v := range row {
				fmt.Fprintf(&in, " %v", v)
			}
		}
		in.WriteByte('\n')
	}
	cmd := exec.Command(py, "-c", `import sys, numpy as np
from scipy.optimize import linear_sum_assignment
for line in sys.stdin:
    f = line.split(); nr, nc = int(f[0]), int(f[1])
    m = np.array([float(x) for x in f[2:]]).reshape(nr, nc)
    print(" ".join(str(c) for c in linear_sum_assignment(m)[1]))`)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var a assignment
	for k, c := range cases {
		col, err := a.solve(len(c), len(c[0]), func(i, j int) float64 { return c[i][j] })
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Trim(fmt.Sprint(col), "[]"); got != lines[k] {
			t.Fatalf("case %d %v: columns %s, scipy %s", k, c, got, lines[k])
		}
	}
}

func demands(rem ...float64) []Demand {
	d := make([]Demand, len(rem))
	for i, r := range rem {
		d[i] = Demand{ID: i, GPUs: 1, Throughput: 1, Remaining: r, Elapsed: float64(1000 - i)}
	}
	return d
}

// AlloX by hand. One GPU, ten waiting jobs, alpha 0.5: the five longest
// waiting (jobs 0-4) are matched to positions 1-5 of the one worker, the
// shortest of them (job 3, 50 s) last from the end, i.e. first: it alone is
// allocated. At the next allocation it keeps its GPU (allocated 1), so no
// worker is left to match and nothing changes.
func TestAlloXShortestFirst(t *testing.T) {
	a := &AlloX{Alpha: 0.5}
	jobs := demands(400, 300, 200, 50, 100, 10, 10, 10, 10, 10)
	x := make([]float64, len(jobs))
	if err := a.Allocate(x, jobs, 1); err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 0, 0, 1, 0, 0, 0, 0, 0, 0}
	if diff := cmp.Diff(want, x); diff != "" {
		t.Fatalf("allocation (-want +got):\n%s", diff)
	}
	if err := a.Allocate(x, jobs, 1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, x); diff != "" {
		t.Fatalf("second allocation (-want +got):\n%s", diff)
	}
	// With the default alpha 0.2, ⌊0.2·10⌋ = 2 jobs are matched; with one
	// GPU kept by job 3 and a second GPU free, max(⌊0.2·9⌋, 1) = 1: the
	// longest waiting candidate, job 0, gets it.
	b := &AlloX{}
	b.prev = map[int]float64{3: 1}
	if err := b.Allocate(x, jobs, 2); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{1, 0, 0, 1, 0, 0, 0, 0, 0, 0}, x); diff != "" {
		t.Fatalf("alpha 0.2 (-want +got):\n%s", diff)
	}
}

// Two GPUs, four candidates (alpha 1): positions 1 and 2 on each worker;
// the two shortest jobs run first. A two-GPU job matched to a worker is
// allocated 1/2, and keeps 1/2 (as upstream) once no longer matched, while
// a single-GPU job allocated 1 keeps its worker.
func TestAlloXWidths(t *testing.T) {
	a := &AlloX{Alpha: 1}
	jobs := demands(40, 10, 30, 20)
	jobs[1].GPUs = 2
	x := make([]float64, 4)
	if err := a.Allocate(x, jobs, 2); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{0, 0.5, 0, 1}, x); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// Job 3 keeps its GPU; job 1 (at 1/2, not kept) is a candidate again
	// with jobs 0 and 2 for the one GPU left, now 35 s from the end: the
	// shortest, job 2 (30 s), runs first, and job 1 keeps its 1/2.
	jobs[1].Remaining = 35
	if err := a.Allocate(x, jobs, 2); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{0, 0.5, 1, 1}, x); diff != "" {
		t.Fatalf("second allocation (-want +got):\n%s", diff)
	}
}

func TestGandivaFair(t *testing.T) {
	for _, c := range []struct {
		jobs, gpus int
		want       float64
	}{{8, 4, 0.5}, {2, 4, 1}, {3, 1, 1.0 / 3}} {
		jobs := demands(make([]float64, c.jobs)...)
		jobs[0].GPUs = 1
		x := make([]float64, c.jobs)
		if err := (GandivaFair{}).Allocate(x, jobs, c.gpus); err != nil {
			t.Fatal(err)
		}
		for _, v := range x {
			if v != c.want {
				t.Fatalf("%d jobs on %d GPUs: %v, want %v each", c.jobs, c.gpus, x, c.want)
			}
		}
	}
}
