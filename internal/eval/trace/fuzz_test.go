package trace

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/orrery/orrery/internal/eval/throughput"
)

var fuzzTable = sync.OnceValues(func() (*throughput.Table, error) {
	return throughput.LoadFile(dataDir + "tacc_throughputs.json")
})

// FuzzParse feeds arbitrary text to the trace parser: it must return jobs
// whose fields are in range, or an error wrapping a sentinel with a line
// number; deriving the profile of a parsed job must not panic either.
func FuzzParse(f *testing.F) {
	f.Add("LM (batch size 10)\tpython3 main.py --cuda --data %s/wikitext2 --batch_size 10\tlanguage_modeling\t--steps\t1\t134583\t1\tgns\t1\t-1.000000\t1418\t0\n")
	f.Add("ResNet-18 (batch size 32)\tc\tw\t--num_steps\t1\t143450\t2\taccordion\t1\t-1.000000\t3338\t55\r\n")
	f.Add("Recommendation (batch size 512)\tc\tw\t-n\t1\t4000\t1\tstatic\t5\t1.2\t100\t3.5")
	f.Add("ResNet-50 (batch size 16)\t\t\t\t0\t1\t8\tgns\t1e0\t-1\t0\t0x10")
	f.Add("\n\n\t\t\t")
	tab, err := fuzzTable()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		jobs, err := Parse(strings.NewReader(in))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line <= 0 {
				t.Fatalf("error without a line: %v", err)
			}
			if !errors.Is(err, ErrFieldCount) && !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrRange) &&
				!errors.Is(err, ErrUnknownModel) && !errors.Is(err, ErrBatchSize) && !errors.Is(err, ErrMode) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		for i := range jobs {
			j := &jobs[i]
			if !j.Model.ValidBatchSize(j.BatchSize) || j.GPUs < 1 || j.GPUs > MaxGPUs || j.TotalSteps < 1 ||
				j.Mode < Static || j.Mode > GNS || !(j.Priority > 0) || !(j.Arrival >= 0) || j.Duration < 0 {
				t.Fatalf("job out of range: %+v", j)
			}
			if Epochs(j.Model, j.BatchSize, j.TotalSteps) > 1<<16 {
				continue // keep the fuzzer fast
			}
			p, err := Derive(j, tab, DeriveOptions{})
			if err != nil {
				if !errors.Is(err, ErrThroughput) {
					t.Fatalf("derive: %v", err)
				}
				continue
			}
			if p.Epochs() < 1 || len(p.EpochDur) != p.Epochs() || !(p.Isolated() > 0) {
				t.Fatalf("bad profile for %+v: %d epochs, T_iso %v", j, p.Epochs(), p.Isolated())
			}
		}
	})
}

// FuzzLoadConfig checks that configurations load valid or fail with ErrConfig.
func FuzzLoadConfig(f *testing.F) {
	f.Add(`{"future_rounds": 20, "k": 1e-3, "lambda": 12.0, "rhomax": 1.0, "log_approximation_bases": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0], "gpu_ram": 16, "solver_rel_gap": 1e-3, "solver_num_threads": 24, "solver_timeout": 15}`)
	f.Add(`{"future_rounds": 0}`)
	f.Fuzz(func(t *testing.T, in string) {
		c, err := LoadConfig(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("loaded config fails Validate: %v", err)
		}
	})
}
