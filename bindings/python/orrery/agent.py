"""CASSINI's time-shift agent for a Python training loop.

    from orrery.agent import TimeShiftAgent

    agent = TimeShiftAgent(shift_file="shift.json", job="resnet-1")
    for batch in loader:
        agent.wait()                 # starts the iteration on its slot
        loss = model(batch)
        agent.communicating()        # the all-reduce starts (e.g. in backward)
        loss.backward()
        optimizer.step()

wait() asks the Go agent (engine/cassini/agent, through the engine's
"cassini.agent.next") when the next iteration starts and sleeps until then;
nothing of the agent's logic is re-implemented here. Slots are
reference + shift + n*period on the host's clock (time.time), so the jobs
sharing a link must have synchronized clocks (NTP or PTP), as CASSINI
assumes.

The shift comes from arguments (shift_ms, period_ms) or from a JSON file
that the scheduler writes and may rewrite (it is re-read when it changes,
at most every reload_s seconds): either {"period_ms": 72, "shift_ms": 30,
"comm_offset_ms": 40, "reference_unix_ms": 0} or a cassini.link /
cassini.rank response ({"shifts_ms": {...}, "periods_ms": {...}}) with job
naming this job's id. No dependency on PyTorch or anything else; see
examples/pytorch_training.py.
"""

import json
import os
import time

from . import load as _load


def read_plan(path, job=None):
    """The plan (period_ms, shift_ms, ...) in a shift file."""
    with open(path) as fh:
        doc = json.load(fh)
    if "shifts_ms" in doc:  # a cassini.link or cassini.rank response
        if job is None:
            raise ValueError("%s holds the shifts of several jobs: name this one (job=...)" % path)
        if job not in doc["shifts_ms"] or job not in doc.get("periods_ms", {}):
            raise KeyError("%s has no shift or period for job %r" % (path, job))
        return {"period_ms": doc["periods_ms"][job], "shift_ms": doc["shifts_ms"][job]}
    plan = {k: doc[k] for k in ("period_ms", "shift_ms", "comm_offset_ms", "reference_unix_ms") if k in doc}
    if "period_ms" not in plan or "shift_ms" not in plan:
        raise ValueError("%s: want period_ms and shift_ms" % path)
    return plan


class TimeShiftAgent(object):
    """One job's agent: call wait() before each iteration.

    mode "pad" (default) starts every iteration on its slot; "free" is the
    paper's rule (re-align only after a drift past threshold, a fraction
    of the period, default 0.05). clock (seconds, like time.time) and
    sleep are injectable for tests and simulators."""

    def __init__(self, shift_ms=None, period_ms=None, *, shift_file=None, job=None, comm_offset_ms=0.0,
                 reference_unix_ms=0.0, mode="pad", threshold=0.0, cooldown_ms=0.0, engine=None,
                 clock=time.time, sleep=time.sleep, reload_s=1.0):
        if shift_file is None and (shift_ms is None or period_ms is None):
            raise ValueError("give shift_ms and period_ms, or a shift_file")
        self.engine = engine if engine is not None else _load()
        self.shift_file, self.job = shift_file, job
        self._clock, self._sleep, self._reload_s = clock, sleep, reload_s
        self._mtime, self._checked = None, 0.0
        if shift_file is not None:
            plan = read_plan(shift_file, job)
            self._mtime = os.stat(shift_file).st_mtime_ns
            self._checked = clock()
        else:
            plan = {"period_ms": period_ms, "shift_ms": shift_ms, "comm_offset_ms": comm_offset_ms,
                    "reference_unix_ms": reference_unix_ms}
        self.plan = plan
        req = dict(plan, mode=mode)
        if threshold:
            req["threshold"] = threshold
        if cooldown_ms:
            req["cooldown_ms"] = cooldown_ms
        self._agent = self.engine.new_agent(req)

    def _now_ms(self):
        return self._clock() * 1000.0

    def _maybe_reload(self):
        if self.shift_file is None or self._clock() - self._checked < self._reload_s:
            return
        self._checked = self._clock()
        try:
            mtime = os.stat(self.shift_file).st_mtime_ns
        except OSError:
            return  # keep the plan while the scheduler rewrites the file
        if mtime == self._mtime:
            return
        plan = read_plan(self.shift_file, self.job)
        self._mtime = mtime
        if plan != self.plan:
            self._agent.set_plan(plan)
            self.plan = plan

    def wait(self):
        """Sleep until the next iteration's slot (or not at all); returns
        the decision {start_unix_ms, delay_ms, late_ms, adjusted}."""
        self._maybe_reload()
        d = self._agent.next(self._now_ms())
        if d["delay_ms"] > 0:
            self._sleep(d["delay_ms"] / 1000.0)
        return d

    def communicating(self):
        """Record that this iteration's communication starts now; returns
        its drift from the planned angle, in ms."""
        return self._agent.communicating(self._now_ms())

    def stats(self):
        return self._agent.stats()

    def close(self):
        self._agent.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
