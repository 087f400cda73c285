package ns3

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orrery/orrery/engine/cassini/agent"
)

// OutputFormat is the first line of the program's output.
const OutputFormat = "orrery-ns3-out 1"

// Iteration is one completed iteration of a job.
type Iteration struct {
	Job, Index int
	Start      time.Duration
	Comm       time.Duration // its first communication step's start; -1 if none
	End        time.Duration // its last step's end (the next may start later, on an agent's slot)
	// Marks and Drops count the job's data packets marked and dropped by
	// switch ports while the iteration ran.
	Marks, Drops int64
}

// LinkStats are one direction of a link over the whole run.
type LinkStats struct {
	From, To int
	Packets  int64 // packets sent (data and ACKs)
	Marks    int64 // CE marks on data packets (switch ports only)
	AckMarks int64 // CE marks on other packets (DCTCP's ACKs are ECN-capable)
	Drops    int64 // data packets dropped
	AckDrops int64 // other packets dropped (ACKs and handshakes, which are not ECN-capable under classic ECN)
	MaxQueue int64 // the longest queue, bytes
}

// JobStats are one job's totals.
type JobStats struct {
	Job        int
	Iterations int
	Marks      int64
	Drops      int64
	AckDrops   int64
	Agent      *agent.Stats // the job's agent after the run; nil without one
}

// Output is what a run of the program reports.
type Output struct {
	Iterations []Iteration // in the order they completed
	Links      []LinkStats
	Jobs       []JobStats
	End        time.Duration // simulated time at the end
	Events     int64         // ns-3 events executed
	WallSec    float64       // wall time the simulation loop took, as the program measured it
	CPU        time.Duration // the process's user and system time (set by Run; 0 from Parse)
	Decisions  int           // agent decisions asked for
}

// Job returns job id's iterations in order.
func (o Output) Job(id int) []Iteration {
	var out []Iteration
	for _, it := range o.Iterations {
		if it.Job == id {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b Iteration) int { return a.Index - b.Index })
	return out
}

// IterMs returns job id's iteration times in milliseconds as the fluid
// simulation counts them: start to start (an agent's padding included), the
// last one to its end.
func (o Output) IterMs(id int) []float64 {
	its := o.Job(id)
	out := make([]float64, len(its))
	for i, it := range its {
		end := it.End
		if i+1 < len(its) {
			end = its[i+1].Start
		}
		out[i] = float64(end-it.Start) / 1e6
	}
	return out
}

// Marks returns the CE marks of job id's packets, summed over its
// iterations.
func (o Output) Marks(id int) int64 {
	var m int64
	for _, it := range o.Iterations {
		if it.Job == id {
			m += it.Marks
		}
	}
	return m
}

// Parse reads the program's output (a recorded run, say). Agent requests
// in it are counted, not answered.
func Parse(r io.Reader) (Output, error) {
	return parse(r, nil)
}

// parse reads the output line by line; ready, if not nil, answers each
// agent request ("R job t") before the next line is read, seeing the output
// so far.
func parse(r io.Reader, ready func(o *Output, job int, at time.Duration) error) (Output, error) {
	var o Output
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	header, ended := false, false
	for sc.Scan() {
		line++
		text := sc.Text()
		if !header {
			if text != OutputFormat {
				return o, fmt.Errorf("%w: output line 1: %q is not %q", ErrInvalid, text, OutputFormat)
			}
			header = true
			continue
		}
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if ended {
			return o, fmt.Errorf("%w: output line %d: %q after the end", ErrInvalid, line, text)
		}
		n, err := ints(f[1:], f[0] == "E")
		if err != nil {
			return o, fmt.Errorf("%w: output line %d: %q: %w", ErrInvalid, line, text, err)
		}
		want := map[string]int{"I": 7, "L": 8, "J": 5, "R": 2, "E": 3}[f[0]]
		if want == 0 || len(n) != want {
			return o, fmt.Errorf("%w: output line %d: %q: unknown record or wrong field count", ErrInvalid, line, text)
		}
		switch f[0] {
		case "I":
			o.Iterations = append(o.Iterations, Iteration{Job: int(n[0]), Index: int(n[1]), Start: time.Duration(n[2]),
				Comm: time.Duration(n[3]), End: time.Duration(n[4]), Marks: n[5], Drops: n[6]})
		case "L":
			o.Links = append(o.Links, LinkStats{From: int(n[0]), To: int(n[1]), Packets: n[2], Marks: n[3], AckMarks: n[4],
				Drops: n[5], AckDrops: n[6], MaxQueue: n[7]})
		case "J":
			o.Jobs = append(o.Jobs, JobStats{Job: int(n[0]), Iterations: int(n[1]), Marks: n[2], Drops: n[3], AckDrops: n[4]})
		case "R":
			o.Decisions++
			if ready != nil {
				if err := ready(&o, int(n[0]), time.Duration(n[1])); err != nil {
					return o, err
				}
			}
		case "E":
			o.End, o.Events = time.Duration(n[0]), n[1]
			o.WallSec, _ = strconv.ParseFloat(f[3], 64)
			ended = true
		}
	}
	if err := sc.Err(); err != nil {
		return o, err
	}
	if !ended {
		return o, fmt.Errorf("%w: output ends at line %d without its summary", ErrInvalid, line)
	}
	return o, nil
}

// ints parses integer fields; with lastFloat the last one is a decimal
// (checked, returned as 0).
func ints(f []string, lastFloat bool) ([]int64, error) {
	out := make([]int64, len(f))
	for i, s := range f {
		if lastFloat && i == len(f)-1 {
			if _, err := strconv.ParseFloat(s, 64); err != nil {
				return nil, err
			}
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
