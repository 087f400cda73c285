package trace

// Setup is one of the authors' experiment setups (their
// scheduler/reproduce scripts): a trace, the throughput table it was run
// with and the planner configuration for the cluster size. The names are
// relative to the authors' data directory (internal/eval/data/shockwave in this
// repository): Trace under traces/, Table at the top, Config under
// configurations/.
type Setup struct {
	GPUs                 int
	Trace, Table, Config string
}

// Setups returns the authors' four setups by cluster size: 120 jobs on 32
// GPUs with the tacc table, and 220, 460 and 900 jobs on 64, 128 and 256
// GPUs with the wisr table.
func Setups() []Setup {
	const tail = "_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace"
	return []Setup{
		{32, "120_0.2_5_100_40_25" + tail, "tacc_throughputs.json", "tacc_32gpus.json"},
		{64, "220_0.2_5_100_25_4" + tail, "wisr_throughputs.json", "scale_64gpus.json"},
		{128, "460_0.2_5_100_10_1" + tail, "wisr_throughputs.json", "scale_128gpus.json"},
		{256, "900_0.2_5_1000_5_15" + tail, "wisr_throughputs.json", "scale_256gpus.json"},
	}
}

// SetupFor returns the authors' setup for a cluster of gpus GPUs, if they
// ran one.
func SetupFor(gpus int) (Setup, bool) {
	for _, s := range Setups() {
		if s.GPUs == gpus {
			return s, true
		}
	}
	return Setup{}, false
}
