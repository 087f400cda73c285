package netsim

import "github.com/orrery/orrery/internal/eval/topology"

// PlacementStats describe where a run's jobs ran: how far their placements
// spread over the racks, and how the links above the ToRs (both ends
// switches: "uplinks") were loaded and shared. The counts are over the
// placements made (a job's start, its restart after a preemption, its move
// at a lease's end); the loads are over time, from the running jobs'
// demands alone on their placements (what profiling measures), so they
// describe the placements, not the transport.
type PlacementStats struct {
	Placements int // placements made
	Moves      int // of those, jobs placed anew after their lease ended (AuctionPaper)
	// Resized counts the placements at a worker count other than the
	// job's previous one (its requested count at its first).
	Resized int
	// CrossRack counts the placements whose servers are under more than
	// one ToR.
	CrossRack int
	// RingHops counts the hops of the placements' rings (each server to
	// the next in order, the last to the first) on two servers or more,
	// UplinkHops those between servers under different ToRs.
	RingHops, UplinkHops int

	// Over the run, time-weighted, the uplinks: LinkSeconds is their
	// number times the run's length; BindingSeconds the part during which
	// a link bound (its jobs' peak demands exceeded its capacity); Sharers
	// the jobs on a binding link integrated over its binding time; Load
	// the jobs' mean demand over capacity integrated over time.
	LinkSeconds, BindingSeconds, SharerSeconds, LoadSeconds float64
}

// CrossRackFraction is the fraction of the placements spanning racks.
func (p PlacementStats) CrossRackFraction() float64 {
	return ratio(float64(p.CrossRack), float64(p.Placements))
}

// UplinkHopFraction is the fraction of ring hops that cross uplinks.
func (p PlacementStats) UplinkHopFraction() float64 {
	return ratio(float64(p.UplinkHops), float64(p.RingHops))
}

// BindingSharers is the mean number of jobs on a binding uplink, over the
// time uplinks bind (0 if none ever does).
func (p PlacementStats) BindingSharers() float64 { return ratio(p.SharerSeconds, p.BindingSeconds) }

// BindingShare is the fraction of the uplinks' time they bind.
func (p PlacementStats) BindingShare() float64 { return ratio(p.BindingSeconds, p.LinkSeconds) }

// UplinkLoad is the uplinks' mean offered load: the running jobs' mean
// demand alone over capacity, averaged over the uplinks and the run.
func (p PlacementStats) UplinkLoad() float64 { return ratio(p.LoadSeconds, p.LinkSeconds) }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// placeStats accumulates a run's PlacementStats: the counts as jobs are
// placed, the loads as a snapshot of the uplinks held from one change of
// the running jobs to the next.
type placeStats struct {
	PlacementStats
	since                         int64   // when the snapshot was taken, ns
	links, binding, sharers, load float64 // the snapshot
	peak, mean                    []float64
	count                         []int32
	uplinks                       []int // the links whose ends are both switches
}

// countPlacement counts j's placement (assign calls it).
func (s *sim) countPlacement(j *jobRun) {
	p := &s.pstats
	s.moved = true
	p.Placements++
	if j.lastGPUs > 0 && j.gpus != j.lastGPUs || j.lastGPUs == 0 && j.gpus != j.job.GPUs {
		p.Resized++
	}
	j.lastGPUs = j.gpus
	srv := j.place.servers
	if len(srv) < 2 {
		return
	}
	cross := false
	for i, a := range srv {
		b := srv[(i+1)%len(srv)]
		p.RingHops++
		if s.rack[a] != s.rack[b] {
			p.UplinkHops++
			cross = true
		}
	}
	if cross {
		p.CrossRack++
	}
}

// init lists t's uplinks: from time 0, they count, idle.
func (p *placeStats) init(t *topology.Topology) {
	for l, ln := range t.Links {
		if ln.From >= t.Servers && ln.To >= t.Servers {
			p.uplinks = append(p.uplinks, l)
		}
	}
	p.peak, p.mean, p.count = make([]float64, len(t.Links)), make([]float64, len(t.Links)), make([]int32, len(t.Links))
	p.links = float64(len(p.uplinks))
}

// snapshot adds the last snapshot's loads up to now and takes a new one of
// the running jobs.
func (s *sim) snapshot() {
	s.moved = false
	p := &s.pstats
	p.close(s.now)
	for _, j := range s.running {
		for x, l := range j.links {
			if x < len(j.peakOn) {
				p.peak[l] += j.peakOn[x]
				p.mean[l] += j.meanOn[x]
				p.count[l]++
			}
		}
	}
	p.links, p.binding, p.sharers, p.load = float64(len(p.uplinks)), 0, 0, 0
	for _, l := range p.uplinks {
		c := s.capacity[l]
		p.load += p.mean[l] / c
		if p.peak[l] > c {
			p.binding++
			p.sharers += float64(p.count[l])
		}
	}
	for _, j := range s.running {
		for _, l := range j.links {
			p.peak[l], p.mean[l], p.count[l] = 0, 0, 0
		}
	}
}

// close adds the snapshot's loads from its time to now.
func (p *placeStats) close(now int64) {
	dt := float64(now-p.since) / 1e9
	p.since = now
	if dt <= 0 {
		return
	}
	p.LinkSeconds += float64(p.links * dt)
	p.BindingSeconds += float64(p.binding * dt)
	p.SharerSeconds += float64(p.sharers * dt)
	p.LoadSeconds += float64(p.load * dt)
}
