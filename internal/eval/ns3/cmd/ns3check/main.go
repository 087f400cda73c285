// Command ns3check cross-checks the fluid network model of CASSINI's
// cluster simulation (internal/eval/netsim) against ns-3 at the packet
// level: it runs the chosen cases in the fluid model, replays them in ns-3
// under each congestion control and prints the comparison.
//
//	go run ./internal/eval/ns3/cmd/ns3check -cases fig2,snapshot1 -iterations 10
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/orrery/orrery/internal/eval/netsim"
	"github.com/orrery/orrery/internal/eval/ns3"
)

func main() {
	cases := flag.String("cases", "fig2,snapshot1,snapshot2,cluster", "cases: fig2, snapshot1..snapshot5, cluster")
	iters := flag.Int("iterations", 10, "iterations per job (snapshots)")
	ccs := flag.String("ccs", "dctcp,cubic,newreno", "congestion controls: dctcp, cubic, newreno, dcqcn, mltcp-dcqcn, mltcp-reno")
	variants := flag.String("variants", "unshifted,cassini,shifted", "variants: unshifted, cassini (Pad agents, 5% headroom), elastic (the default Elastic agents), shifted, half")
	clusterJobs := flag.Int("cluster-jobs", 6, "jobs of the cluster case")
	clusterModels := flag.String("cluster-models", "", "models of the cluster case (default: all 13)")
	clusterIters := flag.String("cluster-iterations", "10-20", "iterations per job of the cluster case, MIN-MAX")
	clusterGPUs := flag.String("cluster-gpus", "2,3,4", "GPU counts of the cluster case")
	seed := flag.Uint64("seed", 1, "seed of the cluster case")
	gbps := flag.Float64("gbps", 1, "the fastest link's rate in the packet-level replay")
	partial := flag.Float64("partial", 0.5, "the fraction of CASSINI's shifts the half variant keeps")
	catchUp := flag.Bool("catch-up", false, "let delayed connections send their backlog past their peak")
	keep := flag.String("keep", "", "directory to keep every run's scenario and output in")
	asJSON := flag.Bool("json", false, "print JSON")
	hold := flag.String("hold", "gain", "which CASSINI shifts agents hold: gain, score or all (netsim.Hold)")
	flag.Parse()
	opt := ns3.Options{Keep: *keep, Partial: *partial, Export: ns3.ExportOptions{Gbps: *gbps, Net: ns3.Net{CatchUp: *catchUp}}}
	h, err := netsim.ParseHold(*hold)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ns3check: -hold:", err)
		os.Exit(2)
	}
	if h != netsim.HoldGain { // otherwise each variant's defaults (ns3.Options.Cassini)
		opt.Cassini = &netsim.CassiniOptions{Headroom: 0.05, Hold: h}
	}
	if err := run(*cases, *iters, *ccs, *variants, *clusterJobs, *clusterModels, *clusterIters, *clusterGPUs, *seed, opt, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "ns3check:", err)
		os.Exit(1)
	}
}

func run(caseList string, iters int, ccList, variantList string, cjobs int, cmodels, citers, cgpus string, seed uint64, opt ns3.Options, asJSON bool) error {
	ctx := context.Background()
	var cs []ns3.Case
	for _, name := range strings.Split(caseList, ",") {
		if name == "cluster" {
			var lo, hi int
			if _, err := fmt.Sscanf(citers, "%d-%d", &lo, &hi); err != nil {
				return fmt.Errorf("-cluster-iterations %q: %w", citers, err)
			}
			var models []string
			if cmodels != "" {
				models = strings.Split(cmodels, ",")
			}
			var gpus []int
			for _, g := range strings.Split(cgpus, ",") {
				var n int
				if _, err := fmt.Sscanf(g, "%d", &n); err != nil {
					return fmt.Errorf("-cluster-gpus %q: %w", cgpus, err)
				}
				gpus = append(gpus, n)
			}
			c, err := ns3.Cluster("cluster", cjobs, models, gpus, lo, hi, 0.9, seed)
			if err != nil {
				return err
			}
			cs = append(cs, c)
			continue
		}
		c, err := ns3.Snapshot(name, iters)
		if err != nil {
			return err
		}
		cs = append(cs, c)
	}
	for _, s := range strings.Split(ccList, ",") {
		cc, err := ns3.ParseCC(s)
		if err != nil {
			return err
		}
		opt.CCs = append(opt.CCs, cc)
	}
	for _, s := range strings.Split(variantList, ",") {
		opt.Variants = append(opt.Variants, ns3.Variant(s))
	}
	start := time.Now()
	prog, err := ns3.Build(ctx, "")
	if err != nil {
		return err
	}
	built := time.Since(start)
	runs, err := ns3.CrossCheck(ctx, prog, cs, opt)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(runs)
	}
	fmt.Printf("build %.1fs, runs %.1fs wall\n\n", built.Seconds(), time.Since(start).Seconds()-built.Seconds())
	return ns3.WriteReport(os.Stdout, runs)
}
