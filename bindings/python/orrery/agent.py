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
responses), from shift_room_ms its slack, and from comm_offsets_ms its
comm offset. No dependency on PyTorch or anything else; see
examples/pytorch_training.py.

comm_offset_ms is where the job's communication starts in its iteration:
the angle communicating() measures drift from. The responses carry it
(comm_offsets_ms); without it the drift is measured from the iteration's
start, so a job whose all-reduce starts 34 ms in reports a 34 ms drift
every iteration. The agent warns once (RuntimeWarning) when it has none.

Modes: "pad" (the engine's default behind the JSON API, None here) starts
every iteration on its slot of a fixed period and re-aligns when late past
the threshold; "free" is the paper's rule (iterations back to back,
re-aligned when the communication drifts past the threshold). "elastic"
holds the slots on the plan's clock: every agent built from the same plan
(the same reference_unix_ms) agrees on every slot without sharing anything
else, so the ranks of a job in different processes or hosts, and the jobs
of a group, hold one clock. A lateness within the plan's slack and the
threshold stands; past them the iteration waits for its next slot. With
free_comm_ms (the communication time without the shift) and
communicated() after each all-reduce, the agent gives its shift up when
holding it costs more than it saves (wait() then returns "released":
True, and the loop runs free).
"""

from __future__ import annotations

import json
import os
import time
import warnings
from typing import Any, Callable, Optional

from . import load as _load
from ._common import Engine
from .types import AgentDecision, AgentPlan, AgentStats

_NO_OFFSET = (
    "orrery.agent: the plan has no comm_offset_ms, so communicating() measures drift from the "
    "start of the iteration (a job whose all-reduce starts 34 ms in reports a 34 ms drift every "
    "iteration). Give comm_offset_ms= (where the job's communication starts in its iteration, "
    "in ms), or a shift file that is a cassini.link or cassini.rank response: they carry "
    "comm_offsets_ms."
)


PLAN_KEYS = ("period_ms", "shift_ms", "comm_offset_ms", "reference_unix_ms", "slack_ms", "free_comm_ms")


def read_plan(path: str, job: Optional[str] = None) -> AgentPlan:
    """The plan (period_ms, shift_ms, and comm_offset_ms, slack_ms and
    free_comm_ms when the file has them) in a shift file."""
    with open(path) as fh:
        doc = json.load(fh)
    if "shifts_ms" in doc:  # a cassini.link or cassini.rank response
        if job is None:
            raise ValueError("%s holds the shifts of several jobs: name this one (job=...)" % path)
        shifts = doc.get("centred_shifts_ms") or doc["shifts_ms"]
        if job not in shifts or job not in doc.get("periods_ms", {}):
            raise KeyError("%s has no shift or period for job %r" % (path, job))
        plan: AgentPlan = {"period_ms": doc["periods_ms"][job], "shift_ms": shifts[job]}
        if job in doc.get("comm_offsets_ms", {}):
            plan["comm_offset_ms"] = doc["comm_offsets_ms"][job]
        room = (doc.get("shift_room_ms") or {}).get(job)
        if room and "centred_shifts_ms" in doc:
            plan["slack_ms"] = room["late_ms"]  # type: ignore[typeddict-unknown-key]
        return plan
    if "period_ms" not in doc or "shift_ms" not in doc:
        raise ValueError("%s: want period_ms and shift_ms" % path)
    return {k: doc[k] for k in PLAN_KEYS if k in doc}  # type: ignore[return-value]


class TimeShiftAgent(object):
    """One job's agent: call wait() before each iteration.

    mode is None (the engine's default: "pad"), "pad", "free" (the
    paper's rule: re-align only after a drift past threshold, a fraction
    of the period, default 0.05) or "elastic" (the plan's clock with its
    slack_ms and, given free_comm_ms, the give-up; see the module doc).
    comm_offset_ms is where the job's communication starts in its
    iteration; None takes the shift file's (a cassini.link or rank
    response carries it), else 0 with a warning. clock (seconds, like
    time.time) and sleep are injectable for tests and simulators."""

    def __init__(self, shift_ms: Optional[float] = None, period_ms: Optional[float] = None, *,
                 shift_file: Optional[str] = None, job: Optional[str] = None,
                 comm_offset_ms: Optional[float] = None, reference_unix_ms: float = 0.0,
                 mode: Optional[str] = None, threshold: float = 0.0, cooldown_ms: float = 0.0,
                 engine: Optional[Engine] = None, clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Any] = time.sleep, reload_s: float = 1.0,
                 slack_ms: float = 0.0, free_comm_ms: float = 0.0):
        if shift_file is None and (shift_ms is None or period_ms is None):
            raise ValueError("give shift_ms and period_ms, or a shift_file")
        self.engine = engine if engine is not None else _load()
        self.shift_file, self.job = shift_file, job
        self._clock, self._sleep, self._reload_s = clock, sleep, reload_s
        self._mtime, self._checked = None, 0.0
        self._offset = comm_offset_ms
        plan: AgentPlan
        if shift_file is not None:
            plan = read_plan(shift_file, job)
            self._mtime = os.stat(shift_file).st_mtime_ns
            self._checked = clock()
        else:
            assert shift_ms is not None and period_ms is not None
            plan = {"period_ms": period_ms, "shift_ms": shift_ms, "reference_unix_ms": reference_unix_ms}
            if slack_ms:
                plan["slack_ms"] = slack_ms  # type: ignore[typeddict-unknown-key]
            if free_comm_ms:
                plan["free_comm_ms"] = free_comm_ms  # type: ignore[typeddict-unknown-key]
        plan = self._with_offset(plan)
        self.plan = plan
        self._warned = False
        self._comm_start: Optional[float] = None
        self._comm_ms: Optional[float] = None
        req: dict = dict(plan)
        if mode is not None:
            req["mode"] = mode
        if threshold:
            req["threshold"] = threshold
        if cooldown_ms:
            req["cooldown_ms"] = cooldown_ms
        self._agent = self.engine.new_agent(req)

    def _now_ms(self) -> float:
        return self._clock() * 1000.0

    def _maybe_reload(self) -> None:
        if self.shift_file is None or self._clock() - self._checked < self._reload_s:
            return
        self._checked = self._clock()
        try:
            mtime = os.stat(self.shift_file).st_mtime_ns
        except OSError:
            return  # keep the plan while the scheduler rewrites the file
        if mtime == self._mtime:
            return
        plan = self._with_offset(read_plan(self.shift_file, self.job))
        self._mtime = mtime
        if plan != self.plan:
            self._agent.set_plan(plan)
            self.plan = plan

    def _with_offset(self, plan: AgentPlan) -> AgentPlan:
        """plan with the comm offset given to the constructor, if any (it
        wins over the file's)."""
        if self._offset is not None:
            plan = dict(plan, comm_offset_ms=self._offset)  # type: ignore[assignment]
        return plan

    def wait(self) -> AgentDecision:
        """Sleep until the next iteration's slot (or not at all); returns
        the decision {start_unix_ms, delay_ms, late_ms, adjusted,
        released}."""
        self._maybe_reload()
        d = self._agent.next(self._now_ms(), self._comm_ms)
        self._comm_ms = None
        if d["delay_ms"] > 0:
            self._sleep(d["delay_ms"] / 1000.0)
        return d

    def communicating(self) -> float:
        """Record that this iteration's communication starts now; returns
        its drift from the planned angle (the plan's comm_offset_ms), in
        ms."""
        if "comm_offset_ms" not in self.plan and not self._warned:
            warnings.warn(_NO_OFFSET, RuntimeWarning, stacklevel=2)
            self._warned = True
        self._comm_start = self._now_ms()
        return self._agent.communicating(self._comm_start)

    def communicated(self, comm_ms: Optional[float] = None) -> None:
        """Record that this iteration's communication is done (now, since
        communicating(), unless comm_ms says how long it took): the next
        wait() passes it on, what an elastic agent weighs its shift by."""
        if comm_ms is None and self._comm_start is not None:
            comm_ms = self._now_ms() - self._comm_start
        self._comm_ms = comm_ms

    def stats(self) -> AgentStats:
        return self._agent.stats()

    def close(self) -> None:
        self._agent.close()

    def __enter__(self) -> "TimeShiftAgent":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
