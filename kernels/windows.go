package kernels

// Run is one run of a window scan ([Windows]): Len consecutive residues
// from Start, each counted N times. In memory it is 16 bytes: Start and
// Len as int32s at offsets 0 and 4, N as an int64 at 8 (the table the
// windows import reads, see the package documentation).
type Run struct {
	Start, Len int32
	N          int64
}

// WindowsScratch returns the length of the scratch [Windows] needs for a
// circle of m residues: its prefix sums over two turns.
func WindowsScratch(m int) int { return 2*m + 1 }

// Windows adds to out[s] x0 and, for every run, N times the sum of psi
// over the run's residues moved by from0+s, on a circle of m = len(psi)
// residues:
//
//	for s := range out {
//		out[s] += x0
//		for _, r := range runs {
//			for c := r.Start; c < r.Start+r.Len; c++ {
//				out[s] += r.N * psi[(int(c)+from0+s)%m]
//			}
//		}
//	}
//
// (the link search's run scan: the excess of a job whose pattern is runs
// delayed by from0+s, on top of x0, the excess without its demand; adding
// x0 here spares the caller a pass over out). It takes each inner sum as
// one difference of the prefix sums of psi over two turns, which it
// writes into pre (as far as the windows reach), so the cost is at most
// 2m plus one step per run and shift. pre must hold WindowsScratch(m)
// entries; Windows uses them as scratch.
//
// It panics if psi is empty, pre is too short, from0 is outside [0, m),
// len(out) > m, or a run starts outside [0, m) or is longer than m. Sums
// and products wrap as int64 arithmetic does; keeping them within int64
// is the caller's contract.
func Windows(out []int64, x0 int64, psi []int64, runs []Run, from0 int, pre []int64) {
	m := len(psi)
	if m == 0 {
		panic("kernels: Windows with an empty psi")
	}
	if len(pre) < WindowsScratch(m) {
		panic("kernels: Windows scratch too short")
	}
	if from0 < 0 || from0 >= m || len(out) > m {
		panic("kernels: Windows shifts outside [0, m)")
	}
	for _, r := range runs {
		if uint(r.Start) >= uint(m) || uint(r.Len) > uint(m) {
			panic("kernels: Windows run outside the circle")
		}
	}
	windows(out, x0, psi, runs, from0, pre)
}

// windowsGeneric is the reference for [Windows], its arguments checked.
func windowsGeneric(out []int64, x0 int64, psi []int64, runs []Run, from0 int, pre []int64) {
	m := len(psi)
	prefix(pre[:2*m+1], psi, windowsReach(len(out), m, runs, from0))
	if len(runs) == 0 {
		for s := range out {
			out[s] += x0
		}
		return
	}
	for i, r := range runs {
		// Shift from0+s starts the run at residue a0+s, which wraps to 0
		// at s = m-a0 (len(out) <= m: one wrap at most).
		a0, l := int(r.Start)+from0, int(r.Len)
		if a0 >= m {
			a0 -= m
		}
		k := min(len(out), m-a0)
		if i == 0 {
			// The first run adds x0 too.
			addWindowsX(out[:k], pre[a0:], pre[a0+l:], r.N, x0)
			addWindowsX(out[k:], pre, pre[l:], r.N, x0)
			continue
		}
		addWindows(out[:k], pre[a0:], pre[a0+l:], r.N)
		addWindows(out[k:], pre, pre[l:], r.N)
	}
}

// windowsReach returns the last prefix sum the windows of runs read at k
// shifts from from0: a run's start plus its length at the last shift
// before the start wraps (after it, the windows lie lower).
func windowsReach(k, m int, runs []Run, from0 int) int {
	if k == 0 {
		return 0
	}
	reach := 0
	for _, r := range runs {
		a0 := int(r.Start) + from0
		if a0 >= m {
			a0 -= m
		}
		reach = max(reach, a0+min(k, m-a0)-1+int(r.Len))
	}
	return reach
}

// prefix sets pre[i], i <= reach, to the sum of psi over its first i
// residues, on two turns of the circle (pre[m+i] = pre[m] + pre[i]), so
// that a window of length l <= m starting at residue a < m is
// pre[a+l] - pre[a] however it wraps. Past reach pre is left as it was.
func prefix(pre, psi []int64, reach int) {
	m := len(psi)
	var x int64
	pre[0] = 0
	for i, v := range psi[:min(reach, m)] {
		x += v
		pre[i+1] = x
	}
	if reach <= m {
		return
	}
	for i, v := range pre[1 : reach-m+1] {
		pre[m+1+i] = x + v
	}
}

// addWindowsX adds x0 and n times hi[s] - lo[s] to each dst[s].
func addWindowsX(dst, lo, hi []int64, n, x0 int64) {
	lo, hi = lo[:len(dst)], hi[:len(dst)]
	for s := range dst {
		dst[s] += x0 + n*(hi[s]-lo[s])
	}
}

// addWindows adds n times hi[s] - lo[s] to each dst[s]: a run's window
// sums at consecutive shifts.
func addWindows(dst, lo, hi []int64, n int64) {
	lo, hi = lo[:len(dst)], hi[:len(dst)]
	for s := range dst {
		dst[s] += n * (hi[s] - lo[s])
	}
}
