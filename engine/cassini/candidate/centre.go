package candidate

import (
	"context"
	"fmt"
	"slices"

	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// Centre returns the shifts of a ranked candidate's outcome centred in the
// ranges its shared links tolerate, and each job's room there (see
// link.Centre): the shifts an agent should hold, and how late each job may
// run before a link's excess passes the plan's (agent.Plan.Slack). jobs,
// links, cand and opt are what Rank took and o is cand's outcome; the jobs
// opt.Fixed fixes keep their shifts. A job on no shared link keeps its shift
// with an unbound room; each group of linked jobs is delayed back so that
// its first job keeps its shift (link.Anchor). Shifts and rooms are in ticks of the job's period on
// o's grid. opt.Link's budget and ctx bound the walks (link.Centre).
func Centre(ctx context.Context, jobs []profile.Profile, links []Link, cand Candidate, o Outcome, opt Options) ([]int, []link.Room, error) {
	if o.Status == Discarded || len(o.Shifts) != len(jobs) {
		return nil, nil, fmt.Errorf("%w: a discarded outcome has no shifts to centre", ErrInvalid)
	}
	grid := max(o.Grid, 1)
	periods := make([]int, len(jobs))
	for j, p := range jobs {
		periods[j] = roundUp(p.Period, grid)
	}
	shared := make([]link.Shared, 0, len(o.Links))
	for _, ls := range o.Links {
		if ls.Link < 0 || ls.Link >= len(links) {
			return nil, nil, fmt.Errorf("%w: the outcome's link %d is not one of the %d links", ErrInvalid, ls.Link, len(links))
		}
		l := link.Shared{Jobs: ls.Jobs, Problem: link.Problem{Capacity: links[ls.Link].Capacity}}
		for _, j := range ls.Jobs {
			if j < 0 || j >= len(jobs) || j >= len(cand.Paths) {
				return nil, nil, fmt.Errorf("%w: the outcome puts job %d on link %d, the candidate has paths for %d jobs", ErrInvalid, j, ls.Link, len(cand.Paths))
			}
			d := jobs[j]
			k := slices.Index(cand.Paths[j], ls.Link)
			if k < 0 {
				return nil, nil, fmt.Errorf("%w: the outcome puts job %d on link %d, the candidate's path does not", ErrInvalid, j, ls.Link)
			}
			if j < len(cand.Profiles) && k < len(cand.Profiles[j]) && cand.Profiles[j][k].Period != 0 {
				d = cand.Profiles[j][k]
			}
			l.Problem.Jobs = append(l.Problem.Jobs, pad(d, grid))
		}
		shared = append(shared, l)
	}
	var hold []bool
	if opt.Fixed != nil {
		hold = make([]bool, len(jobs))
		for j, f := range opt.Fixed {
			hold[j] = j < len(hold) && f >= 0
		}
	}
	shifts := slices.Clone(o.Shifts)
	lopt := opt.Link
	lopt.Circle.Round = false // the periods are on o's grid already
	rooms, err := link.Centre(ctx, shared, periods, shifts, hold, lopt)
	if err != nil {
		return nil, nil, err
	}
	link.Anchor(shared, periods, o.Shifts, shifts, hold)
	return shifts, rooms, nil
}
