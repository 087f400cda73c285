package market

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// brutePackable decides by exhaustive search whether counts pack into T
// rounds of M GPUs, each job at most once per round.
func brutePackable(widths, counts []int, M, T int) bool {
	free := make([]int, T)
	for t := range free {
		free[t] = M
	}
	var rec func(j int) bool
	rec = func(j int) bool {
		if j == len(widths) {
			return true
		}
		// choose a subset of rounds of size counts[j]
		var pick func(t, left int) bool
		pick = func(t, left int) bool {
			if left == 0 {
				return rec(j + 1)
			}
			if T-t < left {
				return false
			}
			if free[t] >= widths[j] {
				free[t] -= widths[j]
				if pick(t+1, left-1) {
					free[t] += widths[j]
					return true
				}
				free[t] += widths[j]
			}
			return pick(t+1, left)
		}
		return pick(0, counts[j])
	}
	return rec(0)
}

// packWorkspace prepares a workspace for packing jobs of the given widths.
func packWorkspace(t *testing.T, widths []int, M, T int) *Workspace {
	p := &Problem{GPUs: M, Config: Config{Rounds: T}}
	for j, w := range widths {
		p.Jobs = append(p.Jobs, Job{ID: j, GPUs: w, Epochs: 10, MeanEpoch: 100, Remaining: 1000, FairFinish: 1e6})
	}
	ws := NewWorkspace()
	if err := p.validate(&ws.cfg); err != nil {
		t.Fatal(err)
	}
	ws.p = p
	if err := ws.setup(); err != nil {
		t.Fatal(err)
	}
	for j := range ws.tab.prio {
		ws.tab.prio[j] = 1
	}
	ws.prepare()
	return ws
}

// checkPacking verifies w.pk.x against counts and the capacity.
func checkPacking(t *testing.T, ws *Workspace, widths []int, counts []int32, M, T int) {
	t.Helper()
	used := make([]int, T)
	for j := range widths {
		n := 0
		for r := 0; r < T; r++ {
			if ws.pk.x[j*T+r] {
				n++
				used[r] += widths[j]
			}
		}
		if n != int(counts[j]) {
			t.Fatalf("job %d packed %d times, want %d", j, n, counts[j])
		}
	}
	for r, u := range used {
		if u > M {
			t.Fatalf("round %d uses %d of %d GPUs", r, u, M)
		}
	}
}

// TestPackGreedyExact checks the packing theorem of pack.go: with widths in
// a divisibility chain whose members but the largest divide M, the greedy
// packs exactly the packable count vectors.
func TestPackGreedyExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	chains := [][]int{{1, 2, 4}, {1, 2, 4, 8}, {1, 3, 6}, {2, 4}, {1, 2}}
	checked, packable := 0, 0
	for it := 0; it < 4000; it++ {
		chain := chains[rng.IntN(len(chains))]
		// M: a multiple of every width but the largest, at least the largest.
		lcm := 1
		for _, w := range chain[:len(chain)-1] {
			lcm = w // chain: the second largest is the lcm of the others
		}
		M := lcm * (1 + rng.IntN(4))
		for M < chain[len(chain)-1] {
			M += lcm
		}
		T := 1 + rng.IntN(5)
		N := 1 + rng.IntN(6)
		widths := make([]int, N)
		counts := make([]int32, N)
		total := 0
		for j := range widths {
			widths[j] = chain[rng.IntN(len(chain))]
			counts[j] = int32(rng.IntN(T + 1))
			total += widths[j] * int(counts[j])
		}
		if total > M*T { // aggregate infeasible: trivially unpackable
			continue
		}
		ws := packWorkspace(t, widths, M, T)
		if !ws.pk.exact {
			t.Fatalf("widths %v on M=%d should satisfy the theorem", widths, M)
		}
		ok, _ := ws.pack(counts)
		want := brutePackable(widths, toInt(counts), M, T)
		if ok != want {
			t.Fatalf("widths %v counts %v M=%d T=%d: greedy %v, brute force %v", widths, counts, M, T, ok, want)
		}
		if ok {
			checkPacking(t, ws, widths, counts, M, T)
			packable++
		}
		checked++
	}
	if checked < 2000 || packable < 500 || checked-packable < 100 {
		t.Fatalf("weak coverage: %d checked, %d packable", checked, packable)
	}
}

// TestPackOutsideTheorem shows the conditions matter (the greedy alone fails
// on packable counts) and that the exact search repairs it.
func TestPackOutsideTheorem(t *testing.T) {
	// M = 6, widths {2, 3}: not a chain. Two 3-GPU jobs and three 2-GPU jobs
	// in 2 rounds: {3,3} and {2,2,2} pack, the greedy puts a 3 in each round.
	widths := []int{3, 3, 2, 2, 2}
	counts := []int32{1, 1, 1, 1, 1}
	ws := packWorkspace(t, widths, 6, 2)
	if ws.pk.exact {
		t.Fatal("{2,3} must not count as exact")
	}
	if ok, _ := ws.pack(counts); ok {
		t.Fatal("expected the greedy to fail on this instance")
	}
	if r, _ := ws.packCounts(counts); r != packed {
		t.Fatalf("exact search: %v, want packed", r)
	}
	checkPacking(t, ws, widths, counts, 6, 2)

	rng := rand.New(rand.NewPCG(5, 6))
	greedyMiss := 0
	for it := 0; it < 3000; it++ {
		M := 2 + rng.IntN(9)
		T := 1 + rng.IntN(4)
		N := 1 + rng.IntN(6)
		widths := make([]int, N)
		counts := make([]int32, N)
		for j := range widths {
			widths[j] = 1 + rng.IntN(min(M, 5))
			if it%2 == 0 { // the hard family: widths 2 and 3 on M = 6
				M, widths[j] = 6, 2+rng.IntN(2)
			}
			counts[j] = int32(rng.IntN(T + 1))
		}
		ws := packWorkspace(t, widths, M, T)
		want := brutePackable(widths, toInt(counts), M, T)
		r, _ := ws.packCounts(counts)
		if (r == packed) != want || r == undecided {
			t.Fatalf("widths %v counts %v M=%d T=%d: got %v, brute force %v", widths, counts, M, T, r, want)
		}
		if r == packed {
			checkPacking(t, ws, widths, counts, M, T)
			if ok, _ := ws.pack(counts); !ok {
				greedyMiss++
			}
		}
	}
	if greedyMiss == 0 {
		t.Fatal("expected some instances where only the exact search packs")
	}
	t.Logf("%d packable instances needed the exact search", greedyMiss)
}

func toInt(c []int32) []int {
	out := make([]int, len(c))
	for i, v := range c {
		out[i] = int(v)
	}
	return out
}

func TestNextPickEnumeratesCompositions(t *testing.T) {
	gstart := []int32{0, 2, 3, 6} // groups of sizes 2, 1, 3
	for n := int32(0); n <= 6; n++ {
		pick := make([]int32, 3)
		rest := n
		for g := range pick {
			pick[g] = min(rest, gstart[g+1]-gstart[g])
			rest -= pick[g]
		}
		var got [][]int32
		for {
			got = append(got, slices.Clone(pick))
			if !nextPick(pick, gstart) {
				break
			}
		}
		want := 0
		for a := int32(0); a <= 2; a++ {
			for b := int32(0); b <= 1; b++ {
				if c := n - a - b; c >= 0 && c <= 3 {
					want++
				}
			}
		}
		if len(got) != want {
			t.Fatalf("n=%d: %d compositions %v, want %d", n, len(got), got, want)
		}
		for i := 1; i < len(got); i++ {
			if slices.Compare(got[i-1], got[i]) <= 0 {
				t.Fatalf("n=%d: not decreasing: %v", n, got)
			}
		}
	}
}
