package trace

import "strconv"

// MaxEpochs bounds the epochs of a derived profile (the authors' traces
// reach about 21 000).
const MaxEpochs = 1 << 22

// Schedule returns the batch size of each of a job's epochs, as the
// authors' profile generator computes it (upstream scheduler/utils.py,
// generate_pickle_file with get_accordion_bs_pattern and
// get_gns_bs_pattern). dst is reused if it has the capacity.
//
// Static: bs0 throughout.
//
// Accordion: epoch e runs at the model's large batch size
// ([Model.MaxBatchSize]) when it lies outside every critical regime and
// e > 0.3·E (the first 30% is always critical); otherwise at bs0. Critical
// regimes: ResNet-18 [0,10) ([0,20) when bs0 = 256), [150,160), [250,260);
// ResNet-50 every e < 600 with e mod 30 < 10; LM [0,10); Recommendation
// [0,r) with r = 30 (bs0 512, 1024), 40 (2048) or 10 (4096, 8192), plus
// [60,70) and [80,90). Transformer never adapts.
//
// GNS: a table of hard-coded doubling epochs per (model, bs0, GPUs): the
// batch size is bs0·2 from the first listed epoch, ·4 from the second, and
// so on, capped at [Model.MaxBatchSize]; combinations not in the table (and
// Transformer) never adapt. Upstream quirk, reproduced: the loops of the
// second and later phases test "last epoch?" before assigning, so when the
// last epoch falls in such a phase it stays at bs0.
func Schedule(dst []int, m Model, mode Mode, bs0, gpus, epochs int) ([]int, error) {
	if !m.ValidBatchSize(bs0) {
		if m.SamplesPerEpoch() == 0 {
			return nil, &ParseError{Field: "job_type", Value: m.String(), Err: ErrUnknownModel}
		}
		return nil, &ParseError{Field: "job_type", Value: m.String() + " (batch size " + strconv.Itoa(bs0) + ")", Err: ErrBatchSize}
	}
	if gpus <= 0 || gpus > MaxGPUs {
		return nil, &ParseError{Field: "scale_factor", Value: strconv.Itoa(gpus), Err: ErrRange}
	}
	if epochs <= 0 || epochs > MaxEpochs {
		return nil, &ParseError{Field: "total_steps", Value: strconv.Itoa(epochs) + " epochs", Err: ErrRange}
	}
	if cap(dst) < epochs {
		dst = make([]int, epochs)
	}
	bs := dst[:epochs]
	for e := range bs {
		bs[e] = bs0
	}
	switch mode {
	case Static:
	case Accordion:
		if m == Transformer {
			break
		}
		limit := float64(epochs) * 0.3 // as upstream: epoch > num_epochs * 0.3
		for e := range bs {
			if !critical(m, bs0, e) && float64(e) > limit {
				bs[e] = m.MaxBatchSize()
			}
		}
	case GNS:
		starts, n := gnsStarts(m, bs0, gpus)
		if n == 0 || epochs <= starts[0] {
			break
		}
		for k := range n {
			lo, hi := starts[k], epochs
			if k+1 < n {
				hi = min(starts[k+1], epochs)
			}
			if k > 0 {
				// Upstream checks epoch+1 >= E before assigning in every
				// phase but the first: the last epoch is never reached.
				hi = min(hi, epochs-1)
			}
			for e := lo; e < hi; e++ {
				bs[e] = bs0 << (k + 1)
			}
		}
		for e := range bs {
			bs[e] = min(bs[e], m.MaxBatchSize())
		}
	default:
		return nil, &ParseError{Field: "mode", Value: mode.String(), Err: ErrMode}
	}
	return bs, nil
}

// critical reports whether epoch e lies in one of Accordion's critical
// regimes for the model and initial batch size (upstream
// get_accordion_bs_pattern).
func critical(m Model, bs0, e int) bool {
	switch m {
	case ResNet18:
		first := 10
		if bs0 == 256 {
			first = 20
		}
		return e < first || (e >= 150 && e < 160) || (e >= 250 && e < 260)
	case ResNet50:
		return e < 600 && e%30 < 10
	case LM:
		return e < 10
	case Recommendation:
		first := 10
		switch bs0 {
		case 512, 1024:
			first = 30
		case 2048:
			first = 40
		}
		return e < first || (e >= 60 && e < 70) || (e >= 80 && e < 90)
	}
	return true
}

// gnsStarts returns the epochs at which the batch size doubles for a GNS
// job, transcribed as data from upstream get_gns_bs_pattern (scheduler/
// utils.py, commit e07dd20): phase k runs at bs0·2^(k+1) from starts[k] to
// the next start (or the end). n = 0: the job never adapts.
func gnsStarts(m Model, bs0, gpus int) (starts [4]int, n int) {
	type key struct {
		m        Model
		bs, gpus int
	}
	s := func(v ...int) ([4]int, int) {
		var a [4]int
		copy(a[:], v)
		return a, len(v)
	}
	switch (key{m, bs0, gpus}) {
	case key{ResNet18, 16, 1}:
		return s(31, 41, 51, 71)
	case key{ResNet18, 32, 1}:
		return s(21, 31, 51)
	case key{ResNet18, 64, 1}:
		return s(11, 31)
	case key{ResNet18, 128, 1}:
		return s(11)
	case key{ResNet18, 16, 2}:
		return s(21, 31, 91, 111)
	case key{ResNet18, 32, 2}:
		return s(11, 21, 41)
	case key{ResNet18, 64, 2}:
		return s(21, 41)
	case key{ResNet18, 128, 2}:
		return s(41)
	case key{ResNet18, 16, 4}:
		return s(11, 21, 81, 91)
	case key{ResNet18, 32, 4}:
		return s(21, 31, 61)
	case key{ResNet18, 64, 4}:
		return s(11, 61)
	case key{ResNet18, 128, 4}:
		return s(11)
	case key{ResNet50, 64, 1}:
		return s(101)
	case key{ResNet50, 32, 2}:
		return s(101, 111)
	case key{ResNet50, 64, 2}:
		return s(81)
	case key{ResNet50, 32, 4}:
		return s(131, 221)
	case key{ResNet50, 64, 4}:
		return s(191)
	case key{LM, 5, 1}:
		return s(31, 41, 61, 71)
	case key{LM, 10, 1}:
		return s(11, 21, 41)
	case key{LM, 20, 1}:
		return s(11, 41)
	case key{LM, 40, 1}:
		return s(11)
	case key{LM, 5, 2}:
		return s(31, 51, 61, 71)
	case key{LM, 10, 2}:
		return s(11, 31, 41)
	case key{LM, 20, 2}:
		return s(31, 41)
	case key{LM, 40, 2}:
		return s(11)
	case key{LM, 5, 4}:
		return s(11, 31, 71, 91)
	case key{LM, 10, 4}:
		return s(11, 31, 61)
	case key{LM, 20, 4}:
		return s(11, 61)
	case key{LM, 40, 4}:
		return s(61)
	case key{Recommendation, 512, 1}:
		return s(21, 41, 71, 91)
	case key{Recommendation, 1024, 1}:
		return s(21, 51, 91)
	case key{Recommendation, 2048, 1}:
		return s(21, 41)
	case key{Recommendation, 4096, 1}:
		return s(41)
	}
	return starts, 0
}

// DeclaredModes returns the batch sizes a job may reach, known up front from
// its model, mode and initial batch size alone, without the authors'
// hindsight of the profiled schedule: {bs0} for static jobs (and for
// Transformer, which never adapts), {bs0, max} for Accordion, and
// {bs0·2^i ≤ max} for GNS. Pass it as predictor.Job.Modes.
func DeclaredModes(m Model, mode Mode, bs0 int) []int {
	top := m.MaxBatchSize()
	if mode == Static || m == Transformer || bs0 >= top {
		return []int{bs0}
	}
	if mode == Accordion {
		return []int{bs0, top}
	}
	var modes []int
	for b := bs0; b <= top; b *= 2 {
		modes = append(modes, b)
	}
	return modes
}
