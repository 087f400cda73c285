package fluid

import (
	"cmp"
	"math"
	"slices"
)

// filler fills one component: the links' shares in a heap, the flows with a
// finite peak sorted by it. Links and flows are numbered within the
// component (local indices).
type filler struct {
	capacity []float64 // per local link
	frozen   []float64 // load of the link's frozen connections (F)
	n        []int32   // unfrozen connections
	m        []int32   // connections frozen this round
	key      []float64 // share, while in the heap
	pos      []int32   // place in the heap, -1 when out
	heap     []int32   // local links, least share first
	adjOff   []int32   // local link l's crossings are adj[adjOff[l]:adjOff[l+1]]
	adj      []int32   // local flows, once per crossing
	done     []bool    // per local flow: frozen
	peak     []float64 // per local flow
	byPeak   []int32   // local flows with a finite peak, least first
	hit      []int32   // local links on which something froze this round
}

// solve fills the component of flows fs (indices into flows) on links ls
// (indices into capacity) and writes the rates into dst. local, indexed by
// link, is scratch: it is set to each link's index in ls.
func (w *filler) solve(dst, capacity []float64, flows []Flow, fs, ls []int32, local []int32) {
	w.load(capacity, flows, fs, ls, local)
	next := 0 // into byPeak
	for left := len(fs); left > 0; {
		level := math.Inf(1)
		if len(w.heap) > 0 {
			level = w.key[w.heap[0]]
		}
		for next < len(w.byPeak) && w.done[w.byPeak[next]] {
			next++
		}
		if next < len(w.byPeak) {
			level = min(level, w.peak[w.byPeak[next]])
		}
		// Every link at the level saturates: its unfrozen flows freeze.
		// Shares are those of the round's start: updates wait for apply.
		for len(w.heap) > 0 && w.key[w.heap[0]] <= level {
			l := w.pop()
			for _, f := range w.adj[w.adjOff[l]:w.adjOff[l+1]] {
				if !w.done[f] {
					left -= w.freeze(dst, flows, fs, local, f, level)
				}
			}
		}
		for ; next < len(w.byPeak); next++ {
			f := w.byPeak[next]
			if !w.done[f] {
				if w.peak[f] > level {
					break
				}
				left -= w.freeze(dst, flows, fs, local, f, level)
			}
		}
		w.apply(level)
	}
}

// load sets up the component's links and flows.
func (w *filler) load(capacity []float64, flows []Flow, fs, ls []int32, local []int32) {
	nl, nf := len(ls), len(fs)
	w.capacity = grow(w.capacity, nl)
	w.frozen = grow(w.frozen, nl)
	w.n = grow(w.n, nl)
	w.m = grow(w.m, nl)
	w.key = grow(w.key, nl)
	w.pos = grow(w.pos, nl)
	w.adjOff = grow(w.adjOff, nl+1)
	clear(w.n)
	clear(w.m)
	clear(w.adjOff)
	for i, l := range ls {
		local[l] = int32(i)
		w.capacity[i] = capacity[l]
		w.frozen[i] = 0
	}
	w.done = grow(w.done, nf)
	w.peak = grow(w.peak, nf)
	w.byPeak = w.byPeak[:0]
	crossings := 0
	for i, f := range fs {
		fl := flows[f]
		w.done[i] = false
		w.peak[i] = fl.Peak
		if !math.IsInf(fl.Peak, 1) {
			w.byPeak = append(w.byPeak, int32(i))
		}
		for _, l := range fl.Links {
			w.n[local[l]]++
		}
		crossings += len(fl.Links)
	}
	for i := range nl {
		w.adjOff[i+1] = w.adjOff[i] + w.n[i]
	}
	w.adj = grow(w.adj, crossings)
	copy(w.m, w.adjOff[:nl]) // m as the fill cursor, zeroed again below
	for i, f := range fs {
		for _, l := range flows[f].Links {
			j := local[l]
			w.adj[w.m[j]] = int32(i)
			w.m[j]++
		}
	}
	clear(w.m)
	slices.SortFunc(w.byPeak, func(a, b int32) int { return cmp.Compare(w.peak[a], w.peak[b]) })
	w.heap = w.heap[:0]
	for i := range nl {
		w.key[i] = share(w.capacity[i], 0, w.n[i])
		w.pos[i] = int32(len(w.heap))
		w.heap = append(w.heap, int32(i))
		w.up(len(w.heap) - 1)
	}
	w.hit = w.hit[:0]
}

// freeze freezes local flow f at level and returns 1.
func (w *filler) freeze(dst []float64, flows []Flow, fs, local []int32, f int32, level float64) int {
	w.done[f] = true
	dst[fs[f]] = level
	for _, l := range flows[fs[f]].Links {
		j := local[l]
		if w.m[j] == 0 {
			w.hit = append(w.hit, j)
		}
		w.m[j]++
	}
	return 1
}

// apply moves this round's frozen connections into the links' loads and
// updates their shares.
func (w *filler) apply(level float64) {
	for _, l := range w.hit {
		// The conversion keeps the compiler from fusing the
		// multiply-add, so every platform rounds alike.
		w.frozen[l] += float64(float64(w.m[l]) * level)
		w.n[l] -= w.m[l]
		w.m[l] = 0
		switch {
		case w.pos[l] < 0: // popped at this level
		case w.n[l] == 0:
			w.remove(l)
		default:
			w.key[l] = share(w.capacity[l], w.frozen[l], w.n[l])
			w.fix(int(w.pos[l]))
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

func (w *filler) pop() int32 {
	l := w.heap[0]
	w.remove(l)
	return l
}

func (w *filler) remove(l int32) {
	i := int(w.pos[l])
	last := len(w.heap) - 1
	if i != last {
		w.swap(i, last)
	}
	w.heap = w.heap[:last]
	w.pos[l] = -1
	if i != last {
		w.fix(i)
	}
}
