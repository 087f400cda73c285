package sim

import (
	"math"

	"github.com/orrery/orrery/internal/eval/trace"
)

// job states.
const (
	queued uint8 = iota
	active
	done
)

// maxFailures is upstream MAX_FAILED_ATTEMPTS: a job whose leases fail this
// many times in a row is dropped.
const maxFailures = 5

// job is the simulator's state of one trace job.
type job struct {
	w     *Workload
	idx   int // index in the workload
	tj    *trace.Job
	prof  *trace.Profile
	state uint8

	bs, bs0    int
	tput       float64
	total, run int64
	runTime    float64 // Σ booked execution time (upstream cumulative_run_time / GPUs)
	deadline   float64 // ⌊factor·T_iso⌋ of the force-complete hack, +Inf when off
	big, small bool    // batch-size change requested, applied at the next lease end
	failures   int

	admitted   float64
	admitRound int
	lastRound  int // round of the current or last lease, -1 if none
	prevRound  int // round of the lease before that, -1 if none
	gpus       []int
	placed     bool // placed in the round being dispatched
	extended   bool // kept its GPUs from the previous round

	completion float64
	endRound   int
	busy       float64 // booked GPU-seconds
	leases     int
	restarts   int
	changes    int
	forced     bool
	dropped    bool
}

func (j *job) view(dst *Job) {
	*dst = Job{ID: j.tj.ID, Trace: j.tj, Profile: j.prof, GPUs: j.tj.GPUs, Weight: j.tj.Priority,
		Arrival: j.tj.Arrival, Admitted: j.admitted, BatchSize: j.bs, Throughput: j.tput,
		TotalSteps: j.total, StepsRun: j.run, Progress: j.progress()}
}

// progress is Shockwave's completed epochs, ⌊run/⌈D/bs⌉⌋ (upstream
// _update_shockwave_scheduler), kept within [0, E].
func (j *job) progress() int {
	p := floorDiv(j.run, stepsPerEpoch(j.tj.Model, j.bs))
	return int(min(max(p, 0), int64(len(j.prof.EpochBS))))
}

// epoch is the epoch the adaptation rules look at: ⌈run/⌈D/bs⌉⌉ (upstream
// _get_num_epochs, a ceiling).
func (j *job) epoch() int64 { return ceilDiv(j.run, stepsPerEpoch(j.tj.Model, j.bs)) }

// adapt sets the batch-size request flags as the authors' simulator does at
// every round boundary for every active job (Scheduler._simulate_accordion
// and _simulate_gns). These rules differ from the profile's (no 30% rule,
// fewer critical regimes, GNS looking one epoch ahead); a request is applied
// at the job's next lease end ([job.applyChange]).
func (j *job) adapt() {
	m := j.tj.Model
	switch j.tj.Mode {
	case trace.Accordion:
		if m == trace.Transformer {
			return // "Accordion cannot be applied to transformer jobs"
		}
		crit := accordionCritical(m, j.bs0, j.epoch())
		if j.bs == j.bs0 && !crit {
			if j.bs != m.MaxBatchSize() {
				j.big = true
			}
		} else if j.bs != j.bs0 && crit {
			if j.bs != m.BatchSizes()[0] {
				j.small = true
			}
		}
	case trace.GNS:
		g := &j.w.gns[j.idx]
		cur := j.epoch()
		if cur < 0 {
			cur = 0 // unreachable: steps run never go negative
		}
		if (g.at(cur+1, cur) > j.bs || g.at(cur, cur) > j.bs) && j.bs != m.MaxBatchSize() {
			j.big = true
		}
	}
}

// accordionCritical is the critical-regime test of upstream
// _simulate_accordion (not the profile's get_accordion_bs_pattern: no 30%
// rule, ResNet-50 regimes past epoch 600, and Recommendation's first regime
// only).
func accordionCritical(m trace.Model, bs0 int, e int64) bool {
	switch m {
	case trace.LM:
		return e < 10
	case trace.Recommendation:
		switch bs0 {
		case 512, 1024:
			return e < 30
		case 2048:
			return e < 40
		}
		return e < 10
	case trace.ResNet50:
		return e%30 < 10
	case trace.ResNet18:
		head := int64(10)
		if bs0 == 256 {
			head = 20
		}
		return (e >= 0 && e < head) || (e >= 150 && e < 160) || (e >= 250 && e < 260)
	}
	return true
}

// accordionMax is upstream max_bs_dict: the models that scale their batch
// size, and to what.
func accordionMax(m trace.Model) (int, bool) {
	switch m {
	case trace.LM, trace.ResNet18, trace.ResNet50, trace.Recommendation:
		return m.MaxBatchSize(), true
	}
	return 0, false
}

// applyChange applies a pending batch-size request at the end of a lease,
// as upstream _scale_bs_and_iters: jobs that start at their model's maximum
// never change; GNS doubles, Accordion jumps to the maximum or back to bs0;
// a batch size the throughput table lacks (or has as 0) is rejected; total
// and completed steps are rescaled so that the epoch count is preserved and
// the completed epochs are rounded up. The flags are cleared.
func (j *job) applyChange() {
	if !j.big && !j.small {
		return
	}
	big := j.big
	j.big, j.small = false, false
	m := j.tj.Model
	if top, ok := accordionMax(m); ok && j.bs0 == top {
		return
	}
	old, nbs := j.bs, j.bs
	switch j.tj.Mode {
	case trace.GNS:
		nbs = 2 * old
	case trace.Accordion:
		if big {
			top, ok := accordionMax(m)
			if !ok {
				return // upstream would fail on the missing key; unreachable
			}
			nbs = top
		} else {
			nbs = j.bs0
		}
	}
	tput, ok := j.w.aloneThroughput(m, nbs, j.tj.GPUs)
	if !ok {
		return // "asking for unreasonable bs rescale", kept at the old size
	}
	f := 1 / (float64(nbs) / float64(old))
	oldPer, newPer := stepsPerEpoch(m, old), stepsPerEpoch(m, nbs)
	oldEpochs := ceilDiv(j.total, oldPer)
	newTotal := int64(math.Ceil(float64(j.total) * f))
	if ceilDiv(newTotal, newPer) != oldEpochs {
		newTotal = newPer * oldEpochs
	}
	j.total = newTotal
	j.run = ceilDiv(j.run, oldPer) * newPer
	j.bs, j.tput = nbs, tput
	j.changes++
}
