package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Limits on trace values, far beyond the authors' traces (at most 8 GPUs
// and about 3·10⁷ steps per job), so that derived profiles stay in memory.
const (
	MaxGPUs       = 1024
	MaxTotalSteps = 1 << 40
	maxLine       = 1 << 20

	// The authors' traces give every job weight 1; the bounds keep the
	// weighted policies' sums and ratios finite.
	MinPriority = 1e-6 // priority_weight
	MaxPriority = 1e6

	// A throughput table's value (iterations/s) is usable within these
	// bounds; the authors' tables hold 0.1 to a few thousand.
	MinThroughput = 1e-9
	MaxThroughput = 1e12
)

// FieldNames returns the names of the 12 trace fields, in order.
func FieldNames() [12]string {
	return [12]string{
		"job_type", "command", "working_dir", "num_steps_arg", "needs_data_dir", "total_steps",
		"scale_factor", "mode", "priority_weight", "SLO", "duration_s", "arrival_s",
	}
}

// Job is one line of a trace.
type Job struct {
	ID   int // 0-based position among the trace's jobs (the authors' job id)
	Line int // 1-based line number in the file; 0 for ParseLine

	JobType   string // "ResNet-18 (batch size 32)"
	Model     Model
	BatchSize int // the initial batch size, bs0

	Command      string
	WorkingDir   string
	NumStepsArg  string
	NeedsDataDir bool

	TotalSteps int64   // iterations at the initial batch size
	GPUs       int     // scale_factor
	Mode       Mode    // static, accordion or gns
	Priority   float64 // priority_weight, in [MinPriority, MaxPriority]
	SLO        float64 // the authors write -1 for none
	Duration   float64 // seconds alone on its GPUs, the generator's target (whole seconds)
	Arrival    float64 // seconds after the start of the trace
}

// ParseFile parses the named trace file.
func ParseFile(path string) ([]Job, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f)
}

// Parse reads a trace: one job per line, 12 tab-separated fields (see
// [FieldNames]); "\r\n" line ends are accepted and empty lines skipped.
// Errors are *[ParseError]s with the line number and field.
func Parse(r io.Reader) ([]Job, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var jobs []Job
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSuffix(sc.Text(), "\r")
		if text == "" {
			continue
		}
		j, err := ParseLine(text)
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				pe.Line = line
			}
			return nil, err
		}
		j.ID, j.Line = len(jobs), line
		jobs = append(jobs, j)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ParseError{Line: line + 1, Err: errors.Join(ErrSyntax, err)}
		}
		return nil, err
	}
	return jobs, nil
}

// ParseLine parses one trace line (without its line end). It checks the
// syntax of every field, that the model and batch size are known, and that
// numbers are in range; the returned error is a *[ParseError] naming the
// field.
func ParseLine(line string) (Job, error) {
	var f [12]string
	n := 0
	for s := range strings.SplitSeq(line, "\t") {
		if n < len(f) {
			f[n] = s
		}
		n++
	}
	if n != len(f) {
		return Job{}, &ParseError{Value: strconv.Itoa(n) + " fields", Err: ErrFieldCount}
	}
	fail := func(i int, err error) (Job, error) {
		return Job{}, &ParseError{Field: FieldNames()[i], Value: f[i], Err: err}
	}
	j := Job{JobType: f[0], Command: f[1], WorkingDir: f[2], NumStepsArg: f[3]}
	var err error
	if j.Model, j.BatchSize, err = ParseJobType(f[0]); err != nil {
		return fail(0, err)
	}
	switch f[4] {
	case "0":
	case "1":
		j.NeedsDataDir = true
	default:
		return fail(4, ErrSyntax)
	}
	steps, err := strconv.ParseInt(f[5], 10, 64)
	if err != nil {
		return fail(5, ErrSyntax)
	}
	if steps <= 0 || steps > MaxTotalSteps {
		return fail(5, ErrRange)
	}
	j.TotalSteps = steps
	gpus, err := strconv.Atoi(f[6])
	if err != nil {
		return fail(6, ErrSyntax)
	}
	if gpus <= 0 || gpus > MaxGPUs {
		return fail(6, ErrRange)
	}
	j.GPUs = gpus
	var ok bool
	if j.Mode, ok = ParseMode(f[7]); !ok {
		return fail(7, fmt.Errorf("%w (want static, accordion or gns)", ErrMode))
	}
	if j.Priority, err = parseFloat(f[8]); err != nil {
		return fail(8, err)
	}
	if !(j.Priority >= MinPriority && j.Priority <= MaxPriority) {
		return fail(8, ErrRange)
	}
	if j.SLO, err = parseFloat(f[9]); err != nil {
		return fail(9, err)
	}
	// The authors read duration with int(): whole seconds only.
	dur, err := strconv.ParseInt(f[10], 10, 64)
	if err != nil {
		return fail(10, ErrSyntax)
	}
	if dur < 0 || dur > 1<<53 {
		return fail(10, ErrRange)
	}
	j.Duration = float64(dur)
	if j.Arrival, err = parseFloat(f[11]); err != nil {
		return fail(11, err)
	}
	if j.Arrival < 0 {
		return fail(11, ErrRange)
	}
	return j, nil
}

// ParseJobType splits "ResNet-18 (batch size 32)" into its model and batch
// size, which must be one the model supports.
func ParseJobType(s string) (Model, int, error) {
	name, rest, ok := strings.Cut(s, " (batch size ")
	if !ok {
		if _, known := ParseModel(s); known {
			return 0, 0, errors.Join(ErrSyntax, errors.New(`missing " (batch size B)"`))
		}
		return 0, 0, unknownModel()
	}
	m, known := ParseModel(name)
	if !known {
		return 0, 0, unknownModel()
	}
	digits, ok := strings.CutSuffix(rest, ")")
	if !ok {
		return 0, 0, ErrSyntax
	}
	bs, err := strconv.Atoi(digits)
	if err != nil || strconv.Itoa(bs) != digits {
		return 0, 0, ErrSyntax
	}
	if !m.ValidBatchSize(bs) {
		return 0, 0, fmt.Errorf("%w (%s takes %s)", ErrBatchSize, m, joinInts(m.BatchSizes()))
	}
	return m, bs, nil
}

// unknownModel is ErrUnknownModel with the models a trace may name.
func unknownModel() error {
	var names []string
	for _, m := range Models() {
		names = append(names, m.String())
	}
	return fmt.Errorf(`%w (want %s, as "<model> (batch size B)")`, ErrUnknownModel, orList(names))
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return orList(s)
}

// parseFloat accepts what Python's float() accepts for these files, minus
// NaN and infinities.
func parseFloat(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, ErrSyntax
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, ErrRange
	}
	return v, nil
}
