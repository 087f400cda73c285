package policy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/orrery/orrery/engine/shockwave/round"
	"github.com/orrery/orrery/internal/eval/sim"
)

// ErrInvalid reports bad input to a policy; ErrUnknown an unknown policy
// name.
var (
	ErrInvalid = errors.New("policy: invalid input")
	ErrUnknown = errors.New("policy: unknown policy")
)

// Config holds what [New] needs to build any policy.
type Config struct {
	GPUs      int          // M
	Shockwave round.Config // the planner's configuration
	Gavel     GavelOptions // the baselines' round mechanism
	// AuthorsOptima makes the baselines return the optimum the authors'
	// solvers return where a program has several, and find OSSP's
	// makespan as they do: MaxSumThroughput.Interior for MST,
	// FinishTimeFairness.Interior for Themis, MinTotalDuration.Bisect and
	// Interior for OSSP. false is canonical.
	AuthorsOptima bool
}

// Names returns the policies [New] builds, by the authors' names, in the
// order of their plots: Shockwave, then the baselines.
func Names() []string {
	return []string{"shockwave", "max_min_fairness", "finish_time_fairness", "min_total_duration", "max_sum_throughput_perf",
		"allox", "gandiva_fair"}
}

// aliases maps the paper's legends to the authors' policy names.
var aliases = map[string]string{
	"gavel": "max_min_fairness", "themis": "finish_time_fairness", "ossp": "min_total_duration",
	"mst": "max_sum_throughput_perf", "max_sum_throughput": "max_sum_throughput_perf",
	"gandiva-fair": "gandiva_fair",
}

// Canonical returns the authors' name for a policy name or legend
// ("gavel", "Themis", "OSSP", "MST", "Gandiva-Fair" are accepted), or
// ErrUnknown.
func Canonical(name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if a, ok := aliases[n]; ok {
		n = a
	}
	for _, k := range Names() {
		if k == n {
			return n, nil
		}
	}
	return "", fmt.Errorf("%w %q (known: %s; aliases gavel, themis, ossp, mst, gandiva-fair)", ErrUnknown, name, strings.Join(Names(), ", "))
}

// Legend returns the name the paper's figures use for a policy.
func Legend(name string) string {
	switch name {
	case "shockwave":
		return "Shockwave"
	case "max_min_fairness":
		return "Gavel"
	case "finish_time_fairness":
		return "Themis"
	case "min_total_duration":
		return "OSSP"
	case "max_sum_throughput_perf":
		return "MST"
	case "allox":
		return "AlloX"
	case "gandiva_fair":
		return "Gandiva-Fair"
	}
	return name
}

// New returns a fresh policy for one run.
func New(name string, c Config) (sim.Policy, error) {
	n, err := Canonical(name)
	if err != nil {
		return nil, err
	}
	var a Allocator
	switch n {
	case "shockwave":
		return NewShockwave(c.GPUs, c.Shockwave)
	case "max_min_fairness":
		a = &MaxMinFairness{}
	case "finish_time_fairness":
		a = &FinishTimeFairness{Interior: c.AuthorsOptima}
	case "min_total_duration":
		a = &MinTotalDuration{Bisect: c.AuthorsOptima, Interior: c.AuthorsOptima}
	case "max_sum_throughput_perf":
		a = &MaxSumThroughput{Interior: c.AuthorsOptima}
	case "allox":
		a = &AlloX{}
	case "gandiva_fair":
		a = GandivaFair{}
	}
	return NewGavel(a, c.Gavel)
}
