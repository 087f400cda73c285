package orrery

import (
	"fmt"
	"strconv"
	"time"

	"github.com/orrery/orrery/engine/cassini/profile"
)

// MinPeriodTicks is the shortest iteration a job of a CASSINI request
// should have, in ticks of its tick_ms: a circle of fewer points says
// little, and such a period is more often seconds typed where milliseconds
// are meant (ms: 0.072 for a 72 ms iteration) than a real iteration. A
// period shorter than one tick is refused (it would round up to one tick,
// and any set of such jobs would score 1); one of 1 to MinPeriodTicks-1
// ticks is warned of. Both say the unit and what was likely meant; a
// request about iterations this short sets a finer tick_ms.
const MinPeriodTicks = 10

// maxWarnings bounds the warnings of one response; past it the last one
// says how many more there were.
const maxWarnings = 16

// Warning is a value a call accepted but that is likely a mistake or that
// the call changed: a period rounded up to whole ticks, a phase shorter
// than a tick, a demand above the link's capacity. Responses carry them
// (warnings) so that no such value passes silently; the command line also
// prints them on standard error.
type Warning struct {
	Field   string `json:"field"`   // the value's JSON path in the request
	Message string `json:"message"` // what happened to it, with its unit
}

// warnings collects a call's warnings, at most maxWarnings.
type warnings struct {
	list    []Warning
	dropped int
}

func (w *warnings) add(field, format string, a ...any) {
	if len(w.list) >= maxWarnings {
		w.dropped++
		return
	}
	w.list = append(w.list, Warning{Field: field, Message: fmt.Sprintf(format, a...)})
}

// done returns the warnings, the last one counting those dropped.
func (w *warnings) done() []Warning {
	if w.dropped > 0 {
		w.list = append(w.list, Warning{Field: "", Message: fmt.Sprintf("and %d more warnings", w.dropped)})
		w.dropped = 0
	}
	return w.list
}

// msText prints a duration in milliseconds.
func msText(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/1e6, 'g', -1, 64)
}

// shortPeriod refuses a period under one tick and warns of one under
// MinPeriodTicks ticks (field names where the period comes from:
// period_ms, the phases, the samples).
func (r quantum) shortPeriod(w *warnings, field string, period time.Duration, ticks int) error {
	if ticks >= MinPeriodTicks {
		return nil
	}
	hint := ""
	if ms := float64(period) / 1e6 * 1000; ms*1e6 >= float64(MinPeriodTicks*r.q.Tick) && ms <= maxMs {
		hint = fmt.Sprintf("; did you mean %s (seconds typed as ms)?", strconv.FormatFloat(ms, 'g', -1, 64))
	}
	if period < r.q.Tick {
		return fieldError(field, fmt.Errorf("%w: %s ms against a tick of %s ms — ms are milliseconds%s (for iterations this short, lower tick_ms)",
			ErrShortPeriod, msText(period), msText(r.q.Tick), hint))
	}
	w.add(field, "an iteration of %s ms is %d ticks of %s ms, under the %d its circle needs to mean much — ms are milliseconds%s (for iterations this short, lower tick_ms)",
		msText(period), ticks, msText(r.q.Tick), MinPeriodTicks, hint)
	return nil
}

// tickWarnings warns of what quantizing a job's phases changes: a period
// that is not a whole number of ticks (field: where the period comes
// from), and the first phase shorter than a tick (phaseField names phase
// k's duration).
func (r quantum) tickWarnings(w *warnings, field string, period time.Duration, ticks int, phases []profile.Phase, phaseField func(k int) string) {
	tick := r.q.Tick
	if period%tick != 0 {
		w.add(field, "%s ms is not a whole number of ticks of %s ms: the period is rounded up to %s ms (%d ticks)",
			msText(period), msText(tick), msText(time.Duration(ticks)*tick), ticks)
	}
	short := 0
	for _, ph := range phases {
		if ph.Duration > 0 && ph.Duration < tick {
			short++
		}
	}
	for k, ph := range phases {
		if ph.Duration > 0 && ph.Duration < tick {
			more := ""
			if short > 1 {
				more = fmt.Sprintf(" (and %d more phases of this job)", short-1)
			}
			w.add(phaseField(k), "%s ms is under one tick of %s ms: its traffic is spread over the tick it falls in%s",
				msText(ph.Duration), msText(tick), more)
			break
		}
	}
}

// demandWarning warns of a job whose peak demand is above capacity (in
// units; where says which capacity: "the link's capacity of 50 Gbps").
func (r quantum) demandWarning(w *warnings, s source, capacity int32, where string) {
	if s.sum.Peak <= capacity || s.peakField == "" {
		return
	}
	gbps := s.peakBps / profile.Gbps
	hint := ""
	if peak, c := float64(s.sum.Peak), float64(capacity); peak >= 10*c {
		hint = fmt.Sprintf("; did you mean %s (Mbps typed as Gbps)?", strconv.FormatFloat(gbps/1000, 'g', -1, 64))
	}
	w.add(s.peakField, "%s Gbps is above %s: the job alone overloads it — gbps are gigabits per second%s",
		strconv.FormatFloat(gbps, 'g', -1, 64), where, hint)
}

// demand converts a bandwidth in Gbps and checks it fits a tick's demand
// in units, with a hint when it looks like megabits typed as gigabits.
func (r quantum) demand(field string, gbps float64) (float64, error) {
	b, err := bitsPerSecond(field, gbps)
	if err != nil {
		return 0, err
	}
	if u := r.q.Units(b); u > profile.MaxUnits {
		hint := ""
		if r.q.Units(b/1000) <= profile.MaxUnits {
			hint = fmt.Sprintf("; did you mean %s (Mbps typed as Gbps)?", strconv.FormatFloat(gbps/1000, 'g', -1, 64))
		}
		return 0, fieldError(field, fmt.Errorf("%w: %s Gbps is more than the %d units of %s Mbps a tick's demand can hold — gbps are gigabits per second%s",
			profile.ErrDemandTooLarge, strconv.FormatFloat(gbps, 'g', -1, 64), profile.MaxUnits, strconv.FormatFloat(r.q.Unit/profile.Mbps, 'g', -1, 64), hint))
	}
	return b, nil
}

// peak returns the index of phases' largest demand, or -1 for none.
func peak(phases []profile.Phase) int {
	k := -1
	for i, ph := range phases {
		if ph.Bandwidth > 0 && (k < 0 || ph.Bandwidth > phases[k].Bandwidth) {
			k = i
		}
	}
	return k
}
