package fluid

import (
	"math"
	"math/bits"
)

// memory is a solved problem, kept to answer the next call's unchanged
// components: each flow's links, peak, rate and component, and a hash table
// of the flows.
type memory struct {
	off   []int32 // flow f's links are links[off[f]:off[f+1]]
	links []int32
	peak  []float64
	rate  []float64
	comp  []int32  // per flow; -1 for one that crosses nothing
	size  []int32  // per component: flows
	hash  []uint64 // per flow
	table []int32  // bucket -> a flow, -1 for none
	chain []int32  // flow -> the next flow in its bucket, -1 for none
}

func (m *memory) flows() int { return max(len(m.off)-1, 0) }

// reset forgets the problem.
func (m *memory) reset() { m.off = m.off[:0] }

// hashFlow hashes a flow's peak and links, in order.
func hashFlow(fl Flow) uint64 {
	h := math.Float64bits(fl.Peak) ^ 0x9e3779b97f4a7c15
	for _, l := range fl.Links {
		h = (h ^ uint64(l)) * 0x100000001b3
		h ^= h >> 29
	}
	// A finalizer (splitmix64's) so that the low bits index buckets well.
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// same reports whether the remembered flow g is fl.
func (m *memory) same(g int32, fl Flow) bool {
	ls := m.links[m.off[g]:m.off[g+1]]
	if len(ls) != len(fl.Links) || m.peak[g] != fl.Peak {
		return false
	}
	for i, l := range fl.Links {
		if int(ls[i]) != l {
			return false
		}
	}
	return true
}

// matchPrevious decides which of this call's components the previous call
// already solved: every flow of the component equals a distinct flow of one
// component of the previous call, the two have as many flows, and the
// component's links have the capacities they had. Then the component is the
// same problem and its rates are the previous ones. With reuse off, or
// nothing remembered, every component is filled.
func (s *Solver) matchPrevious(capacity []float64, flows []Flow, reuse bool) {
	p, mem := &s.parts, &s.mem
	s.reuse = grow(s.reuse, p.count())
	clear(s.reuse)
	s.match = grow(s.match, len(flows))
	s.cur.hash = grow(s.cur.hash, len(flows))
	for f, fl := range flows {
		s.match[f] = -1
		s.cur.hash[f] = hashFlow(fl)
	}
	if !reuse || mem.flows() == 0 {
		return
	}
	s.used = grow(s.used, mem.flows())
	clear(s.used)
	mask := uint64(len(mem.table) - 1)
	for f, fl := range flows {
		if len(fl.Links) == 0 {
			continue
		}
		h := s.cur.hash[f]
		for g := mem.table[h&mask]; g >= 0; g = mem.chain[g] {
			if !s.used[g] && mem.hash[g] == h && mem.same(g, fl) {
				s.used[g] = true
				s.match[f] = g
				break
			}
		}
	}
	for c := range p.count() {
		s.reuse[c] = s.unchanged(capacity, p.flows(c), p.links(c))
	}
}

// unchanged reports whether the component of flows fs on links ls is one of
// the previous call's.
func (s *Solver) unchanged(capacity []float64, fs, ls []int32) bool {
	prev := int32(-1)
	for _, f := range fs {
		g := s.match[f]
		if g < 0 {
			return false
		}
		if c := s.mem.comp[g]; prev < 0 {
			prev = c
		} else if c != prev {
			return false
		}
	}
	if s.mem.size[prev] != int32(len(fs)) {
		return false
	}
	// Its flows, so its links, are the previous component's: each was
	// touched by the previous call, which left its capacity in lastCap.
	for _, l := range ls {
		if s.lastCap[l] != capacity[l] {
			return false
		}
	}
	return true
}

// remember keeps this call's problem and rates for the next call.
func (s *Solver) remember(capacity []float64, flows []Flow, rates []float64) {
	m := &s.cur
	n := len(flows)
	m.off = grow(m.off, n+1)
	m.links = m.links[:0]
	m.peak = grow(m.peak, n)
	m.rate = grow(m.rate, n)
	m.comp = grow(m.comp, n)
	m.size = grow(m.size, s.parts.count())
	clear(m.size)
	buckets := 1 << bits.Len(uint(2*n)) // at least 2n, a power of two
	m.table = grow(m.table, buckets)
	for i := range m.table {
		m.table[i] = -1
	}
	m.chain = grow(m.chain, n)
	mask := uint64(buckets - 1)
	for f, fl := range flows {
		m.off[f] = int32(len(m.links))
		for _, l := range fl.Links {
			m.links = append(m.links, int32(l))
		}
		m.peak[f], m.rate[f] = fl.Peak, rates[f]
		c := s.parts.flowComp[f]
		m.comp[f] = c
		m.chain[f] = -1
		if c >= 0 {
			m.size[c]++
			b := m.hash[f] & mask
			m.chain[f] = m.table[b]
			m.table[b] = int32(f)
		}
	}
	m.off[n] = int32(len(m.links))
	for _, l := range s.touched {
		s.lastCap[l] = capacity[l]
	}
	s.mem, s.cur = s.cur, s.mem
}

// reusedFlows is how many flows of the last call took remembered rates.
func (s *Solver) reusedFlows() int {
	n := 0
	for c, ok := range s.reuse {
		if ok {
			n += len(s.parts.flows(c))
		}
	}
	return n
}
