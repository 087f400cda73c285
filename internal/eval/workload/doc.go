// Package workload describes the training jobs of CASSINI's evaluation: the
// paper's 13 models (its Table 3), each as a repeating cycle of compute and
// communication phases, a generator of Poisson job arrivals at a target
// cluster load (one job per arrival, or sweeps of identical copies as a
// hyperparameter search launches them: Config.Sweep), and iteration-time
// noise replayed from real measurements of distributed training on Alibaba
// PAI.
//
// # Models
//
// The paper gives no per-model table of phase durations or bandwidths; it
// gives a few facts, which the models here reproduce at their reference
// configuration (batch size and server count), and Table 3's parameter
// sizes and batch ranges. Everything else is a documented assumption
// ([Model.Note]):
//
//   - VGG16: a 255 ms iteration of which 141 ms carry no traffic (Fig. 3).
//   - Two VGG19 jobs interleave perfectly when one is delayed by 120 ms
//     (Fig. 2).
//   - WideResNet101 and VGG16 interleave perfectly with VGG16 delayed by
//     150 ms (§2, Table 2 snapshot 1).
//   - BERT and VGG19 cannot interleave (§2).
//   - Two RoBERTa jobs score about 0.8 (Table 2 snapshot 4).
//   - GPT-1/2/3 follow the patterns described for Fig. 1: GPT-1 silent in
//     the forward pass then busy during backprop and all-reduce (~200 ms);
//     GPT-2 pipelined, three small activation peaks then a heavy all-reduce
//     (~200 ms); GPT-3 tensor-parallel at ~25 Gbps except while loading data
//     (~0.5 s).
//
// Data-parallel models (PyTorch DDP) communicate with one ring all-reduce
// per iteration whose payload is the model's parameter size from Table 3
// (MiB): every hop of the ring carries 2(n-1)/n of it for n servers, so the
// communication phase lengthens with the job's size. The phase's peak rate is
// fixed by the reference fact (its length alone at the reference server
// count). Model-parallel models have several phases, each a ring all-reduce,
// a pipeline chain (stage to stage) or an all-to-all (embeddings).
//
// Compute phases scale with the batch size: at batch b a phase of length D
// at the reference batch takes D*(0.2 + 0.8*b/ref), a fixed 20% overhead plus
// a per-sample part. Communication does not depend on the batch (gradients
// and weights do not). Servers are assumed to hold one GPU unless the caller
// says otherwise; GPUs within a server communicate without the network.
//
// # Noise
//
// [ParseWorkerTimes] and [ParseCoV] read the Alibaba PAI mini-batch-time
// release (internal/eval/data/alibaba). A synchronous data-parallel iteration waits
// for its slowest worker, so [WorkerTimes.Sync] turns per-worker times into
// a job's per-iteration multiplier (the maximum over the job's workers,
// divided by its median); [CoV.Jitter] turns a job's per-iteration
// coefficient of variation across workers into the multiplier its slowest of
// n workers implies, (1 + e_n*cv_i)/(1 + e_n*median cv), e_n the expected
// maximum of n standard normal variables. [Replay] deals these out to
// simulated jobs deterministically; a [Dealer] deals the same multipliers
// to a whole simulation's jobs, syncing each worker window once and
// computing a job's product only for the iterations it runs.
package workload
