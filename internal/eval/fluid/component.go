package fluid

// parts is a problem's connected components: each component's flows
// (increasing) and links (in order of first crossing), grouped.
type parts struct {
	flowComp []int32 // flow -> component, -1 for a flow that crosses nothing
	flowOff  []int32 // component c's flows are flowList[flowOff[c]:flowOff[c+1]]
	flowList []int32
	linkOff  []int32
	linkList []int32
}

func (p *parts) count() int          { return len(p.flowOff) - 1 }
func (p *parts) flows(c int) []int32 { return p.flowList[p.flowOff[c]:p.flowOff[c+1]] }
func (p *parts) links(c int) []int32 { return p.linkList[p.linkOff[c]:p.linkOff[c+1]] }

// find returns the root of l's set, halving the path on the way.
func (s *Solver) find(l int32) int32 {
	for s.parent[l] != l {
		s.parent[l] = s.parent[s.parent[l]]
		l = s.parent[l]
	}
	return l
}

// split groups the flows and the touched links into components: two links
// are in one component when a flow crosses both. Components are numbered in
// the order their first link was first crossed; s.comp maps each touched
// link to its component.
func (s *Solver) split(flows []Flow) {
	for _, l := range s.touched {
		s.parent[l] = l
	}
	for _, fl := range flows {
		if len(fl.Links) < 2 {
			continue
		}
		a := s.find(int32(fl.Links[0]))
		for _, l := range fl.Links[1:] {
			if b := s.find(int32(l)); b != a {
				s.parent[b] = a
			}
		}
	}
	p := &s.parts
	n := int32(0)
	for _, l := range s.touched {
		s.comp[l] = -1
	}
	for _, l := range s.touched {
		r := s.find(l)
		if s.comp[r] < 0 {
			s.comp[r] = n
			n++
		}
		s.comp[l] = s.comp[r]
	}
	p.linkOff = counts(p.linkOff, int(n))
	for _, l := range s.touched {
		p.linkOff[s.comp[l]+1]++
	}
	p.flowComp = grow(p.flowComp, len(flows))
	p.flowOff = counts(p.flowOff, int(n))
	active := 0
	for f, fl := range flows {
		p.flowComp[f] = -1
		if len(fl.Links) > 0 {
			c := s.comp[fl.Links[0]]
			p.flowComp[f] = c
			p.flowOff[c+1]++
			active++
		}
	}
	prefix(p.linkOff)
	p.linkList = grow(p.linkList, len(s.touched))
	for _, l := range s.touched {
		c := s.comp[l]
		p.linkList[p.linkOff[c]] = l
		p.linkOff[c]++
	}
	unshift(p.linkOff)
	prefix(p.flowOff)
	p.flowList = grow(p.flowList, active)
	for f, c := range p.flowComp {
		if c >= 0 {
			p.flowList[p.flowOff[c]] = int32(f)
			p.flowOff[c]++
		}
	}
	unshift(p.flowOff)
}

// counts returns off sized for n groups, zeroed.
func counts(off []int32, n int) []int32 {
	off = grow(off, n+1)
	clear(off)
	return off
}

// prefix turns per-group counts (off[c+1] holds group c's) into each
// group's start.
func prefix(off []int32) {
	for c := 1; c < len(off); c++ {
		off[c] += off[c-1]
	}
}

// unshift restores the starts after filling advanced each off[c] to group
// c's end, which is the next group's start.
func unshift(off []int32) {
	copy(off[1:], off[:len(off)-1])
	off[0] = 0
}
