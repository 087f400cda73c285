"""The drop-in ShockwaveScheduler against the Go scheduler, round for round.

ORRERY_REPLAY names a recording (bindings/crosscheck's
TestPythonShockwaveReplay writes it): the calls the evaluation's Shockwave
policy made to the Go scheduler while the simulator replayed the authors'
120-job trace, and each round's answer. This test drives
orrery.shockwave.ShockwaveScheduler as the authors' simulator drives
theirs: JobMetaData-like objects, a throughput timeline it fills in,
schedule_progress, remove_metadata, increment_round_ptr with set_resolve
every 8 rounds, round_schedule. Skipped without a recording.
"""

import json
import os
import sys
import unittest
from collections import OrderedDict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import orrery  # noqa: E402
from orrery.shockwave import ShockwaveScheduler  # noqa: E402


class JobMetaData(object):
    """The attributes of the authors' JobMetaData the scheduler reads."""

    def __init__(self, job, round_duration):
        self.jobid = job["id"]
        self.nworkers = job["gpus"]
        self.epochs = len(job["epoch_bs"])
        self.epoch_nsamples = job["samples_per_epoch"]
        self.epoch_duration = list(job["epoch_dur_s"])
        self.epoch_duration_preprofiled = list(job["epoch_dur_s"])
        self.bs_schedule = list(job["epoch_bs"])
        self.timestamp_submit = job["submit_s"]
        self.epoch_progress = 0
        self.waiting_delay = 0
        self.throughput_measurements = OrderedDict()
        self.gavel_round_duration = round_duration

    def set_epoch_progress(self, progress):
        assert 0 <= progress <= self.epochs
        self.epoch_progress = progress

    def reset_waiting_delay(self):
        self.waiting_delay = 0


@unittest.skipUnless(os.environ.get("ORRERY_REPLAY"), "ORRERY_REPLAY names no recording")
class Replay(unittest.TestCase):
    def test_rounds_match_go(self):
        with open(os.environ["ORRERY_REPLAY"]) as fh:
            script = json.load(fh)
        init = script["init"]
        sched = ShockwaveScheduler(
            script["gpus"], 16, OrderedDict(), init["future_nrounds"], init["round_duration"], ["GUROBI"],
            1e-3, 24, 15, max(init["future_nrounds"], 30), init["logapx_bases"], {0.0: 1e-6},
            init["k"], init["lam"], init["rhomax"])
        jobs = {}
        rounds = 0
        for ev in script["events"]:
            (kind, arg), = ev.items()
            if kind == "add":
                jobs[arg["id"]] = JobMetaData(arg, init["round_duration"])
                sched.add_metadata(arg["id"], jobs[arg["id"]])
            elif kind == "remove":
                sched.remove_metadata(arg)
            elif kind == "observe":
                jid, rnd, tput, bs = arg
                jobs[jid].throughput_measurements[rnd] = (tput, bs)
            elif kind == "progress":
                sched.schedule_progress(arg[0], arg[1])
            elif kind == "end_round":
                sched.increment_round_ptr()
                self.assertEqual(sched.round_ptr, arg)
                if sched.round_ptr % 8 == 0:
                    sched.set_resolve()
            elif kind == "schedule":
                got = sched.round_schedule()
                self.assertEqual(got, arg, "round %d" % sched.round_ptr)
                rounds += 1
        self.assertGreater(rounds, 100)
        self.assertEqual(len(sched.metadata), 0)
        self.assertEqual(len(sched.completed_jobs), len(jobs))
        sys.stderr.write("replayed %d jobs, %d rounds: every round's jobs as the Go scheduler's\n" % (len(jobs), rounds))
        sched.close()


if __name__ == "__main__":
    unittest.main()
