package fluid

import (
	"cmp"
	"math"
	"slices"

	"github.com/orrery/orrery/internal/scratch"
)

// A Network fills a hot component in place: the filler's rounds (fill.go),
// with the state of the component's flows and links kept in the Network's
// own records of them, so the walk that finds the component lists its
// flows and links and nothing is copied. Every link of the component has
// all its crossings in it (the walk takes every flow crossing a hot link
// it reaches), and every flow lists its hot links, so the filler's
// adjacency is the Network's. The rounds are those of the package doc, in
// the same arithmetic as the filler's, so the rates are its, bit for bit.

// fillComponent fills the component of flows q on hot links ls, writes
// their rates and lists in chg those whose rate changed.
func (n *Network) fillComponent(q, ls []int32) {
	for _, l := range ls {
		L := &n.ln[l]
		L.frozen, L.un, L.m, L.sat = 0, int32(len(L.cross)), 0, false
		L.key = share(L.capacity, 0, L.un)
	}
	// One pass readies the flows: each unfrozen and, with a finite peak,
	// in byPeak, counted by its peak's rank (sortByPeak).
	counted := len(n.peakVals) <= maxRanks
	if counted && n.ranksStale {
		n.rank()
	}
	at := scratch.Resize(n.rankAt, len(n.peakVals))
	clear(at)
	b := n.byPeak[:0]
	for _, g := range q {
		F := &n.fl[g]
		F.done = false
		if F.pk >= 0 {
			b = append(b, g)
			if counted {
				at[n.peakRank[F.pk]]++
			}
		}
	}
	n.byPeak, n.rankAt = b, at
	n.sortByPeak(counted)
	n.hit = n.hit[:0]
	if len(ls) <= scanLinks {
		n.scanRounds(len(q), ls)
	} else {
		n.heapRounds(len(q), ls)
	}
}

// sortByPeak orders byPeak (the component's flows with a finite peak) by
// peak, least first; ties in any order (flows of equal peak freeze in the
// same round). A NIC-limited fabric has few distinct peaks: up to maxRanks
// of them (counted), the flows are placed by counting, by the rank of
// their peak among every peak the Network has seen, counted in rankAt.
func (n *Network) sortByPeak(counted bool) {
	b := n.byPeak
	if !counted {
		slices.SortFunc(b, func(x, y int32) int { return cmp.Compare(n.fl[x].peak, n.fl[y].peak) })
		return
	}
	at := n.rankAt
	next := int32(0)
	for r, c := range at { // counts into first slots
		at[r] = next
		next += c
	}
	out := scratch.Resize(n.sorted, len(b))
	for _, g := range b {
		r := n.peakRank[n.fl[g].pk]
		out[at[r]] = g
		at[r]++
	}
	n.sorted, n.byPeak = b, out
}

// maxRanks is how many distinct finite peaks sortByPeak ranks; past it, it
// sorts. A variable for the tests, which run both ways.
var maxRanks = 256

// peakIndex returns the index of peak (finite) in peakVals, adding it if
// new.
func (n *Network) peakIndex(peak float64) int32 {
	if k := n.lastPeak; k >= 0 && int(k) < len(n.peakVals) && n.peakVals[k] == peak {
		return k // a step's flows share their peak
	}
	k, ok := n.peakOf[peak]
	if !ok {
		k = int32(len(n.peakVals))
		n.peakVals = append(n.peakVals, peak)
		if n.peakOf == nil {
			n.peakOf = map[float64]int32{}
		}
		n.peakOf[peak] = k
		n.ranksStale = true
	}
	n.lastPeak = k
	return k
}

// rank computes each peak's rank among peakVals, least first.
func (n *Network) rank() {
	ord := n.rankAt[:0]
	for k := range n.peakVals {
		ord = append(ord, int32(k))
	}
	slices.SortFunc(ord, func(x, y int32) int { return cmp.Compare(n.peakVals[x], n.peakVals[y]) })
	n.peakRank = scratch.Resize(n.peakRank, len(ord))
	for r, k := range ord {
		n.peakRank[k] = int32(r)
	}
	n.rankAt, n.ranksStale = ord, false
}

// scanRounds fills by scanning the links every round (filler.scan); left
// flows are unfrozen. ls is consumed. The scan, in locals with room for
// every link, calls nothing (no append) that would make it spill them.
func (n *Network) scanRounds(left int, act []int32) {
	ln, mins := n.ln, scratch.Resize(n.mins, len(act))
	next := 0 // into byPeak
	for left > 0 {
		// The least share, and the links that have it (mins[:m]): the
		// ones that saturate if it is the level (no link's share is
		// below it).
		least := math.Inf(1)
		k, m := 0, 0
		for _, l := range act {
			L := &ln[l]
			if L.un == 0 {
				continue
			}
			act[k] = l
			k++
			if L.key < least {
				least, mins[0], m = L.key, l, 1
			} else if L.key == least {
				mins[m] = l
				m++
			}
		}
		act = act[:k]
		level := n.peakLevel(&next, least)
		if level == least {
			for _, l := range mins[:m] {
				left -= n.saturate(l, level)
			}
		}
		left -= n.peaks(&next, level)
		n.apply(level, false)
	}
	n.mins = mins
}

// heapRounds fills with the links' shares in a heap (filler.run).
func (n *Network) heapRounds(left int, ls []int32) {
	h := n.heap[:0]
	for i, l := range ls {
		n.ln[l].pos = int32(i)
		h = append(h, heapItem{n.ln[l].key, l})
	}
	n.heap = h
	for i := len(h)/2 - 1; i >= 0; i-- {
		n.down(i)
	}
	next := 0
	for left > 0 {
		level := math.Inf(1)
		for len(n.heap) > 0 && n.ln[n.heap[0].l].un == 0 {
			n.pop() // every flow on it froze elsewhere: its key is stale
		}
		if len(n.heap) > 0 {
			level = n.heap[0].key
		}
		level = n.peakLevel(&next, level)
		for len(n.heap) > 0 && n.heap[0].key <= level {
			left -= n.saturate(n.pop(), level)
		}
		left -= n.peaks(&next, level)
		n.apply(level, true)
	}
}

// peakLevel skips the frozen flows of byPeak from *next and returns the
// least of level and the next unfrozen flow's peak.
func (n *Network) peakLevel(next *int, level float64) float64 {
	b := n.byPeak
	i := *next
	for i < len(b) && n.fl[b[i]].done {
		i++
	}
	*next = i
	if i < len(b) {
		level = min(level, n.fl[b[i]].peak)
	}
	return level
}

// saturate freezes the unfrozen flows of link l at level and returns how
// many.
func (n *Network) saturate(l int32, level float64) int {
	n.ln[l].sat = true
	k := 0
	for _, f := range n.ln[l].cross {
		if !n.fl[f].done {
			n.freeze(f, level)
			n.hitLinks(f)
			k++
		}
	}
	return k
}

// peaks freezes, from byPeak[*next], the unfrozen flows whose peak is at
// most level, and returns how many.
func (n *Network) peaks(next *int, level float64) int {
	b := n.byPeak
	i, k := *next, 0
	for ; i < len(b); i++ {
		F := &n.fl[b[i]]
		if !F.done {
			if F.peak > level {
				break
			}
			n.freeze(FlowID(b[i]), level)
			n.hitLinks(FlowID(b[i]))
			k++
		}
	}
	*next = i
	return k
}

// freeze freezes flow f at level (see hitLinks).
func (n *Network) freeze(f FlowID, level float64) {
	F := &n.fl[f]
	F.done = true
	// Most flows of a component filled again keep their rate: only the
	// others, and new ones (their ID's last rate is another flow's), are
	// listed.
	if math.Float64bits(n.rate[f]) != math.Float64bits(level) || F.seq > n.solved {
		n.note(f)
	}
	n.rate[f] = level
}

// hitLinks counts frozen flow f's connections on the links it crosses.
// (Apart from freeze, so that each is inlined.)
func (n *Network) hitLinks(f FlowID) {
	for _, l := range n.fl[f].hotOf {
		L := &n.ln[l]
		if L.m == 0 {
			n.hit = append(n.hit, l)
		}
		L.m++
	}
}

// apply is filler.apply: this round's frozen connections move into the
// links' loads, and their shares are updated (in the heap if heap).
func (n *Network) apply(level float64, heap bool) {
	for _, l := range n.hit {
		L := &n.ln[l]
		// The conversion keeps the compiler from fusing the
		// multiply-add, so every platform rounds alike.
		L.frozen += float64(float64(L.m) * level)
		L.un -= L.m
		L.m = 0
		if L.un > 0 {
			L.key = share(L.capacity, L.frozen, L.un)
			if heap {
				n.heap[L.pos].key = L.key
				n.up(int(L.pos))
				n.down(int(L.pos))
			}
		}
	}
	n.hit = n.hit[:0]
}

// The heap of links by share (filler's), each with its key, which the
// comparisons read without visiting the link.

type heapItem struct {
	key float64 // the link's share
	l   int32
}

func (n *Network) less(i, j int) bool { return n.heap[i].key < n.heap[j].key }

func (n *Network) swap(i, j int) {
	h := n.heap
	h[i], h[j] = h[j], h[i]
	n.ln[h[i].l].pos, n.ln[h[j].l].pos = int32(i), int32(j)
}

func (n *Network) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !n.less(i, p) {
			return
		}
		n.swap(i, p)
		i = p
	}
}

func (n *Network) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(n.heap) {
			return
		}
		if c+1 < len(n.heap) && n.less(c+1, c) {
			c++
		}
		if !n.less(c, i) {
			return
		}
		n.swap(i, c)
		i = c
	}
}

func (n *Network) pop() int32 {
	l := n.heap[0].l
	last := len(n.heap) - 1
	n.swap(0, last)
	n.heap = n.heap[:last]
	n.ln[l].pos = -1
	n.down(0)
	return l
}
