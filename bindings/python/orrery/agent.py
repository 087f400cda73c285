"""CASSINI's time-shift agent for a Python training loop.

    from orrery.agent import TimeShiftAgent

    agent = TimeShiftAgent(shift_file="shift.json", job="resnet-1", mode="elastic")
    for batch in loader:
        agent.wait()                 # starts the iteration on its slot
        loss = model(batch)
        agent.communicating()        # the all-reduce starts (e.g. in backward)
        loss.backward()
        agent.communicated()         # ... and is done (elastic: what the shift saves)
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
"comm_offset_ms": 40, "reference_unix_ms": 0, "slack_ms": 6,
"free_comm_ms": 50} or a cassini.link / cassini.rank response with job
naming this job's id: its centred shift (centred_shifts_ms, the middle of
the range its links tolerate; shifts_ms, the edge of that range, in older
responses) and, from shift_room_ms, its slack.

mode "elastic" holds the slots on the plan's clock: every agent built from
the same plan (the same reference_unix_ms) agrees on every slot without
sharing anything else, so the ranks of a job in different processes or
hosts, and the jobs of a group, hold one clock. A lateness within the
plan's slack and the threshold stands; past them the iteration waits for
its next slot. With free_comm_ms (the communication time without the
shift) and communicated() after each all-reduce, the agent gives its shift
up when holding it costs more than it saves (wait() then returns
"released": True, and the loop runs free). No dependency on PyTorch or
anything else; see examples/pytorch_training.py.
"""

import json
import os
import time

from . import load as _load


PLAN_KEYS = ("period_ms", "shift_ms", "comm_offset_ms", "reference_unix_ms", "slack_ms", "free_comm_ms")


def read_plan(path, job=None):
    """The plan (period_ms, shift_ms, ...) in a shift file."""
    with open(path) as fh:
        doc = json.load(fh)
    if "shifts_ms" in doc:  # a cassini.link or cassini.rank response
        if job is None:
            raise ValueError("%s holds the shifts of several jobs: name this one (job=...)" % path)
        shifts = doc.get("centred_shifts_ms") or doc["shifts_ms"]
        if job not in shifts or job not in doc.get("periods_ms", {}):
            raise KeyError("%s has no shift or period for job %r" % (path, job))
        plan = {"period_ms": doc["periods_ms"][job], "shift_ms": shifts[job]}
        room = (doc.get("shift_room_ms") or {}).get(job)
        if room and "centred_shifts_ms" in doc:
            plan["slack_ms"] = room["late_ms"]
        return plan
    plan = {k: doc[k] for k in PLAN_KEYS if k in doc}
    if "period_ms" not in plan or "shift_ms" not in plan:
        raise ValueError("%s: want period_ms and shift_ms" % path)
    return plan


class TimeShiftAgent(object):
    """One job's agent: call wait() before each iteration.

    mode "pad" (default) starts every iteration on its slot; "free" is the
    paper's rule (re-align only after a drift past threshold, a fraction
    of the period, default 0.05); "elastic" holds the plan's clock with
    its slack and, given free_comm_ms, gives the shift up when it does not
    pay (see the module's doc). clock (seconds, like time.time) and sleep
    are injectable for tests and simulators."""

    def __init__(self, shift_ms=None, period_ms=None, *, shift_file=None, job=None, comm_offset_ms=0.0,
                 reference_unix_ms=0.0, mode="pad", threshold=0.0, cooldown_ms=0.0, engine=None,
                 clock=time.time, sleep=time.sleep, reload_s=1.0, slack_ms=0.0, free_comm_ms=0.0):
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
            if slack_ms:
                plan["slack_ms"] = slack_ms
            if free_comm_ms:
                plan["free_comm_ms"] = free_comm_ms
        self.plan = plan
        self._comm_start = None
        self._comm_ms = None
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
        the decision {start_unix_ms, delay_ms, late_ms, adjusted,
        released}."""
        self._maybe_reload()
        d = self._agent.next(self._now_ms(), self._comm_ms)
        self._comm_ms = None
        if d["delay_ms"] > 0:
            self._sleep(d["delay_ms"] / 1000.0)
        return d

    def communicating(self):
        """Record that this iteration's communication starts now; returns
        its drift from the planned angle, in ms."""
        self._comm_start = self._now_ms()
        return self._agent.communicating(self._comm_start)

    def communicated(self, comm_ms=None):
        """Record that this iteration's communication is done (now, since
        communicating(), unless comm_ms says how long it took): the next
        wait() passes it on, what an elastic agent weighs its shift by."""
        if comm_ms is None and self._comm_start is not None:
            comm_ms = self._now_ms() - self._comm_start
        self._comm_ms = comm_ms

    def stats(self):
        return self._agent.stats()

    def close(self):
        self._agent.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
