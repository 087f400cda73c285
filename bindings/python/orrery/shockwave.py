"""A drop-in for the Shockwave authors' ShockwaveScheduler
(uw-mad-dash/shockwave, scheduler/shockwave.py): the same constructor
arguments and methods, planned by orrery's exact solver in Go instead of
CVXPY with Gurobi or MOSEK. Swap one import in their simulator:

    # from shockwave import ShockwaveScheduler
    from orrery.shockwave import ShockwaveScheduler

Their simulator (scheduler.py) still imports cvxpy (through policies/)
and matrix_completion (through throughput_estimator.py) when it loads;
install them (pip install cvxpy matrix_completion) or put stub modules of
those names on its path: neither is called on the Shockwave path. gurobipy
and mosek, which only their shockwave.py imports, are not needed.

Jobs are the authors' JobMetaData objects (or any object with the same
attributes: jobid, nworkers, epochs, epoch_nsamples, epoch_duration,
epoch_duration_preprofiled, bs_schedule, timestamp_submit, epoch_progress,
and the throughput timeline throughput_measurements, an OrderedDict
round -> (iterations/s, batch size) that the simulator fills in), or plain
dicts in shockwave.plan's job format.

Every argument after ngpus has the authors' tacc_32gpus value as its
default, so ShockwaveScheduler(32) is their 32-GPU setup. The knobs:

* Re-plans happen when their class re-solves: on add_metadata and
  remove_metadata, when set_resolve() was called since the last
  round_schedule (their simulator calls it after a completion and every
  REOPT_ROUNDS rounds), and when the round leaves the planned window.
  clear_resolve() before round_schedule cancels a set_resolve, as in their
  class. reopt_rounds=N (a keyword of this class only) makes the Go
  scheduler also re-plan every N rounds by itself, for callers that never
  call set_resolve.
* solver_timeout (seconds) is the time limit of each plan; a plan cut short
  answers its best so far (orrery solves the authors' programs in
  milliseconds, so their 15 s never binds). The solver is exact: it proves
  each optimum. solver_rel_gap is the relative gap Gurobi stops at (1e-3);
  it is passed on only with honour_rel_gap=True, as orrery's "gap", since
  stopping within 0.1% of the optimum can change which jobs run and saves
  no time here.
* solver_preference and solver_num_threads choose Gurobi or MOSEK and its
  threads; gram and n_epoch_vars_max are unused upstream too. All are kept
  as attributes.
* share_update=False (add, remove, progress) is not honoured: every add and
  remove re-estimates the fair finish times, as their simulator's calls do.
* Ids: an int id is the scheduler's own; anything else is keyed by its
  integer_job_id() (the authors' JobIdPair) or its str(). round_schedule
  returns the caller's id objects.

tests/test_shockwave_dropin.py drives this class as scheduler.py does
(add_metadata on arrival, round_schedule, schedule_progress,
deschedule_waiting_delay, increment_round_ptr, set_resolve on completions
and every REOPT_ROUNDS rounds) and checks it re-plans exactly when their
class would.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Dict, Hashable, List, Optional, Sequence

from ._common import Engine, Scheduler
from .types import SchedulerPlan, ShockwaveConfig
from . import load as _load

# The authors' tacc_32gpus configuration: the constructor's defaults.
_LOGAPX_BASES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
_LOGAPX_ORIGIN = {0.0: 1e-6}


def _key(jobid: Hashable) -> Any:
    """The id the Go scheduler sees for the caller's id."""
    if isinstance(jobid, bool):
        raise TypeError("a job id cannot be a bool")
    if isinstance(jobid, int):
        return jobid
    f = getattr(jobid, "integer_job_id", None)
    if callable(f):
        return int(f())
    return str(jobid)


def job_dict(jobid: Hashable, job: Any) -> Dict[str, Any]:
    """shockwave.plan's job for a JobMetaData (or a dict, returned with its
    id set)."""
    if isinstance(job, dict):
        d = dict(job)
        d["id"] = _key(jobid)
        return d
    d = {
        "id": _key(jobid),
        "gpus": int(getattr(job, "nworkers", 1)),
        "submit_s": float(job.timestamp_submit or 0.0),
        "epochs": int(job.epochs),
        "progress": int(job.epoch_progress),
        "epoch_bs": [int(b) for b in job.bs_schedule],
        "epoch_dur_s": [float(x) for x in job.epoch_duration],
        "samples_per_epoch": float(job.epoch_nsamples),
    }
    pre = getattr(job, "epoch_duration_preprofiled", None)
    if pre is not None and list(pre) != d["epoch_dur_s"]:
        d["profiled_dur_s"] = [float(x) for x in pre]
    return d


class ShockwaveScheduler(object):
    """The authors' ShockwaveScheduler over orrery's Go scheduler (see the
    module doc for what each knob does). engine is an orrery Engine
    (default: orrery.load())."""

    def __init__(
        self,
        ngpus: int,
        gram: int = 16,
        init_metadata: Optional[OrderedDict] = None,
        future_nrounds: int = 20,
        round_duration: float = 120,
        solver_preference: Optional[Sequence[str]] = None,
        solver_rel_gap: float = 1e-3,
        solver_num_threads: int = 24,
        solver_timeout: Optional[float] = 15.0,
        n_epoch_vars_max: int = 30,
        logapx_bases: Optional[Sequence[float]] = None,
        logapx_origin: Optional[Dict[float, float]] = None,
        k: float = 1e-3,
        lam: float = 12.0,
        rhomax: float = 1.0,
        *,
        engine: Optional[Engine] = None,
        reopt_rounds: Optional[int] = None,
        honour_rel_gap: bool = False,
    ):
        if ngpus <= 0 or future_nrounds <= 0 or round_duration <= 0 or k <= 0:
            raise ValueError("ngpus, future_nrounds, round_duration and k must be positive")
        if reopt_rounds is not None and reopt_rounds <= 0:
            raise ValueError("reopt_rounds must be positive (None: re-plan on set_resolve, as the authors' class)")
        self.ngpus = ngpus
        self.gram = gram
        self.future_nrounds = future_nrounds
        self.round_duration = round_duration
        self.solver_preference = list(solver_preference) if solver_preference is not None else ["GUROBI"]
        self.solver_rel_gap = solver_rel_gap
        self.solver_num_threads = solver_num_threads
        self.solver_timeout = solver_timeout
        self.n_epoch_vars_max = n_epoch_vars_max
        self.logapx_bases = list(logapx_bases if logapx_bases is not None else _LOGAPX_BASES)
        self.logapx_origin = dict(logapx_origin if logapx_origin is not None else _LOGAPX_ORIGIN)
        self.k = k
        self.lam = lam
        self.rhomax = rhomax
        config: ShockwaveConfig = {
            "rounds": future_nrounds,
            "round_s": float(round_duration),
            "k": float(k),
            "lambda": float(lam),
            "rho_max": float(rhomax),
            "breakpoints": [float(b) for b in self.logapx_bases],
            # -1: no periodic re-plan of its own; set_resolve decides, as in
            # the authors' class.
            "reopt_rounds": reopt_rounds if reopt_rounds is not None else -1,
        }
        if 0.0 in self.logapx_origin:
            config["log_zero"] = float(self.logapx_origin[0.0])
        if solver_timeout is not None and solver_timeout > 0:
            config["time_limit_ms"] = float(solver_timeout) * 1000.0
        if honour_rel_gap and solver_rel_gap:
            config["gap"] = float(solver_rel_gap)
        self.config = config  # what the Go scheduler plans with
        self.engine = engine if engine is not None else _load()
        self._sched: Scheduler = self.engine.new_scheduler(ngpus, config)
        self.metadata: OrderedDict = OrderedDict()
        self.completed_jobs: OrderedDict = OrderedDict()
        self.schedules: OrderedDict = OrderedDict()
        self.round_ptr = 0
        self.resolve = True
        self._ids: Dict[Any, Hashable] = {}  # Go id -> the caller's id
        self._sent: Dict[Any, int] = {}  # Go id -> last timeline round sent
        for jobid, jobobj in (init_metadata or OrderedDict()).items():
            self.add_metadata(jobid, jobobj)

    def add_metadata(self, jobid: Hashable, jobobj: Any, share_update: bool = True) -> None:
        """Admit a job; the next round_schedule re-plans."""
        if jobid in self.metadata:
            raise ValueError("job %r is already active" % (jobid,))
        d = job_dict(jobid, jobobj)
        timeline = getattr(jobobj, "throughput_measurements", None)
        if isinstance(jobobj, dict) or not timeline:
            self._sched.add(d)
            last = max((s["round"] for s in d.get("timeline", [])), default=-1)
        else:
            d["timeline"] = [{"round": int(r), "it_per_s": float(v[0]), "bs": int(v[1])} for r, v in sorted(timeline.items())]
            self._sched.add(d)
            last = max(int(r) for r in timeline)
        self.metadata[jobid] = jobobj
        self._ids[d["id"]] = jobid
        self._sent[d["id"]] = last
        self.resolve = True

    def remove_metadata(self, jobid: Hashable, share_update: bool = True) -> None:
        """Retire a completed job; the next round_schedule re-plans."""
        if jobid not in self.metadata:
            raise KeyError(jobid)
        self._sched.remove(_key(jobid))
        self.completed_jobs[jobid] = self.metadata.pop(jobid)
        self._sent.pop(_key(jobid), None)
        self.resolve = True

    def schedule_progress(self, jobid: Hashable, epoch_progress: int, share_update: bool = True) -> None:
        """The job's completed epochs."""
        if jobid not in self.metadata:
            raise KeyError(jobid)
        self._sched.progress(_key(jobid), int(epoch_progress))
        job = self.metadata[jobid]
        if hasattr(job, "set_epoch_progress"):
            job.set_epoch_progress(epoch_progress)
            if hasattr(job, "reset_waiting_delay"):
                job.reset_waiting_delay()

    def deschedule_waiting_delay(self, jobid: Hashable, delay: float) -> None:
        """Kept for the simulator; the planner does not use waiting delays."""
        job = self.metadata.get(jobid)
        if job is not None and hasattr(job, "add_waiting_delay"):
            job.add_waiting_delay(delay)

    def increment_round_ptr(self) -> None:
        self.round_ptr = self._sched.end_round()

    def set_resolve(self) -> None:
        """Re-plan at the next round_schedule, even inside the planned
        window (what the authors' simulator calls after a completion and
        every REOPT_ROUNDS rounds)."""
        self.resolve = True

    def clear_resolve(self) -> None:
        """Cancel a set_resolve not yet acted on."""
        self.resolve = False

    def _sync_timelines(self) -> None:
        """Send the throughput samples the simulator added to each job's
        timeline since the last round."""
        for jobid, job in self.metadata.items():
            timeline = getattr(job, "throughput_measurements", None)
            if not timeline:
                continue
            key = _key(jobid)
            last = self._sent.get(key, -1)
            for r in sorted(int(x) for x in timeline if int(x) > last):
                tput, bs = timeline[r][0], timeline[r][1]
                self._sched.observe(key, r, float(tput), int(bs))
                last = r
            self._sent[key] = last

    def round_schedule(self) -> List[Hashable]:
        """The ids of the jobs to run in the current round: the cached plan's
        round, or a new plan's when one is due (see the module doc)."""
        self._sync_timelines()
        if self.resolve:
            self._sched.resolve()
        ids = [self._ids[i] for i in self._sched.schedule()]
        self.schedules[self.round_ptr] = ids
        self.clear_resolve()
        return ids

    def last_plan(self) -> Optional[SchedulerPlan]:
        """The most recent plan (shockwave.plan's response)."""
        return self._sched.last_plan()

    def close(self) -> None:
        self._sched.close()
