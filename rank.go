package orrery

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/orrery/orrery/engine/cassini/affinity"
	"github.com/orrery/orrery/engine/cassini/candidate"
	"github.com/orrery/orrery/engine/cassini/circle"
	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
	"github.com/orrery/orrery/internal/codec"
)

// LinkSpec is a network link.
type LinkSpec struct {
	ID           string  `json:"id"`
	CapacityGbps float64 `json:"capacity_gbps"`
}

// CandidateSpec is one placement: for each placed job, the links its traffic
// crosses. Jobs left out cross no link.
type CandidateSpec struct {
	ID    string              `json:"id"`
	Paths map[string][]string `json:"paths"`
}

// RankRequest is the request of "cassini.rank".
type RankRequest struct {
	Links      []LinkSpec      `json:"links"`
	Jobs       []JobSpec       `json:"jobs"`
	Candidates []CandidateSpec `json:"candidates"`
	Aggregate  string          `json:"aggregate,omitempty"` // "mean" (default, the paper) or "min"
	Loops      string          `json:"loops,omitempty"`     // "resolve" (default), "paper" or "reoptimize"
	Workers    int             `json:"workers,omitempty"`   // parallel searches; 0 = one per CPU (results do not depend on it)
	SearchSpec
}

// RankResponse is the response of "cassini.rank".
type RankResponse struct {
	Best       *string            `json:"best"`      // id of the best candidate, null if all were discarded
	ShiftsMs   map[string]float64 `json:"shifts_ms"` // the best candidate's time shifts
	Ranking    []string           `json:"ranking"`   // kept candidates, best first
	Candidates []CandidateResult  `json:"candidates"`
	PeriodsMs  map[string]float64 `json:"periods_ms"` // quantized iteration times
	// CommOffsetsMs is where each job's communication starts in its
	// iteration (profile.Profile.CommOffset): the comm_offset_ms of its
	// agent's plan.
	CommOffsetsMs map[string]float64 `json:"comm_offsets_ms"`
	Searches      int                `json:"searches"` // distinct link problems solved

	// Warnings are values the call accepted but changed or doubts (see
	// Warning); absent when there are none.
	Warnings []Warning `json:"warnings,omitempty"`

	// The best candidate's shifts centred in the ranges its shared links
	// tolerate, and each job's room there (see LinkResponse); absent when
	// every candidate was discarded.
	CentredShiftsMs map[string]float64   `json:"centred_shifts_ms,omitempty"`
	ShiftRoomMs     map[string]ShiftRoom `json:"shift_room_ms,omitempty"`
}

// CandidateResult is one candidate's evaluation.
type CandidateResult struct {
	ID        string             `json:"id"`
	Score     float64            `json:"score"`
	Status    string             `json:"status,omitempty"` // of its link searches; absent when discarded
	Discarded bool               `json:"discarded"`
	Reason    string             `json:"reason,omitempty"`
	Links     []LinkResult       `json:"links,omitempty"`
	ShiftsMs  map[string]float64 `json:"shifts_ms,omitempty"`
	GridMs    float64            `json:"grid_ms,omitempty"` // periods rounded up to multiples of this (round_periods)
}

// LinkResult is one shared link of a candidate.
type LinkResult struct {
	ID    string   `json:"id"`
	Jobs  []string `json:"jobs"`
	Score float64  `json:"score"`
}

// MaxRankCells bounds a ranking's candidates × (jobs + links): every
// candidate's evaluation holds a shift for every job (its response lists
// them) and a slot for every link, so the product is the size of the work
// and of the response. A request past it is refused before it is decoded.
const MaxRankCells = 1 << 20

func (req *RankRequest) measure() []string { return []string{"jobs", "links", "candidates"} }

func (req *RankRequest) limits(m *codec.Measures) error {
	_, jobs := m.Get("jobs")
	_, links := m.Get("links")
	_, cands := m.Get("candidates")
	return rankSize(jobs, links, cands)
}

// rankSize checks a ranking's counts against MaxRankCells.
func rankSize(jobs, links, cands int) error {
	if cells := int64(cands) * (int64(jobs) + int64(links)); cells > MaxRankCells {
		return fieldError("candidates", fmt.Errorf("%w: %d candidates × (%d jobs + %d links) is %d, above %d", ErrTooLarge, cands, jobs, links, cells, MaxRankCells))
	}
	return nil
}

// Rank runs "cassini.rank": the paper's Algorithm 2 over the request's
// placement candidates, with the best candidate's time shifts. Errors are
// *Error values naming the request's field by its JSON path.
func Rank(ctx context.Context, req RankRequest) (RankResponse, error) {
	if err := checkFloats("", &req); err != nil {
		return RankResponse{}, err
	}
	return rankOp(ctx, req)
}

// rankOp is Rank on a decoded request.
func rankOp(ctx context.Context, req RankRequest) (RankResponse, error) {
	if err := rankSize(len(req.Jobs), len(req.Links), len(req.Candidates)); err != nil {
		return RankResponse{}, err
	}
	r, err := req.SearchSpec.parse()
	if err != nil {
		return RankResponse{}, err
	}
	opt, err := req.options(r)
	if err != nil {
		return RankResponse{}, err
	}
	ctx, cancel := withLimit(ctx, r.timeout)
	defer cancel()
	srcs, jobIndex, err := r.sources(req.Jobs)
	if err != nil {
		return RankResponse{}, err
	}
	links, linkIndex, err := req.links(r)
	if err != nil {
		return RankResponse{}, err
	}
	// A demand above every link of the request is above any NIC of the
	// fabric the links stand for.
	var w warnings
	fastest := 0
	for i, l := range links {
		if l.Capacity > links[fastest].Capacity {
			fastest = i
		}
	}
	where := fmt.Sprintf("every link of the request (the fastest, %s, has %s Gbps)", req.Links[fastest].ID, strconv.FormatFloat(req.Links[fastest].CapacityGbps, 'g', -1, 64))
	for _, s := range srcs {
		for _, x := range s.warns {
			w.add(x.Field, "%s", x.Message)
		}
		r.demandWarning(&w, s, links[fastest].Capacity, where)
	}
	cands, err := req.candidates(jobIndex, linkIndex)
	if err != nil {
		return RankResponse{}, err
	}
	jobs, err := r.build(ctx, srcs)
	if err != nil {
		return RankResponse{}, err
	}
	ws := rankers.Get().(*candidate.Workspace)
	defer rankers.Put(ws)
	rk, err := ws.Rank(ctx, jobs, links, cands, opt)
	if err != nil {
		var f string
		if errors.Is(err, candidate.ErrInvalid) {
			f = "candidates"
		}
		return RankResponse{}, fieldError(f, err)
	}
	resp := req.response(r, jobs, rk)
	if rk.Best >= 0 {
		shifts, rooms, err := candidate.Centre(ctx, jobs, links, cands[rk.Best], rk.Outcomes[rk.Best], opt)
		if err != nil {
			return RankResponse{}, fieldError("candidates", err)
		}
		resp.CentredShiftsMs, resp.ShiftRoomMs = r.centred(req.Jobs, shifts, rooms)
	}
	resp.Warnings = w.done()
	return resp, nil
}

// options reads the ranking's own options.
func (req *RankRequest) options(r quantum) (candidate.Options, error) {
	agg, err := candidate.ParseAggregate(req.Aggregate)
	if err != nil {
		return candidate.Options{}, fieldError("aggregate", err)
	}
	loops, err := affinity.ParsePolicy(req.Loops)
	if err != nil {
		return candidate.Options{}, fieldError("loops", err)
	}
	if req.Workers < 0 || req.Workers > 1024 {
		return candidate.Options{}, fieldError("workers", fmt.Errorf("%w: %d (want 0..1024)", candidate.ErrInvalid, req.Workers))
	}
	return candidate.Options{Link: r.opt, Loops: loops, Aggregate: agg, Workers: req.Workers}, nil
}

// links validates the links, in order, and indexes them by id.
func (req *RankRequest) links(r quantum) ([]candidate.Link, map[string]int, error) {
	if len(req.Links) == 0 {
		return nil, nil, fieldError("links", fmt.Errorf("%w: no links", candidate.ErrInvalid))
	}
	links := make([]candidate.Link, len(req.Links))
	index := make(map[string]int, len(req.Links))
	for i, l := range req.Links {
		f := elemPath("links", i, "")
		if l.ID == "" {
			return nil, nil, fieldError(f+".id", ErrEmptyID)
		}
		if j, dup := index[l.ID]; dup {
			return nil, nil, fieldError(f+".id", fmt.Errorf("%w: %q is also links[%d]", ErrDuplicateID, l.ID, j))
		}
		index[l.ID] = i
		c, err := r.capacityUnits(f+".capacity_gbps", l.CapacityGbps)
		if err != nil {
			return nil, nil, err
		}
		links[i].Capacity = c
	}
	return links, index, nil
}

// candidates validates the candidates and turns their paths into indices.
func (req *RankRequest) candidates(jobIndex, linkIndex map[string]int) ([]candidate.Candidate, error) {
	if len(req.Candidates) == 0 {
		return nil, fieldError("candidates", fmt.Errorf("%w: no candidates", candidate.ErrInvalid))
	}
	cands := make([]candidate.Candidate, len(req.Candidates))
	index := make(map[string]int, len(req.Candidates))
	for c, cs := range req.Candidates {
		f := elemPath("candidates", c, "")
		if cs.ID == "" {
			return nil, fieldError(f+".id", ErrEmptyID)
		}
		if j, dup := index[cs.ID]; dup {
			return nil, fieldError(f+".id", fmt.Errorf("%w: %q is also candidates[%d]", ErrDuplicateID, cs.ID, j))
		}
		index[cs.ID] = c
		paths := make([][]int, len(jobIndex))
		// In key order, so the error for a request with several bad paths
		// does not depend on map iteration order.
		for _, id := range slices.Sorted(maps.Keys(cs.Paths)) {
			j, ok := jobIndex[id]
			if !ok {
				return nil, fieldError(f+".paths."+id, fmt.Errorf("%w: job %q", ErrUnknownID, id))
			}
			for k, lid := range cs.Paths[id] {
				li, ok := linkIndex[lid]
				if !ok {
					return nil, fieldError(fmt.Sprintf("%s.paths.%s[%d]", f, id, k), fmt.Errorf("%w: link %q", ErrUnknownID, lid))
				}
				if slices.Contains(paths[j], li) {
					return nil, fieldError(fmt.Sprintf("%s.paths.%s[%d]", f, id, k), fmt.Errorf("%w: job %q crosses link %q twice", candidate.ErrInvalid, id, lid))
				}
				paths[j] = append(paths[j], li)
			}
		}
		cands[c].Paths = paths
	}
	return cands, nil
}

// response converts a ranking back to the request's ids and milliseconds.
func (req *RankRequest) response(r quantum, jobs []profile.Profile, rk candidate.Ranking) RankResponse {
	resp := RankResponse{
		Ranking:    make([]string, 0, len(rk.Order)),
		Candidates: make([]CandidateResult, len(rk.Outcomes)),
		PeriodsMs:  make(map[string]float64, len(jobs)),
		Searches:   rk.Searches,
	}
	resp.CommOffsetsMs = make(map[string]float64, len(jobs))
	for j, s := range req.Jobs {
		resp.PeriodsMs[s.ID] = r.ms(float64(jobs[j].Period))
		resp.CommOffsetsMs[s.ID] = r.ms(float64(jobs[j].CommOffset()))
	}
	for _, c := range rk.Order {
		resp.Ranking = append(resp.Ranking, req.Candidates[c].ID)
	}
	for c, o := range rk.Outcomes {
		resp.Candidates[c] = req.result(r, c, o)
	}
	if rk.Best >= 0 {
		id := req.Candidates[rk.Best].ID
		resp.Best = &id
		resp.ShiftsMs = resp.Candidates[rk.Best].ShiftsMs
	}
	return resp
}

// result is candidate c's outcome with the request's ids.
func (req *RankRequest) result(r quantum, c int, o candidate.Outcome) CandidateResult {
	cr := CandidateResult{ID: req.Candidates[c].ID, Score: o.Score, Status: o.Status.String()}
	if o.Err != nil {
		cr.Discarded, cr.Reason, cr.Status = true, reason(o.Err, *req), ""
		return cr
	}
	if o.Grid > 1 {
		cr.GridMs = r.ms(float64(o.Grid))
	}
	cr.ShiftsMs = make(map[string]float64, len(req.Jobs))
	for j, s := range req.Jobs {
		cr.ShiftsMs[s.ID] = r.ms(float64(o.Shifts[j]))
	}
	for _, ls := range o.Links {
		lr := LinkResult{ID: req.Links[ls.Link].ID, Score: ls.Score}
		for _, j := range ls.Jobs {
			lr.Jobs = append(lr.Jobs, req.Jobs[j].ID)
		}
		cr.Links = append(cr.Links, lr)
	}
	return cr
}

// reason explains why a candidate was discarded, with the request's ids.
func reason(err error, req RankRequest) string {
	var le *affinity.LoopError
	var ie *affinity.InconsistentError
	switch {
	case errors.As(err, &le):
		return fmt.Sprintf("loop: job %q and link %q close a cycle in the affinity graph (the paper's policy discards every loop)", req.Jobs[le.Job].ID, req.Links[le.Link].ID)
	case errors.As(err, &ie):
		ids := make([]string, len(ie.Jobs))
		for i, j := range ie.Jobs {
			ids[i] = req.Jobs[j].ID
		}
		what := "inconsistent loop: no shifts keep every link of a cycle at its own optimum"
		if ie.Status != link.Optimal {
			what = fmt.Sprintf("undecided loop: the search for shifts that keep every link of a cycle at its own optimum stopped (%v) before finding any", ie.Status)
		}
		return fmt.Sprintf("%s; jobs %q on link %q exceed capacity by %d unit-ticks with the shifts the rest of the placement sets, %d at the link's own optimum", what, ids, req.Links[ie.Link].ID, ie.Excess, ie.Optimum)
	case errors.Is(err, circle.ErrPerimeterTooLarge), errors.Is(err, link.ErrTooLarge):
		return "perimeter: " + err.Error() + " (set round_periods to round iteration times up to a coarser grid)"
	case errors.Is(err, candidate.ErrTimeLimit):
		return "time limit: it ended before this candidate was evaluated (raise time_limit_ms)"
	case errors.Is(err, link.ErrTimeLimit):
		return "time limit: it ended before a link search of this candidate had a first answer (raise time_limit_ms)"
	}
	return err.Error()
}
