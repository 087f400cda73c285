"""The backend-independent part of the API: errors, results, JSON calls."""

import json
from dataclasses import dataclass
from typing import List

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


class Engine:
    """orrery's engine behind one backend. handle() is the primitive; the
    rest is built on it. Methods may be called from several threads (the
    wasmtime backend serializes them)."""

    backend = ""

    @property
    def abi_version(self):
        raise NotImplementedError

    def handle(self, envelope):
        """Run a request envelope (bytes or str: {"op": ..., "request":
        {...}}) and return the response envelope's bytes, exactly what the
        Go engine's orrery.Handle returns."""
        raise NotImplementedError

    def call(self, op, request):
        """Run op on request (a dict, or JSON text) and return the decoded
        response; raise OrreryError for an error response. Works for every
        operation of the schema, including ones added later."""
        body = request if isinstance(request, str) else json.dumps(request, separators=(",", ":"))
        env = '{"op":%s,"request":%s}' % (json.dumps(op), body)
        reply = json.loads(self.handle(env.encode()))
        err = reply.get("error")
        if err is not None:
            raise OrreryError(err.get("code", ""), err.get("field", ""), err.get("message", ""))
        return reply["response"]

    def link(self, request):
        """"cassini.link": the best rotation of the jobs sharing one link."""
        return self.call("cassini.link", request)

    def rank(self, request):
        """"cassini.rank": placement candidates ranked by their links'
        compatibility."""
        return self.call("cassini.rank", request)

    def plan(self, request):
        """"shockwave.plan": the next rounds of a GPU cluster from
        Shockwave's market."""
        return self.call("shockwave.plan", request)

    def predict(self, request):
        """"shockwave.predict": every job's remaining runtime, mean epoch
        duration and fair finish time, without a plan (the request is
        shockwave.plan's)."""
        return self.call("shockwave.predict", request)

    def link_search(self, periods, demand, capacity, fixed=None, mode="exact", max_perimeter=0,
                    round_periods=False, restarts=0, budget=0, seed=0):
        """The flat fast path of cassini.link on quantized profiles: periods
        in ticks, demand in units (all jobs' per-tick demands, concatenated),
        capacity in units, fixed None or a shift per job (-1: free). Returns
        a LinkSearchResult; raises OrreryError on bad input."""
        raise NotImplementedError

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def check_search_args(periods, demand, fixed):
    """The checks the flat layout needs before anything is copied."""
    k = len(periods)
    if fixed is not None and len(fixed) != k:
        raise OrreryError("invalid_argument", "fixed", "%d entries for %d jobs" % (len(fixed), k))
    total = sum(max(0, int(t)) for t in periods)
    if len(demand) != total:
        raise OrreryError("invalid_argument", "demand", "%d demands for periods summing to %d ticks" % (len(demand), total))
    return k, total
