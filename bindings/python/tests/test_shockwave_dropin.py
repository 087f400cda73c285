"""The drop-in ShockwaveScheduler driven as the authors' simulator drives
theirs (scheduler.py, simulate mode): each round it asks round_schedule,
runs the jobs, records their throughput in the timeline, retires the
finished ones with remove_metadata, then (_update_shockwave_scheduler)
calls schedule_progress for the jobs that ran, deschedule_waiting_delay
for the others, increment_round_ptr, and set_resolve every REOPT_ROUNDS
rounds; new arrivals come in with add_metadata.

Their class re-solves in round_schedule when set_resolve was called (by
the simulator or by add_metadata/remove_metadata) or when the round has
left its cached window, and only then. The test keeps that rule beside
the drop-in and checks, round by round, that the drop-in's plan was made
exactly in the rounds where theirs would have been: at REOPT_ROUNDS 4
and 8 (the re-plan counts differ), and with a set_resolve cancelled by
clear_resolve.
"""

import os
import sys
import unittest
from collections import OrderedDict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import orrery  # noqa: E402
from orrery.shockwave import ShockwaveScheduler  # noqa: E402

ROUND_S = 120


class JobMetaData(object):
    """The attributes of the authors' JobMetaData the scheduler reads."""

    def __init__(self, jobid, gpus, epochs, epoch_s, submit_s):
        self.jobid = jobid
        self.nworkers = gpus
        self.epochs = epochs
        self.epoch_nsamples = 50000
        self.bs_schedule = [32] * (epochs // 2) + [64] * (epochs - epochs // 2)
        self.epoch_duration = [epoch_s if b == 32 else epoch_s * 0.8 for b in self.bs_schedule]
        self.epoch_duration_preprofiled = list(self.epoch_duration)
        self.timestamp_submit = submit_s
        self.epoch_progress = 0
        self.waiting_delay = 0
        self.throughput_measurements = OrderedDict()

    def set_epoch_progress(self, progress):
        assert 0 <= progress <= self.epochs
        self.epoch_progress = progress

    def reset_waiting_delay(self):
        self.waiting_delay = 0

    def add_waiting_delay(self, delay):
        self.waiting_delay += delay


# (arrival round, GPUs, epochs, seconds per epoch at batch 32)
JOBS = [(0, 1, 12, 110), (0, 2, 8, 100), (0, 1, 16, 90), (1, 2, 10, 115), (2, 1, 6, 100),
        (4, 1, 14, 80), (5, 2, 8, 120), (7, 1, 10, 95), (9, 1, 12, 100), (12, 2, 6, 110),
        (13, 1, 18, 70), (16, 1, 8, 100)]


def simulate(test, reopt_rounds, cancel_round=None, force_round=None, **kwargs):
    """Runs JOBS through the drop-in as scheduler.py does; returns the rounds
    in which it planned. Checks each round against the authors' rule."""
    sched = ShockwaveScheduler(4, future_nrounds=12, round_duration=ROUND_S, **kwargs)
    jobs, pending = {}, list(enumerate(JOBS))
    their_resolve, window = True, None  # the authors' class's state
    planned, iround, rnd = [], 0, 0

    def arrive():
        nonlocal their_resolve
        while pending and pending[0][1][0] <= rnd:
            jid, (_, gpus, epochs, epoch_s) = pending.pop(0)
            jobs[jid] = JobMetaData(jid, gpus, epochs, epoch_s, rnd * ROUND_S)
            sched.add_metadata(jid, jobs[jid])
            their_resolve = True  # add_metadata calls set_resolve

    arrive()
    while jobs:
        if rnd == cancel_round:
            sched.set_resolve()
            sched.clear_resolve()
        if rnd == force_round:
            sched.set_resolve()
            their_resolve = True
        due = their_resolve or window is None or not (window[0] <= rnd < window[1])
        ids = sched.round_schedule()
        made = sched.last_plan()["round"] == rnd
        test.assertEqual(made, due, "round %d: the drop-in %s, the authors' class would %s" % (
            rnd, "planned" if made else "kept its plan", "re-solve" if due else "keep its schedules"))
        if due:
            planned.append(rnd)
            window = (rnd, rnd + sched.future_nrounds)
        their_resolve = False
        # The round runs: one epoch for every scheduled job, measured.
        done = []
        for jid in ids:
            j = jobs[jid]
            bs = j.bs_schedule[j.epoch_progress]
            j.throughput_measurements[rnd] = (j.epoch_nsamples / bs / j.epoch_duration[j.epoch_progress], bs)
            j.epoch_progress += 1
            if j.epoch_progress == j.epochs:
                done.append(jid)
        for jid in done:
            sched.remove_metadata(jid)
            their_resolve = True  # remove_metadata calls set_resolve
        # _update_shockwave_scheduler
        for jid in ids:
            if jid in sched.metadata:
                sched.schedule_progress(jid, jobs[jid].epoch_progress)
        for jid in jobs:
            if jid not in ids:
                sched.deschedule_waiting_delay(jid, ROUND_S)
        for jid in done:
            del jobs[jid]
        sched.increment_round_ptr()
        rnd += 1
        test.assertEqual(sched.round_ptr, rnd)
        iround += 1
        if iround >= reopt_rounds:
            iround = 0
            sched.set_resolve()
            their_resolve = True
        arrive()
        if not jobs and pending:  # an idle gap: jump to the next arrival
            rnd = pending[0][1][0]
            while sched.round_ptr < rnd:
                sched.increment_round_ptr()
            arrive()
    test.assertFalse(pending)
    test.assertEqual(len(sched.completed_jobs), len(JOBS))
    sched.close()
    return planned


@unittest.skipUnless(orrery.library_path() is not None, "no shared library (ORRERY_LIB)")
class DropIn(unittest.TestCase):
    def test_replans_when_the_authors_class_would(self):
        at4 = simulate(self, 4)
        at8 = simulate(self, 8)
        self.assertNotEqual(len(at4), len(at8))
        self.assertGreater(len(at4), len(at8))

    def test_set_and_clear_resolve(self):
        quiet = simulate(self, 8)
        r = next(r for r in range(1, quiet[-1]) if r not in quiet)  # a round that keeps its plan
        self.assertIn(r, simulate(self, 8, force_round=r))
        self.assertNotIn(r, simulate(self, 8, cancel_round=r))

    def test_defaults_and_knobs(self):
        s = ShockwaveScheduler(32)  # the authors' tacc_32gpus setup
        self.assertEqual((s.future_nrounds, s.round_duration, s.k, s.lam, s.rhomax, s.solver_timeout), (20, 120, 1e-3, 12.0, 1.0, 15.0))
        self.assertEqual(s.config["time_limit_ms"], 15000.0)  # solver_timeout is the time limit
        self.assertEqual(s.config["reopt_rounds"], -1)  # set_resolve decides
        self.assertNotIn("gap", s.config)
        s.close()
        s = ShockwaveScheduler(8, solver_timeout=2, honour_rel_gap=True, reopt_rounds=3)
        self.assertEqual((s.config["time_limit_ms"], s.config["gap"], s.config["reopt_rounds"]), (2000.0, 1e-3, 3))
        s.close()
        with self.assertRaises(ValueError):
            ShockwaveScheduler(8, reopt_rounds=0)

    def test_nan_names_the_field(self):
        s = ShockwaveScheduler(4)
        j = JobMetaData(1, 1, 4, 100, 0)
        j.epoch_duration[2] = float("nan")
        with self.assertRaises(orrery.OrreryError) as cm:
            s.add_metadata(1, j)
        self.assertEqual((cm.exception.code, cm.exception.field), ("invalid_argument", "job.epoch_dur_s[2]"))
        s.close()


if __name__ == "__main__":
    unittest.main()
