"""The time-shift agent from Python: decisions are the Go agent's, wait()
sleeps until them, and a rewritten shift file installs a new plan."""

import json
import os
import sys
import tempfile
import unittest
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import orrery  # noqa: E402
from orrery.agent import TimeShiftAgent, read_plan  # noqa: E402


class FakeTime:
    def __init__(self, t):
        self.t = t
        self.slept = []

    def clock(self):
        return self.t

    def sleep(self, s):
        self.slept.append(s)
        self.t += s


@unittest.skipUnless(orrery.library_path() is not None, "no shared library (ORRERY_LIB)")
class AgentTest(unittest.TestCase):
    def setUp(self):
        self.eng = orrery.load(backend="native")

    def test_wait_lands_on_slots(self):
        ft = FakeTime(1_700_000_000.0123)
        a = TimeShiftAgent(shift_ms=30, period_ms=72, engine=self.eng, clock=ft.clock, sleep=ft.sleep)
        starts = []
        for i in range(50):
            d = a.wait()
            starts.append(d["start_unix_ms"])
            ft.t += 0.060 + (i % 5) * 0.002  # the iteration: 60-68 ms, under the period
        for s in starts:
            off = (s - 30) % 72
            self.assertLess(min(off, 72 - off), 1e-3, "start %r off its slot" % s)
        self.assertTrue(all(abs((b - a_) - 72) < 1e-3 for a_, b in zip(starts, starts[1:])))
        st = a.stats()
        self.assertEqual((st["iterations"], st["adjustments"]), (50, 0))
        self.assertGreater(sum(ft.slept), 0)
        a.close()

    def test_shift_file(self):
        ft = FakeTime(1_700_000_000.0)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "shift.json")
            with open(path, "w") as fh:
                json.dump({"shifts_ms": {"a": 10, "b": 40}, "periods_ms": {"a": 100, "b": 100}}, fh)
            self.assertEqual(read_plan(path, "b"), {"period_ms": 100, "shift_ms": 40})  # no comm_offsets_ms
            with self.assertRaises(ValueError):
                read_plan(path)
            a = TimeShiftAgent(shift_file=path, job="b", engine=self.eng, clock=ft.clock, sleep=ft.sleep, reload_s=0)
            d0 = a.wait()
            self.assertAlmostEqual((d0["start_unix_ms"] - 40) % 100, 0, places=3)
            with open(path, "w") as fh:
                json.dump({"period_ms": 100, "shift_ms": 75}, fh)
            os.utime(path, ns=(1, 1))
            ft.t += 0.5
            d1 = a.wait()
            self.assertAlmostEqual((d1["start_unix_ms"] - 75) % 100, 0, places=3)
            self.assertEqual(a.stats()["replans"], 1)
            a.close()

    def test_comm_offset_from_a_rank_response(self):
        """A rank response carries each job's comm offset, so an agent fed
        it reports no drift for a job whose all-reduce starts 40 ms into
        its iteration (before comm_offsets_ms it reported 40 ms every
        iteration); without one, the first communicating() warns."""
        job = lambda i: {"id": i, "phases": [{"ms": 40, "gbps": 0}, {"ms": 30, "gbps": 40}, {"ms": 2, "gbps": 0}]}
        resp = self.eng.rank({"links": [{"id": "up", "capacity_gbps": 50}], "jobs": [job("a"), job("b")],
                              "candidates": [{"id": "c", "paths": {"a": ["up"], "b": ["up"]}}]})
        self.assertEqual(resp["comm_offsets_ms"], {"a": 40, "b": 40})
        ft = FakeTime(1_700_000_000.0)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "rank.json")
            with open(path, "w") as fh:
                json.dump(resp, fh)
            plan = read_plan(path, "b")
            self.assertEqual(plan["comm_offset_ms"], 40)
            a = TimeShiftAgent(shift_file=path, job="b", mode="pad", engine=self.eng, clock=ft.clock, sleep=ft.sleep)
            drifts = []
            for _ in range(5):
                a.wait()
                ft.t += 0.040  # compute, then the all-reduce starts on its angle
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    drifts.append(a.communicating())
                ft.t += 0.031
            self.assertLess(max(abs(x) for x in drifts), 1e-3, drifts)
            a.close()
            # The same plan without the offset: a drift every iteration, and a warning.
            with open(path, "w") as fh:
                json.dump({"shifts_ms": resp["shifts_ms"], "periods_ms": resp["periods_ms"]}, fh)
            a = TimeShiftAgent(shift_file=path, job="b", mode="pad", engine=self.eng, clock=ft.clock, sleep=ft.sleep)
            a.wait()
            ft.t += 0.040
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                drift = a.communicating()
                a.communicating()
            self.assertAlmostEqual(drift, 40 - 72, places=2)  # 40 ms late, wrapped into [-T/2, T/2)
            self.assertEqual(len(w), 1)
            self.assertIn("comm_offset_ms", str(w[0].message))
            a.close()
            # An offset given to the constructor wins, and silences it.
            a = TimeShiftAgent(shift_file=path, job="b", comm_offset_ms=40, engine=self.eng, clock=ft.clock, sleep=ft.sleep)
            self.assertEqual(a.plan["comm_offset_ms"], 40)
            a.close()

    def test_default_mode_holds_slots(self):
        """mode=None leaves the engine's default (pad: an elastic agent
        without a clock would hold its slots as pad does); "elastic" runs
        on the plan's clock, which with no slack makes pad's decisions,
        to float rounding of its virtual time."""
        starts = {}
        for mode in (None, "elastic", "pad"):
            ft = FakeTime(1_700_000_000.0123)
            a = TimeShiftAgent(shift_ms=30, period_ms=72, mode=mode, engine=self.eng, clock=ft.clock, sleep=ft.sleep)
            starts[mode] = []
            for i in range(30):
                starts[mode].append(a.wait()["start_unix_ms"])
                ft.t += 0.060 + (i % 7) * 0.003
            a.close()
        self.assertEqual(starts[None], starts["pad"])
        for e, p in zip(starts["elastic"], starts["pad"]):
            self.assertAlmostEqual(e, p, delta=0.001)


    def test_elastic_plan_clock(self):
        # Two ranks of one job, each with an engine of its own (two
        # processes), on the plan's clock: the same slots, ready 0.3 ms
        # apart; the shift is given up once communication stops paying.
        ft = [FakeTime(1_700_000_000.0123), FakeTime(1_700_000_000.0126)]
        ranks = [TimeShiftAgent(shift_ms=30, period_ms=100, mode="elastic", slack_ms=8, free_comm_ms=50,
                                engine=orrery.load(backend="native"), clock=f.clock, sleep=f.sleep) for f in ft]
        released = None
        for i in range(200):
            ds = [r.wait() for r in ranks]
            if ds[0]["delay_ms"] > 1:
                self.assertAlmostEqual(ds[0]["start_unix_ms"], ds[1]["start_unix_ms"], places=3)
            if ds[0].get("released") and released is None:
                released = i
            comm = 30 if i < 100 else 60
            for r, f in zip(ranks, ft):
                f.t += 0.040
                r.communicating()
                f.t += comm / 1000.0
                r.communicated()
                f.t += (96 - 40 - comm) / 1000.0 if comm < 56 else 0.0
        self.assertIsNotNone(released)
        self.assertGreater(released, 100)
        for r in ranks:
            r.close()

    def test_read_plan_centred(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "link.json")
            with open(path, "w") as fh:
                json.dump({"shifts_ms": {"a": 0, "b": 30}, "centred_shifts_ms": {"a": 0, "b": 36},
                           "shift_room_ms": {"a": {"early_ms": 6, "late_ms": 6}, "b": {"early_ms": 6, "late_ms": 6}},
                           "periods_ms": {"a": 72, "b": 72}}, fh)
            self.assertEqual(read_plan(path, "b"), {"period_ms": 72, "shift_ms": 36, "slack_ms": 6})


if __name__ == "__main__":
    unittest.main()
