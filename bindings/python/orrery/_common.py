"""The backend-independent part of the API: errors, results, JSON calls."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Union

from .types import (
    AgentDecision,
    AgentNewRequest,
    AgentPlan,
    AgentStats,
    JobId,
    LinkRequest,
    LinkResponse,
    ProfileRequest,
    ProfileResponse,
    RankRequest,
    RankResponse,
    SchedulerPlan,
    SchedulerState,
    ShockwaveConfig,
    ShockwavePlanRequest,
    ShockwavePlanResponse,
    ShockwavePredictResponse,
)

ABI_VERSION = 1

# wire.MaxRequestBytes: larger envelopes are refused unread.
MAX_REQUEST_BYTES = 64 << 20

# Codes of link_search, by number (abi.Code), and result statuses.
CODES = ("ok", "invalid_argument", "limit_exceeded", "internal", "bad_pointer")
STATUSES = ("optimal", "budget", "time_limit")


class OrreryError(Exception):
    """An error response: code ("malformed_json", "invalid_argument",
    "unknown_op", "limit_exceeded", "internal"), the JSON path of the field it
    concerns ("" if none), and the message."""

    def __init__(self, code, field, message):
        super().__init__("%s: %s" % (field, message) if field else message)
        self.code = code
        self.field = field or ""
        self.message = message


class TrapError(RuntimeError):
    """The WebAssembly instance trapped (out of memory, or a bug) and was
    replaced; the call has no answer."""


@dataclass
class LinkSearchResult:
    """The result of Engine.link_search (the fields of link.Result)."""

    shifts: List[int]  # each job's delay, ticks, in [0, period)
    status: str  # "optimal" or "budget"
    points: int  # |A|: the perimeter (exact) or 72 (paper)
    perimeter: int  # unified circle, ticks
    grid: int  # periods rounded up to multiples of this; 1 if not
    excess: int  # unit-ticks over capacity, summed over the points
    evaluations: int  # pair evaluations spent
    score: float  # 1 - excess / (points * capacity)
    bound: float  # upper bound on the optimal score
    unshifted: float  # score with every free job at shift 0


def mode_number(mode):
    if mode in ("exact", 0, None):
        return 0
    if mode in ("paper", 1):
        return 1
    return -1


def too_large(n):
    """orrery.Handle's answer to an envelope over MAX_REQUEST_BYTES."""
    return (
        '{"version":1,"error":{"code":"limit_exceeded","message":"request is %d bytes, above the %d byte limit"}}'
        % (n, MAX_REQUEST_BYTES)
    ).encode()


def nonfinite(value: Any, path: str = "") -> Optional[tuple]:
    """The JSON path and value of the first float of value that JSON cannot
    carry (NaN, an infinity), or None: what Engine.call checks before
    encoding, so that the error names the field ("jobs[0].phases[1].gbps")
    rather than a byte of the encoded request."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (path, value)
    if isinstance(value, dict):
        for k, v in value.items():
            found = nonfinite(v, "%s.%s" % (path, k) if path else str(k))
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found = nonfinite(v, "%s[%d]" % (path, i))
            if found:
                return found
    return None


def encode(request: Any) -> str:
    """request as compact JSON; a NaN or an infinity is an OrreryError
    naming its field (json.dumps would write NaN, which no JSON parser
    takes, and the engine would answer malformed_json at a byte offset)."""
    if isinstance(request, str):
        return request
    try:
        return json.dumps(request, separators=(",", ":"), allow_nan=False)
    except ValueError:
        found = nonfinite(request)
        if found is None:
            raise
        path, v = found
        raise OrreryError("invalid_argument", path, "%r is not a finite number (JSON has no NaN or infinity)" % (v,)) from None


class Engine:
    """orrery's engine behind one backend. handle() is the primitive; the
    rest is built on it. Methods may be called from several threads (the
    wasmtime backend serializes them)."""

    backend = ""

    @property
    def abi_version(self) -> int:
        raise NotImplementedError

    def handle(self, envelope: Union[bytes, str]) -> bytes:
        """Run a request envelope (bytes or str: {"op": ..., "request":
        {...}}) and return the response envelope's bytes, exactly what the
        Go engine's orrery.Handle returns."""
        raise NotImplementedError

    def call(self, op: str, request: Any) -> Any:
        """Run op on request (a dict, or JSON text) and return the decoded
        response; raise OrreryError for an error response (and for a NaN
        or an infinity in request, naming its field). Works for every
        operation of the schema, including ones added later."""
        body = encode(request)
        env = '{"op":%s,"request":%s}' % (json.dumps(op), body)
        reply = json.loads(self.handle(env.encode()))
        err = reply.get("error")
        if err is not None:
            raise OrreryError(err.get("code", ""), err.get("field", ""), err.get("message", ""))
        return reply["response"]

    def link(self, request: LinkRequest) -> LinkResponse:
        """"cassini.link": the best rotation of the jobs sharing one link.
        The response's "warnings" (absent when none) flag values likely in
        the wrong unit or rounded to the tick."""
        return self.call("cassini.link", request)

    def profile(self, request: ProfileRequest) -> ProfileResponse:
        """"cassini.profile": one job's quantized iteration, and for a
        measured source the period found and how well the record repeats
        it ("fit"). The request is {"job": {...}} plus cassini.link's
        options (tick_ms, unit_mbps, time_limit_ms); the job has an "id"
        and one of:

          "phases": [{"ms": 30, "gbps": 40}, {"ms": 42, "gbps": 0}]
          "samples": {"interval_ms": 1, "gbps": [...]}   (one iteration)
          "series": {"interval_ms": 2, "gbps": [...]}    (a long record, e.g.
              a NIC counter read every 2 ms; optional min_period_ms,
              max_period_ms, min_quality)
          "events": {"interval_ms": 1, "at_ms": [...], "bytes": [...],
              "duration_ms": [...]}                      (collective calls)

        e.g. eng.profile({"job": {"id": "a", "series": {"interval_ms": 2,
        "gbps": counter_gbps}}}) → {"id", "period_ms", "peak_gbps",
        "mean_gbps", "samples": {"interval_ms", "gbps"}, "fit": {"period_ms",
        "quality", "explained", "iterations"}}; its "samples" go back into
        link() and rank() as the job's demand."""
        return self.call("cassini.profile", request)

    def rank(self, request: RankRequest) -> RankResponse:
        """"cassini.rank": placement candidates ranked by their links'
        compatibility. The response's "comm_offsets_ms" and "periods_ms"
        with the best candidate's "shifts_ms" are each job's agent plan."""
        return self.call("cassini.rank", request)

    def plan(self, request: ShockwavePlanRequest) -> ShockwavePlanResponse:
        """"shockwave.plan": the next rounds of a GPU cluster from
        Shockwave's market."""
        return self.call("shockwave.plan", request)

    def predict(self, request: ShockwavePlanRequest) -> ShockwavePredictResponse:
        """"shockwave.predict": every job's remaining runtime, mean epoch
        duration and fair finish time, without a plan (the request is
        shockwave.plan's)."""
        return self.call("shockwave.predict", request)

    def new_agent(self, plan: AgentNewRequest) -> "Agent":
        """"cassini.agent.new": CASSINI's time-shift agent for one job
        (plan: period_ms, shift_ms, and optionally comm_offset_ms,
        reference_unix_ms, mode, threshold, cooldown_ms), living in this
        engine. Returns an Agent; orrery.agent.TimeShiftAgent wraps it for
        a training loop."""
        r = self.call("cassini.agent.new", plan)
        return Agent(self, r["handle"])

    def new_scheduler(self, gpus: int, config: Optional[ShockwaveConfig] = None) -> "Scheduler":
        """"shockwave.scheduler.new": Shockwave's incremental scheduler (Go's
        orrery.Scheduler) for a cluster of gpus GPUs, living in this
        engine. config is shockwave.plan's configuration, with
        "reopt_rounds". Returns a Scheduler."""
        req: dict = {"gpus": gpus}
        if config is not None:
            req["config"] = config
        r = self.call("shockwave.scheduler.new", req)
        return Scheduler(self, r["handle"])

    def link_search(self, periods: Sequence[int], demand: Sequence[int], capacity: int,
                    fixed: Optional[Sequence[int]] = None, mode: str = "exact", max_perimeter: int = 0,
                    round_periods: bool = False, restarts: int = 0, budget: int = 0, seed: int = 0) -> LinkSearchResult:
        """The flat fast path of cassini.link on quantized profiles: periods
        in ticks, demand in units (all jobs' per-tick demands, concatenated),
        capacity in units, fixed None or a shift per job (-1: free). Returns
        a LinkSearchResult; raises OrreryError on bad input."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def check_search_options(max_perimeter, restarts, budget, seed):
    """The option fields' ranges in the flat layout (int32, int64 with -1
    for unlimited, uint64 with a negative seed taken modulo 2**64): ctypes
    and struct would otherwise wrap a value past them silently
    (budget=2**70 became the default)."""
    for name, v, lo, hi in (("max_perimeter", max_perimeter, 0, 2**31 - 1),
                            ("restarts", restarts, 0, 2**31 - 1),
                            ("budget", budget, -1, 2**63 - 1),
                            ("seed", seed, -2**63, 2**64 - 1)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise OrreryError("invalid_argument", name, "%r is not an integer" % (v,))
        if not lo <= v <= hi:
            raise OrreryError("invalid_argument", name, "%d is outside %d..%d" % (v, lo, hi))


def check_search_args(periods, demand, fixed):
    """The checks the flat layout needs before anything is copied."""
    k = len(periods)
    if fixed is not None and len(fixed) != k:
        raise OrreryError("invalid_argument", "fixed", "%d entries for %d jobs" % (len(fixed), k))
    total = sum(max(0, int(t)) for t in periods)
    if len(demand) != total:
        raise OrreryError("invalid_argument", "demand", "%d demands for periods summing to %d ticks" % (len(demand), total))
    return k, total


class Agent:
    """CASSINI's time-shift agent (the Go engine/cassini/agent) behind a handle of
    an Engine: it decides, for instants in milliseconds since the Unix
    epoch, when each iteration starts. See orrery.agent for the
    training-loop side."""

    def __init__(self, engine: Engine, handle: int):
        self.engine = engine
        self.handle: Optional[int] = handle

    def _call(self, op: str, fields: dict) -> Any:
        req = {"handle": self.handle}
        req.update(fields)
        return self.engine.call(op, req)

    def next(self, ready_unix_ms: float, comm_ms: Optional[float] = None) -> AgentDecision:
        """When the iteration the loop is ready to start at ready_unix_ms
        starts: {start_unix_ms, delay_ms, late_ms, adjusted, released}.
        comm_ms, if given, is how long the last iteration's communication
        took (an elastic agent weighs it against its plan's free_comm_ms)."""
        req = {"ready_unix_ms": ready_unix_ms}
        if comm_ms:
            req["comm_ms"] = comm_ms
        return self._call("cassini.agent.next", req)

    def communicating(self, at_unix_ms: float) -> float:
        """Record a communication start; returns its drift in ms from the
        plan's comm_offset_ms."""
        return self._call("cassini.agent.communicating", {"at_unix_ms": at_unix_ms})["drift_ms"]

    def set_plan(self, plan: AgentPlan) -> dict:
        """Install a new plan (period_ms, shift_ms, ...)."""
        return self._call("cassini.agent.set_plan", {"plan": plan})

    def stats(self) -> AgentStats:
        """Adjustments, padding, drift."""
        return self._call("cassini.agent.stats", {})

    def close(self) -> None:
        """Release the handle."""
        if self.handle is None:
            return None
        try:
            return self._call("cassini.agent.close", {})
        finally:
            self.handle = None


class Scheduler:
    """Shockwave's incremental round scheduler behind a handle of an Engine:
    the Go orrery.Scheduler, so every host runs the same logic. Job ids are
    integers or non-empty strings, one kind per scheduler (its first add
    decides); with strings, jobs the planner cannot tell apart run in the
    order they were added. Create it with Engine.new_scheduler; close it
    (or use it as a context manager) when done.

    For the Shockwave authors' interface (add_metadata, round_schedule,
    ...) see orrery.shockwave.ShockwaveScheduler, built on this class."""

    def __init__(self, engine: Engine, handle: int):
        self.engine = engine
        self.handle: Optional[int] = handle

    def _call(self, op: str, fields: dict) -> Any:
        req = {"handle": self.handle}
        req.update(fields)
        return self.engine.call(op, req)

    def add(self, job: dict) -> SchedulerState:
        """add_metadata: admit a job (shockwave.plan's job dict, with an
        integer or string "id"); the next schedule re-plans."""
        return self._call("shockwave.scheduler.add", {"job": job})

    def remove(self, id: JobId) -> SchedulerState:
        """remove_metadata: retire a job."""
        return self._call("shockwave.scheduler.remove", {"id": id})

    def progress(self, id: JobId, epochs: int) -> SchedulerState:
        """schedule_progress: the job's completed epochs."""
        return self._call("shockwave.scheduler.progress", {"id": id, "epochs": epochs})

    def observe(self, id: JobId, round: int, it_per_s: float, bs: int) -> SchedulerState:
        """A lease's measured throughput, for calibration: it ended in round
        (the current round's lease ends in the current round + 1)."""
        return self._call("shockwave.scheduler.observe", {"id": id, "sample": {"round": round, "it_per_s": it_per_s, "bs": bs}})

    def end_round(self) -> int:
        """increment_round_ptr: returns the new round."""
        return self._call("shockwave.scheduler.end_round", {})["round"]

    def resolve(self) -> SchedulerState:
        """set_resolve: re-plan at the next schedule (with reopt_rounds -1,
        the caller decides when)."""
        return self._call("shockwave.scheduler.resolve", {})

    def schedule(self) -> List[JobId]:
        """round_schedule: the ids to run in the current round, planned ones
        first."""
        return self._call("shockwave.scheduler.schedule", {})["jobs"]

    def last_plan(self) -> Optional[SchedulerPlan]:
        """The most recent plan (shockwave.plan's response with this
        scheduler's ids), or None before the first."""
        return self._call("shockwave.scheduler.last_plan", {}).get("plan")

    def close(self) -> None:
        """Release the handle."""
        if self.handle is None:
            return None
        try:
            self._call("shockwave.scheduler.close", {})
        finally:
            self.handle = None

    def __enter__(self) -> "Scheduler":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
