"""A PyTorch training loop with CASSINI's time-shift agent.

The scheduler ranks placements with orrery (cassini.rank) and writes the
chosen candidate's response, or {"period_ms": ..., "shift_ms": ...}, to a
file every worker of the job can read; each worker runs this loop. Only
orrery is needed besides PyTorch; the agent adds one call before each
iteration and one when the gradients' all-reduce starts.

    python3 pytorch_training.py --shift-file /shared/shifts.json --job resnet-1
"""

import argparse

import torch
import torch.nn as nn

from orrery.agent import TimeShiftAgent


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shift-file", required=True)
    ap.add_argument("--job", required=True)
    ap.add_argument("--steps", type=int, default=1000)
    args = ap.parse_args()

    model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    # With torch.nn.parallel.DistributedDataParallel the all-reduce runs
    # during backward(); call agent.communicating() just before it.
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()

    with TimeShiftAgent(shift_file=args.shift_file, job=args.job) as agent:
        for step in range(args.steps):
            agent.wait()  # the iteration starts on this job's slot
            x, y = torch.randn(64, 1024), torch.randint(0, 10, (64,))
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            agent.communicating()  # backward() starts the gradient all-reduce
            loss.backward()
            opt.step()
            if step % 100 == 0:
                s = agent.stats()
                print("step %d: %d adjustments, mean drift %.2f ms" % (step, s["adjustments"], s["mean_abs_drift_ms"]))


if __name__ == "__main__":
    main()
