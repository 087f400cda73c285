package fluid

import (
	"cmp"
	"math"
	"slices"

	"github.com/orrery/orrery/internal/scratch"
)

// filler fills one hot component: the hot links' shares in a heap, the
// flows with a finite peak sorted by it. Links and flows are numbered within
// the component (local indices).
type filler struct {
	capacity []float64 // per local link
	frozen   []float64 // load of the link's frozen connections (F)
	n        []int32   // unfrozen connections
	m        []int32   // connections frozen this round
	key      []float64 // share, while in the heap (or, scanning, while it has unfrozen connections)
	heap     []int32   // local links, least share first (scanning: those with unfrozen connections)
	pos      []int32   // place in the heap, -1 once popped
	adjOff   []int32   // local link l's crossings are adj[adjOff[l]:adjOff[l+1]]
	adj      []int32   // local flows, once per crossing
	flowOff  []int32   // local flow f's hot crossings are flowHot[flowOff[f]:flowOff[f+1]]
	flowHot  []int32   // local links
	done     []bool    // per local flow: frozen
	peak     []float64
	byPeak   []int32         // local flows with a finite peak, least first
	distinct []float64       // their distinct peaks, up to maxPeaks+1
	count    [maxPeaks]int32 // flows of each distinct peak
	bucket   []int8          // per local flow: its peak's index in distinct, -1 for +Inf
	hit      []int32         // local links on which something froze this round
}

// solve fills the hot component of flows fs (indices into flows, each
// crossing a hot link) on hot links ls (indices into capacity), ignoring
// the links that are not hot, and writes the rates into dst. local, indexed
// by link, is scratch.
func (w *filler) solve(dst, capacity []float64, flows []Flow, fs, ls, local []int32, hot []bool) {
	w.reset()
	for _, l := range ls {
		local[l] = w.addLink(capacity[l])
	}
	for _, f := range fs {
		fl := flows[f]
		w.addFlow(fl.Peak)
		for _, l := range fl.Links {
			if hot[l] {
				w.cross(local[l])
			}
		}
	}
	w.run(dst, fs)
}

// A component is given to the filler link by link (addLink, in local
// order), then flow by flow (addFlow, in local order, each followed by its
// crossings of the component's links), then run.

func (w *filler) reset() {
	w.capacity, w.frozen, w.n, w.m = w.capacity[:0], w.frozen[:0], w.n[:0], w.m[:0]
	w.done, w.peak, w.byPeak = w.done[:0], w.peak[:0], w.byPeak[:0]
	w.distinct, w.bucket = w.distinct[:0], w.bucket[:0]
	w.count = [maxPeaks]int32{}
	w.flowOff, w.flowHot = w.flowOff[:0], w.flowHot[:0]
	w.adjOff, w.adj = w.adjOff[:0], w.adj[:0]
}

// addLink adds a link of capacity c and returns its local index.
func (w *filler) addLink(c float64) int32 {
	w.capacity = append(w.capacity, c)
	w.frozen = append(w.frozen, 0)
	w.n = append(w.n, 0)
	w.m = append(w.m, 0)
	return int32(len(w.n) - 1)
}

// addFlow adds a flow of the given peak; its crossings follow.
func (w *filler) addFlow(peak float64) {
	i := int32(len(w.peak))
	w.flowOff = append(w.flowOff, int32(len(w.flowHot)))
	w.peak = append(w.peak, peak)
	w.done = append(w.done, false)
	k := int8(-1)
	if !math.IsInf(peak, 1) {
		w.byPeak = append(w.byPeak, i)
		if len(w.distinct) <= maxPeaks {
			k = w.peakIndex(peak)
		}
	}
	w.bucket = append(w.bucket, k)
}

// peakIndex returns the index of peak among the distinct peaks, adding it
// (counting past maxPeaks stops: sortByPeak then sorts).
func (w *filler) peakIndex(peak float64) int8 {
	for i, d := range w.distinct {
		if d == peak {
			w.count[i]++
			return int8(i)
		}
	}
	w.distinct = append(w.distinct, peak)
	if i := len(w.distinct) - 1; i < maxPeaks {
		w.count[i] = 1
		return int8(i)
	}
	return -1
}

// cross adds a crossing of local link j by the last flow added.
func (w *filler) cross(j int32) {
	w.flowHot = append(w.flowHot, j)
	w.n[j]++
}

// run fills the component given and writes its flows' rates into dst, at
// fs[local flow].
func (w *filler) run(dst []float64, fs []int32) {
	w.flowOff = append(w.flowOff, int32(len(w.flowHot)))
	nl := len(w.n)
	w.key = scratch.Resize(w.key, nl)
	w.sortByPeak()
	w.link()
	if nl <= scanLinks {
		w.scan(dst, fs)
		return
	}
	w.pos = scratch.Resize(w.pos, nl)
	w.heapify()
	next := 0 // into byPeak
	for left := len(w.peak); left > 0; {
		level := math.Inf(1)
		for len(w.heap) > 0 && w.n[w.heap[0]] == 0 {
			w.pop() // every flow on it froze elsewhere: its key is stale
		}
		if len(w.heap) > 0 {
			level = w.key[w.heap[0]]
		}
		next = w.nextPeak(next)
		if next < len(w.byPeak) {
			level = min(level, w.peak[w.byPeak[next]])
		}
		// Every link at the level saturates: its unfrozen flows freeze.
		// Shares are those of the round's start: updates wait for apply.
		for len(w.heap) > 0 && w.key[w.heap[0]] <= level {
			left -= w.saturate(dst, fs, w.pop(), level)
		}
		var k int
		next, k = w.peaks(dst, fs, next, level)
		left -= k
		w.apply(level, true)
	}
}

// scanLinks is the most links whose component run fills by scanning them
// every round (a few dozen instructions a link) rather than keeping their
// shares in a heap; the rounds are the same, so are the rates. A variable
// for the tests, which run both ways.
var scanLinks = 96

// scan is run's rounds without the heap: act holds the links with
// unfrozen connections, and each round's level is the least of their
// shares and of the unfrozen flows' peaks, as the heap gives it.
func (w *filler) scan(dst []float64, fs []int32) {
	act := w.heap[:0] // the heap's buffer: unused on this path
	for i := range int32(len(w.n)) {
		act = append(act, i) // every link has a crossing
	}
	next := 0 // into byPeak
	for left := len(w.peak); left > 0; {
		level := math.Inf(1)
		k := 0
		for _, l := range act {
			if w.n[l] > 0 {
				act[k] = l
				k++
				if w.key[l] < level {
					level = w.key[l]
				}
			}
		}
		act = act[:k]
		next = w.nextPeak(next)
		if next < len(w.byPeak) {
			level = min(level, w.peak[w.byPeak[next]])
		}
		for _, l := range act {
			if w.key[l] <= level {
				left -= w.saturate(dst, fs, l, level)
			}
		}
		next, k = w.peaks(dst, fs, next, level)
		left -= k
		w.apply(level, false)
	}
	w.heap = act[:0]
}

// nextPeak skips the frozen flows of byPeak from next.
func (w *filler) nextPeak(next int) int {
	for next < len(w.byPeak) && w.done[w.byPeak[next]] {
		next++
	}
	return next
}

// saturate freezes the unfrozen flows of local link l at level and
// returns how many.
func (w *filler) saturate(dst []float64, fs []int32, l int32, level float64) int {
	k := 0
	for _, f := range w.adj[w.adjOff[l]:w.adjOff[l+1]] {
		if !w.done[f] {
			k += w.freeze(dst, fs, f, level)
		}
	}
	return k
}

// peaks freezes, from byPeak[next], the unfrozen flows whose peak is at
// most level, and returns where it stopped and how many froze.
func (w *filler) peaks(dst []float64, fs []int32, next int, level float64) (int, int) {
	k := 0
	for ; next < len(w.byPeak); next++ {
		f := w.byPeak[next]
		if !w.done[f] {
			if w.peak[f] > level {
				break
			}
			k += w.freeze(dst, fs, f, level)
		}
	}
	return next, k
}

// sortByPeak sorts byPeak by peak, least first; ties in any order (flows
// of equal peak freeze in the same round). A NIC-limited fabric has few
// distinct peaks: up to maxPeaks of them, the flows are placed by counting.
func (w *filler) sortByPeak() {
	b, p := w.byPeak, w.peak
	if len(w.distinct) > maxPeaks {
		slices.SortFunc(b, func(x, y int32) int { return cmp.Compare(p[x], p[y]) })
		return
	}
	d := w.distinct
	// The distinct peaks in increasing order, and each one's first slot.
	var order [maxPeaks]uint8
	for i := range d {
		order[i] = uint8(i)
	}
	for i := 1; i < len(d); i++ {
		for j := i; j > 0 && d[order[j-1]] > d[order[j]]; j-- {
			order[j-1], order[j] = order[j], order[j-1]
		}
	}
	var at [maxPeaks]int32
	next := int32(0)
	for _, k := range order[:len(d)] {
		at[k] = next
		next += w.count[k]
	}
	for i, k := range w.bucket {
		if k >= 0 {
			b[at[k]] = int32(i)
			at[k]++
		}
	}
}

// maxPeaks is how many distinct finite peaks sortByPeak counts.
const maxPeaks = 16

// hot reports whether a link of capacity c whose crossings' peaks sum to
// load can saturate, keep being margin's factor for the problem. One that is
// not hot provably cannot, so it never sets a level nor freezes a flow, and
// the filling need not look at it.
func hot(c, load, keep float64) bool { return !(load <= c*keep) }

// margin returns the factor keep = 1 - delta for a problem of flows flows
// crossing links crossings times in all. A link with n crossings whose peaks
// sum to load <= c(1 - delta) has, at every round, a fair share above the
// level: the frozen load F plus n times the level is at most load (no flow
// exceeds its peak), so capacity - F - n*level >= delta*c in exact
// arithmetic, and delta = (3*crossings + 2*flows + 8) * 2^-52 bounds the
// rounding of the summed load (n <= crossings terms), of F (at most one
// update per round, so per flow), of the share's subtraction and division,
// and of c*keep.
func margin(crossings, flows int) float64 {
	return 1 - float64(float64(3*crossings+2*flows+8)*0x1p-52) // no fused multiply-subtract
}

// link builds the hot links' crossings and their shares. The order of a link's crossings plays no part in
// the rates: the flows that freeze in a round all freeze at its level, and
// each link's update depends only on how many of its connections froze.
func (w *filler) link() {
	nl := len(w.n)
	w.adjOff = scratch.Resize(w.adjOff, nl+1)
	w.adjOff[0] = 0
	for i := range nl {
		w.adjOff[i+1] = w.adjOff[i] + w.n[i]
	}
	w.adj = scratch.Resize(w.adj, int(w.adjOff[nl]))
	copy(w.m, w.adjOff[:nl]) // m as the fill cursor, zeroed again below
	for i := range len(w.flowOff) - 1 {
		for _, j := range w.flowHot[w.flowOff[i]:w.flowOff[i+1]] {
			w.adj[w.m[j]] = int32(i)
			w.m[j]++
		}
	}
	clear(w.m)
	for i := range nl { // every link has a crossing
		w.key[i] = share(w.capacity[i], 0, w.n[i])
	}
	w.hit = w.hit[:0]
}

// heapify puts every link in the heap of shares.
func (w *filler) heapify() {
	nl := len(w.n)
	w.heap = scratch.Resize(w.heap, nl)
	for i := range nl {
		w.pos[i] = int32(i)
		w.heap[i] = int32(i)
	}
	for i := nl/2 - 1; i >= 0; i-- {
		w.down(i)
	}
}

// freeze freezes local flow f at level and returns 1.
func (w *filler) freeze(dst []float64, fs []int32, f int32, level float64) int {
	w.done[f] = true
	dst[fs[f]] = level
	for _, j := range w.flowHot[w.flowOff[f]:w.flowOff[f+1]] {
		if w.m[j] == 0 {
			w.hit = append(w.hit, j)
		}
		w.m[j]++
	}
	return 1
}

// apply moves this round's frozen connections into the links' loads and
// updates their shares, and their places in the heap if heap. A link left
// with no unfrozen connection keeps a stale key; run discards it when it
// reaches the top, scan at its next round.
func (w *filler) apply(level float64, heap bool) {
	for _, l := range w.hit {
		// The conversion keeps the compiler from fusing the
		// multiply-add, so every platform rounds alike.
		w.frozen[l] += float64(float64(w.m[l]) * level)
		w.n[l] -= w.m[l]
		w.m[l] = 0
		if w.n[l] > 0 {
			w.key[l] = share(w.capacity[l], w.frozen[l], w.n[l])
			if heap {
				w.fix(int(w.pos[l]))
			}
		}
	}
	w.hit = w.hit[:0]
}

// The heap of links by share. Ties between equal shares need no rule: every
// link at the level is popped in the same round.

func (w *filler) less(i, j int) bool { return w.key[w.heap[i]] < w.key[w.heap[j]] }

func (w *filler) swap(i, j int) {
	h := w.heap
	h[i], h[j] = h[j], h[i]
	w.pos[h[i]], w.pos[h[j]] = int32(i), int32(j)
}

func (w *filler) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !w.less(i, p) {
			return
		}
		w.swap(i, p)
		i = p
	}
}

func (w *filler) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(w.heap) {
			return
		}
		if c+1 < len(w.heap) && w.less(c+1, c) {
			c++
		}
		if !w.less(c, i) {
			return
		}
		w.swap(i, c)
		i = c
	}
}

func (w *filler) fix(i int) {
	w.up(i)
	w.down(i)
}

// pop removes and returns the least-share link.
func (w *filler) pop() int32 {
	l := w.heap[0]
	last := len(w.heap) - 1
	w.swap(0, last)
	w.heap = w.heap[:last]
	w.pos[l] = -1
	w.down(0)
	return l
}
