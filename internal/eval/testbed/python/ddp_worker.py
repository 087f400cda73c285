"""One rank of a kernel-testbed job as real PyTorch DDP (gloo) with the
Python time-shift agent (orrery.agent.TimeShiftAgent): the Go testbed
(internal/eval/testbed, Options.Torch) starts it in the rank's network
namespace with the JSON configuration its argument names (the Go worker's
WorkerConfig), and reads its report (the Go worker's WorkerResult) from
its standard output.

The model is one linear layer whose gradient is the scenario's all-reduce
(a ring of 2 ranks sends each its whole gradient), compute is a sleep of
the model's compute time, and DDP all-reduces the gradient in one bucket
at the end of backward(): communication is backward() here. gloo's
sockets take the namespace's congestion control and the NIC's rate (the
testbed shapes it to the job's peak): no per-socket pacing.
"""

import datetime
import json
import math
import os
import random
import sys
import time


def main():
    with open(sys.argv[1]) as fh:
        cfg = json.load(fh)
    sys.path.insert(0, cfg["BindingsPath"])
    os.environ["GLOO_SOCKET_IFNAME"] = cfg["Iface"]
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    from orrery.agent import TimeShiftAgent

    torch.set_num_threads(1)
    n, rank = len(cfg["Ranks"]), cfg["Rank"]
    hop = sum(s.get("Bytes", 0) for s in cfg["Steps"])
    params = max(1, int(round(hop * n / (2 * (n - 1)) / 4)))  # float32 gradient
    compute_s = sum(s.get("ComputeNs", 0) for s in cfg["Steps"]) / 1e9
    dist.init_process_group("gloo", init_method="tcp://" + cfg["TorchMaster"], rank=rank, world_size=n,
                            timeout=datetime.timedelta(seconds=60))
    model = torch.nn.Linear(params, 1, bias=False)
    ddp = DDP(model, bucket_cap_mb=4 * params / 1e6 + 1)  # one bucket: one all-reduce
    x = torch.ones(1, params)

    agent = None
    a = cfg.get("Agent")
    if a:
        agent = TimeShiftAgent(shift_ms=a["ShiftNs"] / 1e6, period_ms=a["PeriodNs"] / 1e6, mode=a["Mode"],
                               comm_offset_ms=a.get("CommOffsetNs", 0) / 1e6, reference_unix_ms=a["ReferenceNs"] / 1e6,
                               slack_ms=a.get("SlackNs", 0) / 1e6, free_comm_ms=a.get("FreeCommNs", 0) / 1e6,
                               threshold=a.get("Threshold", 0) or 0.0)
    stall = (cfg.get("StallMs") or 10) / 1e3
    rng = random.Random((cfg.get("Seed", 0) << 16) ^ cfg["Job"])
    epoch = cfg["EpochNs"] / 1e9
    res = {"Job": cfg["Job"], "Rank": rank, "Congestion": "", "Iterations": [], "Stalls": 0, "Sleeps": 0, "MaxLateNs": 0}

    def sleep_until(t):
        d = t - time.time()
        if d > 0:
            time.sleep(d)
        late = max(time.time() - t, 0.0)
        res["Sleeps"] += 1
        res["MaxLateNs"] = max(res["MaxLateNs"], int(late * 1e9))
        if late > stall:
            res["Stalls"] += 1
        return late

    def since(t):
        return int(round((t - epoch) * 1e9))

    # gloo connects and allocates lazily: a few all-reduces before the
    # epoch, so that the first measured iteration is not a second long.
    for _ in range(3):
        ddp(x).sum().backward()
        ddp.zero_grad(set_to_none=False)
    sleep_until(epoch + cfg.get("StartNs", 0) / 1e9)
    released = False
    for _ in range(cfg["Iterations"]):
        rec = {"Ready": since(time.time())}
        late = 0.0
        if agent is not None:
            d = agent.wait()
            rec["Delay"] = int(d["delay_ms"] * 1e6)
            rec["Adjusted"] = d["adjusted"]
            if d.get("released") and not released:
                rec["Released"] = released = True
            late += max(time.time() * 1e3 - d["start_unix_ms"], 0.0) / 1e3
        start = time.time()
        rec["Start"] = since(start)
        noise = 1.0
        if cfg.get("NoiseCV"):
            noise = max(1 + cfg["NoiseCV"] * rng.gauss(0, 1), 0.0)
        late += sleep_until(start + compute_s * noise)
        out = ddp(x).sum()
        cs = time.time()
        if agent is not None:
            agent.communicating()
        out.backward()  # DDP's all-reduce of the gradient ends with it
        ce = time.time()
        if agent is not None:
            agent.communicated()
        ddp.zero_grad(set_to_none=False)
        rec["CommStart"], rec["CommEnd"], rec["Late"] = since(cs), since(ce), int(late * 1e9)
        res["Iterations"].append(rec)
    if agent is not None:
        st = agent.stats()
        res["Agent"] = {"Adjustments": st["adjustments"], "Deferred": 0, "Released": released}
        agent.close()
    dist.destroy_process_group()
    json.dump(res, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
