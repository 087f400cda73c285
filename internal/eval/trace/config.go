package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// Config holds the authors' planner hyper-parameters for one cluster size
// (upstream scheduler/configurations/*.json).
type Config struct {
	FutureRounds  int       `json:"future_rounds"`           // T, rounds in the planning window
	K             float64   `json:"k"`                       // makespan regulariser weight, per second
	Lambda        float64   `json:"lambda"`                  // priority power for the relaxed FTF path
	RhoMax        float64   `json:"rhomax"`                  // FTF bound ρ_max
	LogBases      []float64 `json:"log_approximation_bases"` // breakpoints of the piecewise-linear log
	GPURAM        float64   `json:"gpu_ram"`                 // GiB, unused upstream
	SolverRelGap  float64   `json:"solver_rel_gap"`          // Gurobi MIPGap
	SolverThreads int       `json:"solver_num_threads"`      // Gurobi threads
	SolverTimeout float64   `json:"solver_timeout"`          // seconds per solve
}

// configKeys are a configuration's keys, every one required.
var configKeys = []string{"future_rounds", "k", "lambda", "rhomax", "log_approximation_bases", "gpu_ram", "solver_rel_gap", "solver_num_threads", "solver_timeout"}

// LoadConfigFile loads the named configuration file.
func LoadConfigFile(path string) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, err
	}
	defer f.Close()
	return LoadConfig(f)
}

// LoadConfig reads a configuration. Unknown fields are an error and every
// field must be present; values are checked as upstream asserts them
// (T > 0, k > 0, log bases starting at 0, strictly increasing, within
// [0, 1]) plus finiteness. Errors wrap ErrConfig and name the field.
func LoadConfig(r io.Reader) (Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return Config{}, err
	}
	// Presence check: decode into raw fields first.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	for _, f := range configKeys {
		if _, ok := raw[f]; !ok {
			return Config{}, fmt.Errorf("%w: field %s missing (a configuration has %s)", ErrConfig, f, strings.Join(configKeys, ", "))
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		if strings.Contains(err.Error(), "unknown field") {
			return Config{}, fmt.Errorf("%w: %w (a configuration has %s)", ErrConfig, err, strings.Join(configKeys, ", "))
		}
		return Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate checks the configuration's values.
func (c *Config) Validate() error {
	bad := func(field string, v any) error {
		return fmt.Errorf("%w: %s = %v", ErrConfig, field, v)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case c.FutureRounds <= 0:
		return bad("future_rounds", c.FutureRounds)
	case !(c.K > 0) || !finite(c.K):
		return bad("k", c.K)
	case !(c.Lambda >= 0) || !finite(c.Lambda):
		return bad("lambda", c.Lambda)
	case !(c.RhoMax > 0) || !finite(c.RhoMax):
		return bad("rhomax", c.RhoMax)
	case !(c.GPURAM >= 0) || !finite(c.GPURAM):
		return bad("gpu_ram", c.GPURAM)
	case !(c.SolverRelGap >= 0) || !finite(c.SolverRelGap):
		return bad("solver_rel_gap", c.SolverRelGap)
	case c.SolverThreads < 0:
		return bad("solver_num_threads", c.SolverThreads)
	case !(c.SolverTimeout > 0) || !finite(c.SolverTimeout):
		return bad("solver_timeout", c.SolverTimeout)
	case len(c.LogBases) < 2 || c.LogBases[0] != 0:
		return bad("log_approximation_bases", c.LogBases)
	}
	for i, b := range c.LogBases {
		if !(b >= 0 && b <= 1) || (i > 0 && b <= c.LogBases[i-1]) {
			return errors.Join(bad("log_approximation_bases", c.LogBases),
				fmt.Errorf("element %d = %v must lie in [0, 1] and exceed the previous", i, b))
		}
	}
	return nil
}
