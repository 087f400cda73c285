package replay

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/topology"
)

// Regime is the congestion sweep of issue 26: the paper's experiment
// (Base, usually Scenario Paper) on its fabric at several
// oversubscriptions, under several placement rules and transports, each
// cell run with the arms baseline, cassini-placement, cassini and ideal on
// the same seeds. What changes from cell to cell is only the fabric's
// uplinks, the placement rule and the transport: the trace, the scheduler
// and its auction (Base's, AuctionPaper by default for every placement,
// so that the rule is the only thing the placement axis changes) stay.
type Regime struct {
	Base Cassini
	// Oversubscriptions are the ToRs' ratios of server to uplink capacity
	// (the paper's fabric: 4 servers of 50 Gbps under each ToR, 2
	// uplinks of 100/o Gbps each); nil means 2, 4 and 8.
	Oversubscriptions []float64
	// Placements are the rules; nil means contiguous, themis, scattered.
	Placements []Placement
	// Transports are the network's congestion controls by name
	// (netsim.ParseTransport's: maxmin, dcqcn, mltcp); nil means maxmin.
	Transports []string
	// Progress, if not nil, is called after each cell with the cells done
	// and their number.
	Progress func(done, cells int)
}

// Transports lists the transports a Regime can sweep (docs/transports.md).
func Transports() []string {
	var out []string
	for _, t := range netsim.Transports {
		out = append(out, t.String())
	}
	return out
}

// applyTransport sets c's transport by name.
func applyTransport(c *Cassini, name string) error {
	t, err := netsim.ParseTransport(name)
	if err != nil || name == "" {
		return fmt.Errorf("transport %q: want one of %v", name, Transports())
	}
	c.Transport = t
	return nil
}

// RegimeCell is one cell of the sweep: its pooled iteration times (every
// seed's iterations together, the paper's metric), what CASSINI gains on
// them over the scheduler alone, the fraction of the gap to Ideal each
// arm closes (GapClosed), and where the scheduler's own placements put
// the jobs (means over the seeds).
type RegimeCell struct {
	Oversubscription float64 `json:"oversubscription"`
	Placement        string  `json:"placement"`
	Transport        string  `json:"transport"`
	// ThemisOverIdeal is the scheduler alone's pooled mean (p99) over
	// Ideal's: the most any placement could gain.
	ThemisOverIdeal    float64 `json:"themis_over_ideal"`
	ThemisOverIdealP99 float64 `json:"themis_over_ideal_p99"`
	// PlacementGain and ShiftsGain are the scheduler's pooled mean over
	// CASSINI's placement's and over its placement and shifts'.
	PlacementGain float64 `json:"placement_gain"`
	ShiftsGain    float64 `json:"shifts_gain"`
	// PlacementClosed and ShiftsClosed are the fractions of the gap to
	// Ideal they close.
	PlacementClosed float64 `json:"placement_closed"`
	ShiftsClosed    float64 `json:"shifts_closed"`
	// MLTCPGain is the scheduler's pooled mean under this cell's transport
	// over the scheduler's under MLTCP (MLTCP alone: the same
	// oversubscription and placement with transport mltcp), and
	// MLTCPClosed the fraction of this cell's gap to Ideal that closes;
	// nil when the sweep has no mltcp cell to compare with.
	MLTCPGain   *float64 `json:"mltcp_gain,omitempty"`
	MLTCPClosed *float64 `json:"mltcp_closed,omitempty"`
	// The scheduler's own placements (CassiniPlacement's fields).
	CrossRack      float64 `json:"cross_rack"`
	UplinkHops     float64 `json:"uplink_hops"`
	BindingSharers float64 `json:"binding_sharers"`
	BindingShare   float64 `json:"binding_share"`
	UplinkLoad     float64 `json:"uplink_load"`

	Report CassiniReport `json:"-"`
}

// RegimeReport is a sweep's cells, oversubscription by oversubscription,
// placement by placement, transport by transport.
type RegimeReport struct {
	Scenario string       `json:"scenario"`
	Jobs     int          `json:"jobs"`
	Load     float64      `json:"load"`
	Seeds    []uint64     `json:"seeds"`
	Noise    string       `json:"noise"`
	Auction  string       `json:"auction"`
	Cells    []RegimeCell `json:"cells"`
}

// RegimeFabric is the paper's fabric at oversubscription o: six ToRs of
// four 50 Gbps servers, each ToR's two uplinks (and the aggregation
// switches' links to the cores) at 100/o Gbps. At 2:1 it is the paper's.
func RegimeFabric(o float64) (*topology.Topology, error) {
	if !(o > 0 && o <= 1e4) {
		return nil, fmt.Errorf("oversubscription %v: want a ratio above 0", o)
	}
	if o == 2 {
		return topology.Paper(), nil
	}
	return topology.Parse("clos:2,3,4,2,3,50," + strconv.FormatFloat(100/o, 'g', -1, 64))
}

// RunRegime runs the sweep. A bad setting is an error wrapping ErrInvalid
// naming the field; the output is deterministic.
func RunRegime(ctx context.Context, r Regime) (RegimeReport, error) {
	if r.Oversubscriptions == nil {
		r.Oversubscriptions = []float64{2, 4, 8}
	}
	if r.Placements == nil {
		r.Placements = []Placement{PlaceContiguous, PlaceThemis, PlaceScattered}
	}
	if r.Transports == nil {
		r.Transports = []string{"maxmin"}
	}
	base := r.Base
	if base.Auction == "" {
		base.Auction = AuctionPaper
	}
	base.Arms = DefaultArms()
	base.Progress = nil
	for _, p := range r.Placements {
		if !slices.Contains(Placements(), p) {
			return RegimeReport{}, fmt.Errorf("%w: Placements: %q: want themis, contiguous or scattered", ErrInvalid, p)
		}
	}
	fabrics := make([]*topology.Topology, len(r.Oversubscriptions))
	for i, o := range r.Oversubscriptions {
		var err error
		if fabrics[i], err = RegimeFabric(o); err != nil {
			return RegimeReport{}, fmt.Errorf("%w: Oversubscriptions: %v", ErrInvalid, err)
		}
	}
	for _, t := range r.Transports {
		if err := applyTransport(&Cassini{}, t); err != nil {
			return RegimeReport{}, fmt.Errorf("%w: Transports: %v", ErrInvalid, err)
		}
	}
	var out RegimeReport
	cells := len(fabrics) * len(r.Placements) * len(r.Transports)
	for i, fab := range fabrics {
		for _, p := range r.Placements {
			for _, t := range r.Transports {
				c := base
				c.Fabric, c.Placement = fab, p
				_ = applyTransport(&c, t) // checked above
				rep, err := RunCassini(ctx, c)
				if err != nil {
					return RegimeReport{}, fmt.Errorf("%v:1, %s, %s: %w", r.Oversubscriptions[i], p, t, err)
				}
				out.Cells = append(out.Cells, regimeCell(r.Oversubscriptions[i], p, t, rep))
				if r.Progress != nil {
					r.Progress(len(out.Cells), cells)
				}
			}
		}
	}
	mltcpGains(out.Cells)
	first := out.Cells[0].Report
	out.Scenario, out.Jobs, out.Load, out.Seeds, out.Noise, out.Auction = first.Scenario, first.Jobs, first.Load, first.Seeds, first.Noise, first.Auction
	return out, nil
}

// regimeCell reads a cell off its report (arms: baseline,
// cassini-placement, cassini, ideal).
func regimeCell(o float64, p Placement, t string, rep CassiniReport) RegimeCell {
	base, place, shifts, ideal := rep.Arms[0].Pooled, rep.Arms[1].Pooled, rep.Arms[2].Pooled, rep.Arms[3].Pooled
	ratio := func(a, b float64) float64 {
		if b > 0 {
			return cassiniRound(a / b)
		}
		return 0
	}
	pl := rep.Arms[0].Placement
	return RegimeCell{Oversubscription: o, Placement: string(p), Transport: t,
		ThemisOverIdeal: ratio(base.MeanIterMs, ideal.MeanIterMs), ThemisOverIdealP99: ratio(base.P99IterMs, ideal.P99IterMs),
		PlacementGain: ratio(base.MeanIterMs, place.MeanIterMs), ShiftsGain: ratio(base.MeanIterMs, shifts.MeanIterMs),
		PlacementClosed: *place.GapClosed, ShiftsClosed: *shifts.GapClosed,
		CrossRack: pl.CrossRack.Mean, UplinkHops: pl.UplinkHops.Mean, BindingSharers: pl.BindingSharers.Mean,
		BindingShare: pl.BindingShare.Mean, UplinkLoad: pl.UplinkLoad.Mean,
		Report: rep}
}

// mltcpGains sets every cell's MLTCP columns from the mltcp cell of the
// same oversubscription and placement, if the sweep has one.
func mltcpGains(cells []RegimeCell) {
	for i := range cells {
		c := &cells[i]
		for _, m := range cells {
			if m.Transport != netsim.MLTCP.String() || m.Oversubscription != c.Oversubscription || m.Placement != c.Placement {
				continue
			}
			base, ideal := c.Report.Arms[0].Pooled.MeanIterMs, c.Report.Arms[3].Pooled.MeanIterMs
			ml := m.Report.Arms[0].Pooled.MeanIterMs
			if !(ml > 0) {
				break
			}
			gain := cassiniRound(base / ml)
			closed := 0.0
			if base > ideal {
				closed = cassiniRound((base - ml) / (base - ideal))
			}
			c.MLTCPGain, c.MLTCPClosed = &gain, &closed
			break
		}
	}
}
