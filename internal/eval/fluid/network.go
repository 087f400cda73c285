package fluid

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/orrery/orrery/internal/scratch"
)

// FlowID names a flow of a [Network]. IDs of removed flows are reused.
type FlowID int32

// Network is a max-min problem that changes a flow at a time: a simulator
// adds and removes flows as they start and end, and [Network.Solve]
// recomputes only what the changes can reach. A flow's rate is that of the
// filling of the package doc over every flow present, bit for bit, as
// [Solver.Rates] gives it with the flows in the order they were added: the
// filling is local, so a change reaches only the hot component (the flows
// joined by links that can saturate) of the links it touches, and every
// other flow keeps its rate, to the bit. The offered traffic of the links
// (the sum of their crossings' peaks, in order of addition) is kept the
// same way, and with it each flow's mark (a link it crosses is offered more
// than its capacity) and the summed excess.
//
// Under another Filling than Hot, or with Scratch set, every
// Solve solves every flow with a [Solver] instead: the references the
// incremental path is measured and tested against.
//
// The zero value has no links; [Network.Reset] gives it some. A Network
// allocates nothing in steady state (once it has held as many flows, and
// as many on each link, as it holds now). It is not safe for concurrent
// use.
type Network struct {
	// Scratch makes every Solve solve every flow from scratch; zero: only
	// what changed. Set it before Reset, not while flows are present.
	Scratch bool

	// Filling is the filling of every solve; the zero value is the
	// default, Hot, under which the Network solves only what changed.
	Filling  Filling
	capacity []float64
	allOK    bool  // every capacity is a positive finite number
	err      error // of an Add, returned by the next Solve

	fl     []flowState // per flow ID
	rate   []float64   // per flow ID, as of the last Solve
	free   []FlowID
	added  uint64   // flows added so far
	solved uint64   // flows added before the last Solve
	live   []FlowID // in order of addition (from scratch only)
	ln     []linkState

	chg    []FlowID // flows whose rate or mark the last Solve may have changed
	dirty  []int32  // links whose crossings changed since the last Solve
	fresh  []FlowID // flows added since the last Solve
	seeds  []int32  // dirty links hot before or after the change
	overs  []int32  // links offered past capacity, by first crossing
	excess float64
	// oversMoved: a link offered past capacity, or no longer, was relinked
	// since excess was summed.
	oversMoved bool
	stamp      uint32

	// Scratch of Solve.
	queue  []int32    // the component's flows
	comp   []int32    // its hot links
	byPeak []int32    // its flows with a finite peak, least first
	sorted []int32    // scratch of sortByPeak
	rankAt []int32    // scratch of sortByPeak and rank
	hit    []int32    // links on which something froze this round
	heap   []heapItem // links by share, least first (large components)
	mins   []int32    // scratch of scanRounds
	solve  Solver
	fbuf   []Flow
	rbuf   []float64

	// The distinct finite peaks of the flows added since Reset.
	peakVals   []float64
	peakOf     map[float64]int32 // index in peakVals
	peakRank   []int32           // per peakVals entry, its rank, least first
	ranksStale bool              // peakRank is not up to date
	lastPeak   int32             // the last peakIndex, -1 for none
}

// flowState is what a Network keeps of a flow.
type flowState struct {
	links []int
	peak  float64
	seq   uint64  // order of addition; 0 for a free ID
	hotOf []int32 // the hot links it crosses, once per crossing
	overN int32   // crossings of links offered past their capacity
	seen  uint32  // stamp of the Solve that reached it
	noted uint32  // stamp of the Solve that listed it in chg
	done  bool    // frozen, in the component being filled
	pk    int32   // its peak's index in peakVals, -1 for +Inf
}

// linkState is what a Network keeps of a link.
type linkState struct {
	cross    []FlowID // crossings, once per crossing, in order of addition
	load     float64  // their peaks summed, in that order
	capacity float64
	firstF   uint64 // over links: first crossing's flow's seq
	firstP   int32  // and its place in that flow's links
	linkAt   uint32 // stamp of the Solve that reached it
	// The filling's state, while its component is filled (see filler).
	frozen  float64 // load of its frozen connections (F)
	key     float64 // share
	un      int32   // unfrozen connections (n)
	m       int32   // connections frozen this round
	pos     int32   // place in heap
	ok      bool    // its capacity is a positive finite number
	hot     bool
	over    bool // load > capacity
	inOver  bool // listed in overs
	changed bool // listed in dirty
	// sat: it saturated in its component's last fill. moved: since the
	// last Solve, a crossing was added, or removed while sat; only then
	// can its change move another flow's rate (see Remove).
	sat, moved bool
	// resum: a crossing was removed since load was summed. An addition
	// alone adds its peak to load, which is the sum in order of addition
	// bit for bit: the new crossing comes last.
	resum bool
}

// Reset empties n and gives it links of the given capacities (> 0, finite),
// which it keeps and reads until the next Reset.
func (n *Network) Reset(capacity []float64) {
	n.capacity = capacity
	n.err = nil
	n.fl, n.rate = n.fl[:0], n.rate[:0]
	n.chg = n.chg[:0]
	n.free, n.live, n.added, n.solved = n.free[:0], n.live[:0], 0, 0
	n.ln = scratch.Resize(n.ln, len(capacity))
	n.allOK = true
	for l, c := range capacity {
		n.ln[l] = linkState{cross: n.ln[l].cross[:0], capacity: c, ok: c > 0 && !math.IsInf(c, 1)}
		n.allOK = n.allOK && n.ln[l].ok
	}
	n.dirty, n.fresh, n.seeds = n.dirty[:0], n.fresh[:0], n.seeds[:0]
	n.overs, n.excess, n.oversMoved, n.stamp = n.overs[:0], 0, false, 0
	n.peakVals, n.ranksStale, n.lastPeak = n.peakVals[:0], false, -1
	clear(n.peakOf)
}

// Add adds a flow and returns its ID. links must not change while the flow
// is in the network. A malformed flow is not added (the ID is -1) and the
// next Solve returns an error wrapping [ErrInvalid].
func (n *Network) Add(links []int, peak float64) FlowID {
	if err := n.check(links, peak); err != nil {
		if n.err == nil {
			n.err = err
		}
		return -1
	}
	var id FlowID
	if k := len(n.free); k > 0 {
		id, n.free = n.free[k-1], n.free[:k-1]
	} else {
		id = FlowID(len(n.fl))
		n.fl = append(n.fl, flowState{})
		n.rate = append(n.rate, 0)
	}
	n.added++
	f := &n.fl[id]
	*f = flowState{links: links, peak: peak, seq: n.added, hotOf: f.hotOf[:0], seen: f.seen, noted: f.noted, pk: -1}
	if !math.IsInf(peak, 1) {
		f.pk = n.peakIndex(peak)
	}
	if n.scratch() {
		n.live = append(n.live, id)
		return id
	}
	n.fresh = append(n.fresh, id)
	// Its hot links as they are now: relinking a link whose heat changes
	// lists it in its flows' hotOf, or takes it out, this one's with them.
	for _, l := range links {
		L := &n.ln[l]
		L.cross = append(L.cross, id)
		if L.hot {
			f.hotOf = append(f.hotOf, int32(l))
		}
		if L.over {
			f.overN++
		}
		if !L.resum {
			L.load += peak
			if L.quiet() {
				continue
			}
		}
		L.moved = true
		n.touch(L, l)
	}
	return id
}

// quiet reports whether relinking L, its load exact (not resum), would
// change nothing: it was cold and not offered past capacity, and still is
// (so it is no seed, marks no flow, and takes no part in the excess).
// Such a link is left out of dirty. A link in dirty may have been
// relinked last before changes that are pending; it stays in dirty.
func (L *linkState) quiet() bool {
	k := len(L.cross)
	return !L.hot && !L.over && !L.inOver && !(L.load > L.capacity) && !hot(L.capacity, L.load, margin(k, k))
}

// Quiet reports whether a link of the given capacity, crossed k times by
// flows of peak peak and by nothing else, is one a Network keeps out of
// its filling and its excess: the crossings' summed peaks neither exceed
// its capacity nor make it hot, and fewer of them leave it so. A caller
// that knows a link is only ever crossed so may leave it out of every
// flow's links: the rates, marks and excess are the same. A capacity the
// Network would reject is not quiet, so the error stays.
func Quiet(capacity, peak float64, k int) bool {
	load := 0.0
	for range k { // as the Network sums it
		load += peak
	}
	return capacity > 0 && !math.IsInf(capacity, 1) && !(load > capacity) && !hot(capacity, load, margin(k, k))
}

func (n *Network) check(links []int, peak float64) error {
	if !(peak > 0) {
		return fmt.Errorf("%w: flow %d: peak %v is not positive", ErrInvalid, n.added, peak)
	}
	if len(links) == 0 && math.IsInf(peak, 1) {
		return fmt.Errorf("%w: flow %d crosses no link and has no peak: its rate is unbounded", ErrInvalid, n.added)
	}
	for _, l := range links {
		if l < 0 || l >= len(n.capacity) {
			return fmt.Errorf("%w: flow %d crosses link %d, there are %d", ErrInvalid, n.added, l, len(n.capacity))
		}
		if !n.allOK && !n.ln[l].ok {
			return fmt.Errorf("%w: link %d: capacity %v is not a positive finite number", ErrInvalid, l, n.capacity[l])
		}
	}
	return nil
}

// Remove removes flow id; an ID of no flow (-1 from a rejected Add) is
// ignored.
func (n *Network) Remove(id FlowID) {
	if id < 0 || int(id) >= len(n.fl) || n.fl[id].seq == 0 {
		return
	}
	f := &n.fl[id]
	if n.scratch() {
		n.live = deleteID(n.live, id)
	} else {
		for _, l := range f.links {
			L := &n.ln[l]
			if c := L.cross; len(c) > 0 && c[len(c)-1] == id {
				L.cross = c[:len(c)-1] // it crosses l several times, or came last
			} else {
				L.cross = deleteID(c, id)
			}
			L.resum = true
			// A cold link not offered past capacity stays so without
			// a crossing: the rounded sum of fewer positive terms,
			// each partial sum rounding what a larger one does, is no
			// more, and the margin grows with fewer crossings.
			// Relinking it would only sum its load again, which resum
			// leaves to the next relink.
			if L.hot || L.over || L.inOver {
				// Unless it saturated, no other flow's rate moves
				// (see relink): it is relinked, not filled again.
				L.moved = L.moved || L.sat
				n.touch(L, l)
			}
		}
	}
	f.links, f.seq = nil, 0
	n.free = append(n.free, id)
}

// deleteID removes the first id from s, keeping the order.
func deleteID(s []FlowID, id FlowID) []FlowID {
	for i, x := range s {
		if x == id {
			copy(s[i:], s[i+1:])
			return s[:len(s)-1]
		}
	}
	return s
}

func (n *Network) touch(L *linkState, l int) {
	if !L.changed {
		L.changed = true
		n.dirty = append(n.dirty, int32(l))
	}
}

// Incremental reports whether Solve solves only what changed, as by
// default; not with another Filling, nor with Scratch.
func (n *Network) Incremental() bool { return !n.scratch() }

func (n *Network) scratch() bool {
	return n.Scratch || n.Filling != Hot
}

// Rate returns flow id's rate as of the last Solve.
func (n *Network) Rate(id FlowID) float64 { return n.rate[id] }

// Marked reports whether, as of the last Solve, a link flow id crosses is
// offered more traffic than its capacity: the sum of the peaks of its
// crossings exceeds it.
func (n *Network) Marked(id FlowID) bool { return n.fl[id].overN > 0 }

// Changed returns the flows whose rate or mark the last Solve may have
// changed, each once, in no particular order: every other flow's are as
// they were before it. The slice is n's, valid until the next Solve.
func (n *Network) Changed() []FlowID { return n.chg }

// note lists flow f in chg, once a Solve.
func (n *Network) note(f FlowID) {
	if F := &n.fl[f]; F.noted != n.stamp {
		F.noted = n.stamp
		n.chg = append(n.chg, f)
	}
}

// Excess returns, as of the last Solve, the traffic offered above capacity
// summed over links (each link's load minus its capacity, when positive),
// the links in order of first crossing (flows in order of addition, each
// flow's links in order), as a simulator summing [Solver.Offered] gets it.
func (n *Network) Excess() float64 { return n.excess }

// Solve brings every flow's rate and mark and the excess up to date with
// the flows added and removed since the last Solve, and returns the error
// of a rejected Add since then, if any.
func (n *Network) Solve() error {
	if err := n.err; err != nil {
		n.err = nil
		return err
	}
	n.chg = n.chg[:0]
	if n.scratch() {
		return n.solveAll()
	}
	n.stamp++
	if n.stamp == 0 { // wrapped
		for i := range n.fl {
			n.fl[i].seen, n.fl[i].noted = 0, 0
		}
		for i := range n.ln {
			n.ln[i].linkAt = 0
		}
		n.stamp = 1
	}
	n.seeds = n.seeds[:0]
	for _, l := range n.dirty {
		n.relink(l)
	}
	if n.oversMoved {
		// Otherwise the same terms in the same order: the same sum.
		n.excess = 0
		for _, l := range n.overs {
			n.excess += n.ln[l].load - n.capacity[l]
		}
		n.oversMoved = false
	}
	// What changed reaches the flows of the links that are or were hot
	// (a cold link takes no part in the filling) and the new flows.
	for _, l := range n.seeds {
		for _, f := range n.ln[l].cross {
			if n.fl[f].seen != n.stamp {
				n.component(f)
			}
		}
	}
	for _, f := range n.fresh {
		if s := &n.fl[f]; s.seq != 0 && s.seen != n.stamp {
			n.component(f)
		}
	}
	for _, l := range n.dirty {
		n.ln[l].changed = false
	}
	n.dirty, n.fresh = n.dirty[:0], n.fresh[:0]
	n.solved = n.added
	if observe != nil {
		n.show()
	}
	return nil
}

// show shows the tests' observer every flow present, in order of
// addition, and its rate.
func (n *Network) show() {
	ids := make([]FlowID, 0, len(n.fl))
	for id := range n.fl {
		if n.fl[id].seq != 0 {
			ids = append(ids, FlowID(id))
		}
	}
	slices.SortFunc(ids, func(a, b FlowID) int { return cmp.Compare(n.fl[a].seq, n.fl[b].seq) })
	flows := make([]Flow, len(ids))
	rates := make([]float64, len(ids))
	for i, id := range ids {
		flows[i], rates[i] = Flow{Links: n.fl[id].links, Peak: n.fl[id].peak}, n.rate[id]
	}
	observe(n.capacity, flows, rates)
}

// relink brings link l's load, heat and mark up to date with its
// crossings.
func (n *Network) relink(l int32) {
	L := &n.ln[l]
	c := L.cross
	if L.resum {
		load := 0.0
		for _, f := range c {
			load += n.fl[f].peak
		}
		L.load, L.resum = load, false
	}
	load, k, capacity := L.load, len(c), L.capacity
	// Per link, the margin's counts are the link's: its crossings bound
	// the terms of its load and the rounds that update its frozen load.
	h := k > 0 && hot(capacity, load, margin(k, k))
	// Its component is filled again if it gained a crossing (as one
	// that turns hot did), or lost one while it saturated. Losing a
	// flow moves no other flow's rate unless one of its links
	// saturated: until that flow froze, the link's share without it
	// is no less (fewer unfrozen connections, the same frozen load),
	// and after, its frozen load is a rounded sum with one positive
	// term fewer, no more; so a link whose share stayed above every
	// round's level still does, and the rounds, less the flow's own,
	// are the same. The link's fill state (sat) stays true of the
	// filling without the flow.
	if L.moved && (h || L.hot) {
		n.seeds = append(n.seeds, l)
	}
	L.moved = false
	if h != L.hot { // once per crossing, as Add lists it
		for _, f := range c {
			F := &n.fl[f]
			if h {
				F.hotOf = append(F.hotOf, l)
			} else {
				F.hotOf = deleteLink(F.hotOf, l)
			}
		}
	}
	L.hot = h
	over := load > capacity
	if over != L.over {
		d := int32(1)
		if !over {
			d = -1
		}
		for _, f := range c {
			n.fl[f].overN += d
			n.note(f) // its mark changes
		}
		L.over = over
	}
	if !over && !L.inOver {
		return
	}
	n.oversMoved = true
	if L.inOver {
		n.overs = deleteLink(n.overs, l)
		L.inOver = false
	}
	if over {
		f := &n.fl[c[0]]
		place := 0
		for f.links[place] != int(l) {
			place++
		}
		L.firstF, L.firstP = f.seq, int32(place)
		i := len(n.overs)
		for i > 0 && n.after(n.overs[i-1], l) {
			i--
		}
		n.overs = append(n.overs, 0)
		copy(n.overs[i+1:], n.overs[i:])
		n.overs[i] = l
		L.inOver = true
	}
}

// after reports whether link a's first crossing comes after link b's.
func (n *Network) after(a, b int32) bool {
	A, B := &n.ln[a], &n.ln[b]
	if A.firstF != B.firstF {
		return A.firstF > B.firstF
	}
	return A.firstP > B.firstP
}

func deleteLink(s []int32, l int32) []int32 {
	for i, x := range s {
		if x == l {
			copy(s[i:], s[i+1:])
			return s[:len(s)-1]
		}
	}
	return s
}

// component solves the hot component of flow f: the flows and hot links
// reachable from it through hot links. A flow that crosses no hot link
// sends at its peak.
func (n *Network) component(f FlowID) {
	fs := &n.fl[f]
	if len(fs.hotOf) == 0 { // most new flows, in a NIC-limited fabric
		fs.seen = n.stamp
		n.note(f)
		n.rate[f] = fs.peak
		return
	}
	stamp := n.stamp
	q, ls := n.queue[:0], n.comp[:0]
	fs.seen = stamp
	q = append(q, int32(f))
	for i := 0; i < len(q); i++ {
		g := &n.fl[q[i]]
		for _, l := range g.hotOf {
			L := &n.ln[l]
			if L.linkAt == stamp {
				continue
			}
			L.linkAt = stamp
			ls = append(ls, l)
			for _, h := range L.cross {
				if hs := &n.fl[h]; hs.seen != stamp {
					hs.seen = stamp
					q = append(q, int32(h))
				}
			}
		}
	}
	n.queue, n.comp = q, ls
	n.fillComponent(q, ls)
}

// solveAll solves every flow with a Solver, in order of addition, and
// takes the loads and marks from it.
func (n *Network) solveAll() error {
	n.fbuf = n.fbuf[:0]
	for _, id := range n.live {
		n.fbuf = append(n.fbuf, Flow{Links: n.fl[id].links, Peak: n.fl[id].peak})
	}
	n.solve.Filling = n.Filling
	var err error
	if n.rbuf, err = n.solve.Rates(n.rbuf, n.capacity, n.fbuf); err != nil {
		return err
	}
	n.excess = 0
	offered := n.solve.Offered()
	for _, o := range offered {
		n.excess += max(o.Load-n.capacity[o.Link], 0)
		n.ln[o.Link].over = o.Load > n.capacity[o.Link]
	}
	n.chg = append(n.chg, n.live...)
	for i, id := range n.live {
		f := &n.fl[id]
		n.rate[id] = n.rbuf[i]
		f.overN = 0
		for _, l := range f.links {
			if n.ln[l].over {
				f.overN = 1
			}
		}
	}
	for _, o := range offered {
		n.ln[o.Link].over = false
	}
	return nil
}
