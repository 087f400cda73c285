package netsim

import (
	"fmt"
	"testing"

	"github.com/orrery/orrery/internal/eval/topology"
	"github.com/orrery/orrery/internal/eval/workload"
)

// snapshots are the paper's Fig. 2 and Table 2 experiments: jobs of two
// GPUs, one server in each of two racks, all starting at once.
func snapshots(t testing.TB, iters int) map[string]Config {
	t.Helper()
	tp, err := topology.New(topology.Spec{Pods: 1, ToRsPerPod: 2, ServersPerToR: 3, AggsPerPod: 1, ServerGbps: 50, ToRGbps: 50})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(jobs ...string) Config {
		c := Config{Topology: tp, Pinned: map[int][]int{}}
		for i, j := range jobs {
			var model string
			var batch int
			fmt.Sscanf(j, "%s %d", &model, &batch)
			c.Jobs = append(c.Jobs, workload.Job{ID: i, Model: model, GPUs: 2, Batch: batch, Iterations: iters})
			c.Pinned[i] = []int{i, 3 + i}
		}
		return c
	}
	return map[string]Config{
		"fig2":      mk("VGG19 1400", "VGG19 1400"),
		"snapshot1": mk("WideResNet101 800", "VGG16 1400"),
		"snapshot2": mk("VGG19 1400", "VGG16 1700", "ResNet50 1600"),
		"snapshot3": mk("VGG19 1024", "VGG16 1200"),
		"snapshot4": mk("RoBERTa 12", "RoBERTa 12"),
		"snapshot5": mk("BERT 8", "VGG19 1400", "WideResNet101 800"),
	}
}

// Shifts never make a job slower than CASSINI's placement alone (beyond 2%,
// the noise), with or without noise, and they pay where the paper says:
// Fig. 2 and snapshots 3 and 4 by more than 5%.
func TestShiftsNeverCost(t *testing.T) {
	noises := map[string]workload.Replay{"none": {Source: workload.None}, "gauss2": {Source: workload.Gauss, CV: 0.02, Seed: 1},
		"gauss5": {Source: workload.Gauss, CV: 0.05, Seed: 1}, "alibaba": loadNoise(t, workload.Both)}
	for name, cfg := range snapshots(t, 400) {
		for nz, noise := range noises {
			cfg.Noise = noise
			cfg.Policy = CassiniPlacement
			place := run(t, cfg)
			cfg.Policy = Cassini
			shift := run(t, cfg)
			for k, j := range shift.Jobs {
				p := place.Jobs[k]
				if j.MeanIter > p.MeanIter*102/100 {
					t.Errorf("%s, %s: job %d (%s) %v with shifts, %v without", name, nz, j.ID, j.Model, j.MeanIter, p.MeanIter)
				}
			}
			gain := place.Mean() / shift.Mean()
			t.Logf("%s %-7s: placement %.1f ms, shifts %.1f ms (%.3fx), %d agents, %.2f adjustments/min, %d gave up",
				name, nz, place.Mean(), shift.Mean(), gain, shift.Agent.Agents, shift.Agent.PerMinute, shift.Agent.Released)
			if (name == "fig2" || name == "snapshot3" || name == "snapshot4") && gain < 1.05 {
				t.Errorf("%s, %s: shifts gain %.3fx", name, nz, gain)
			}
		}
	}
}

// The hold modes decide who holds a shift: Table 2's snapshot 1 (score 1,
// but the two jobs settle interleaved by themselves, so the replay sees
// nothing to gain) is held by HoldScore and HoldAll, not by HoldGain; Fig. 2
// by all three.
func TestHoldModes(t *testing.T) {
	snaps := snapshots(t, 200)
	for _, tc := range []struct {
		scenario string
		hold     Hold
		agents   int
	}{
		{"snapshot1", HoldGain, 0}, {"snapshot1", HoldScore, 2}, {"snapshot1", HoldAll, 2},
		{"fig2", HoldGain, 2}, {"fig2", HoldScore, 2}, {"fig2", HoldAll, 2},
	} {
		cfg := snaps[tc.scenario]
		cfg.Policy, cfg.Cassini.Hold = Cassini, tc.hold
		if r := run(t, cfg); r.Agent.Agents != tc.agents {
			t.Errorf("%s, %v: %d agents, want %d", tc.scenario, tc.hold, r.Agent.Agents, tc.agents)
		}
	}
	for _, s := range []string{"", "gain", "score", "all"} {
		if _, err := ParseHold(s); err != nil {
			t.Error(err)
		}
	}
	for _, s := range []string{"", "delay", "score"} {
		if _, err := ParseRank(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseHold("most"); err == nil {
		t.Error("ParseHold(most)")
	}
	if _, err := ParseRank("best"); err == nil {
		t.Error("ParseRank(best)")
	}
	for _, s := range []string{"themis", "Gavel", "shockwave", "fifo"} {
		if _, err := ParseScheduler(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseScheduler("pollux"); err == nil {
		t.Error("ParseScheduler(pollux)")
	}
}

// The sharing count: every job the rankings place is counted once per
// placement; on one rack of single-GPU servers no two jobs share a link (each
// host link carries one job), on the paper's fabric at full load some do.
func TestSharingCount(t *testing.T) {
	jobs, err := workload.Generate(workload.Config{Jobs: 30, Load: 1, ClusterGPUs: 24, Seed: 3, MinIterations: 20, MaxIterations: 50})
	if err != nil {
		t.Fatal(err)
	}
	rack, err := topology.New(topology.Spec{Pods: 1, ToRsPerPod: 1, ServersPerToR: 24, AggsPerPod: 1, ServerGbps: 50, ToRGbps: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range []*topology.Topology{rack, topology.Paper()} {
		r := run(t, Config{Topology: tp, Jobs: jobs, Policy: CassiniPlacement, Seed: 1})
		if r.Rank.Placed < len(jobs) || r.Rank.Sharing < 0 || r.Rank.Sharing > r.Rank.Placed {
			t.Fatalf("placed %d (of %d jobs), sharing %d", r.Rank.Placed, len(jobs), r.Rank.Sharing)
		}
		if (tp == rack) != (r.Rank.Sharing == 0) {
			t.Errorf("%d servers: %d of %d placed jobs share a binding link", tp.Servers, r.Rank.Sharing, r.Rank.Placed)
		}
	}
}

// commensurate accepts periods whose unified circle is at most four of the
// longest, the only ones a slack is measured for.
func TestCommensurate(t *testing.T) {
	for _, tc := range []struct {
		periods []int
		want    bool
	}{
		{[]int{268, 268}, true}, {[]int{100, 200, 400}, true}, {[]int{120, 150}, true},
		{[]int{268, 279}, false}, {[]int{120, 150, 7}, false},
	} {
		jobs := make([]int, len(tc.periods))
		for i := range jobs {
			jobs[i] = i
		}
		if got := commensurate(tc.periods, jobs); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.periods, got, tc.want)
		}
	}
}
