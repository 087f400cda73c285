package fluid

import "github.com/orrery/orrery/internal/scratch"

// groups is a problem's hot components: the flows that cross a hot link,
// grouped by the hot links they share, each group's flows increasing and
// its links in order of first crossing.
type groups struct {
	flowOff  []int32 // group k's flows are flowList[flowOff[k]:flowOff[k+1]]
	flowList []int32
	linkOff  []int32 // group k's hot links are linkList[linkOff[k]:linkOff[k+1]]
	linkList []int32
	flowOf   []int32 // scratch: flow -> group, -1 for none
}

func (g *groups) count() int          { return len(g.flowOff) - 1 }
func (g *groups) flows(k int) []int32 { return g.flowList[g.flowOff[k]:g.flowOff[k+1]] }
func (g *groups) links(k int) []int32 { return g.linkList[g.linkOff[k]:g.linkOff[k+1]] }

// find returns the root of l's set, halving the path on the way.
func (s *Solver) find(l int32) int32 {
	for s.parent[l] != l {
		s.parent[l] = s.parent[s.parent[l]]
		l = s.parent[l]
	}
	return l
}

// group splits the flows that cross a hot link into groups connected by
// hot links, and writes the peak of every other flow into dst: nothing can
// stop it before its peak.
func (s *Solver) group(dst []float64, flows []Flow) {
	g := &s.groups
	g.flowOf = scratch.Resize(g.flowOf, len(flows))
	for _, l := range s.hotLinks {
		s.parent[l] = l
		s.grp[l] = -1
	}
	for i, fl := range flows {
		a := int32(-1)
		for _, l := range fl.Links {
			if !s.hotL[l] {
				continue
			}
			if a < 0 {
				a = s.find(int32(l))
			} else if b := s.find(int32(l)); b != a {
				s.parent[b] = a
			}
		}
		g.flowOf[i] = a // a hot link of the flow, or -1
		if a < 0 {
			dst[i] = fl.Peak
		}
	}
	// Number the groups by their first flow; grp holds a root's group.
	g.flowOff = append(g.flowOff[:0], 0)
	for i, a := range g.flowOf {
		if a < 0 {
			continue
		}
		r := s.find(a)
		if s.grp[r] < 0 {
			s.grp[r] = int32(len(g.flowOff) - 1)
			g.flowOff = append(g.flowOff, 0)
		}
		k := s.grp[r]
		g.flowOf[i] = k
		g.flowOff[k+1]++
	}
	g.flowList = place(g.flowList, g.flowOff, g.flowOf)
	// The groups' hot links, in order of first crossing: the order of
	// hotLinks.
	g.linkOff = scratch.Resize(g.linkOff, len(g.flowOff))
	clear(g.linkOff)
	for _, l := range s.hotLinks {
		k := s.grp[s.find(l)]
		s.grp[l] = k // every hot link now holds its group
		g.linkOff[k+1]++
	}
	for k := 1; k < len(g.linkOff); k++ {
		g.linkOff[k] += g.linkOff[k-1]
	}
	g.linkList = scratch.Resize(g.linkList, len(s.hotLinks))
	next := s.cursor(g.linkOff)
	for _, l := range s.hotLinks {
		k := s.grp[l]
		g.linkList[next[k]] = l
		next[k]++
	}
}

// place fills list with the items of each group (of[i] is item i's group,
// -1 for none) in increasing order, given each group's count in off[k+1],
// and turns the counts into offsets.
func place(list, off, of []int32) []int32 {
	for k := 1; k < len(off); k++ {
		off[k] += off[k-1]
	}
	list = scratch.Resize(list, int(off[len(off)-1]))
	for i, k := range of {
		if k >= 0 {
			list[off[k]] = int32(i)
			off[k]++
		}
	}
	copy(off[1:], off[:len(off)-1]) // each off[k] had advanced to the next group's start
	off[0] = 0
	return list
}

// cursor returns a copy of the groups' starts, to advance while filling.
func (s *Solver) cursor(off []int32) []int32 {
	s.next = append(s.next[:0], off[:len(off)-1]...)
	return s.next
}
