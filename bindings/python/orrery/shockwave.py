"""A drop-in for the Shockwave authors' ShockwaveScheduler
(uw-mad-dash/shockwave, scheduler/shockwave.py): the same constructor
arguments and methods, planned by orrery's exact solver in Go instead of
CVXPY with Gurobi or MOSEK. Swap one import in their simulator:

    # from shockwave import ShockwaveScheduler
    from orrery.shockwave import ShockwaveScheduler

Jobs are the authors' JobMetaData objects (or any object with the same
attributes: jobid, nworkers, epochs, epoch_nsamples, epoch_duration,
epoch_duration_preprofiled, bs_schedule, timestamp_submit, epoch_progress,
and the throughput timeline throughput_measurements, an OrderedDict
round -> (iterations/s, batch size) that the simulator fills in), or plain
dicts in shockwave.plan's job format.

What differs, by design:

* The solver is exact and deterministic: solver_preference,
  solver_rel_gap, solver_num_threads and solver_timeout are accepted and
  not used (orrery proves the optimum of each round program; the authors'
  Gurobi stops at a 1e-3 gap or 15 s). gram and n_epoch_vars_max are unused
  upstream too.
* Re-plans follow the authors' triggers inside the Go scheduler: an
  arrival or a completion (both re-estimate the fair finish times), every
  8 rounds (where their simulator calls set_resolve), and when the cached
  window runs out. set_resolve() therefore changes nothing, and
  share_update=False is not honoured: every add and remove re-estimates.
* Ids: an int id is the scheduler's own; anything else is keyed by its
  integer_job_id() (the authors' JobIdPair) or its str(). round_schedule
  returns the caller's id objects.
"""

from collections import OrderedDict

from . import load as _load

# The authors' solver settings the planner has no use for.
_UNUSED = ("gram", "solver_preference", "solver_rel_gap", "solver_num_threads", "solver_timeout", "n_epoch_vars_max")


def _key(jobid):
    """The id the Go scheduler sees for the caller's id."""
    if isinstance(jobid, bool):
        raise TypeError("a job id cannot be a bool")
    if isinstance(jobid, int):
        return jobid
    f = getattr(jobid, "integer_job_id", None)
    if callable(f):
        return int(f())
    return str(jobid)


def job_dict(jobid, job):
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
    """The authors' ShockwaveScheduler over orrery's Go scheduler.

    engine is an orrery Engine (default: orrery.load()); reopt_rounds is
    the periodic re-plan (the authors' REOPT_ROUNDS, 8)."""

    def __init__(
        self,
        ngpus: int,
        gram: int,
        init_metadata: OrderedDict,
        future_nrounds: int,
        round_duration: int,
        solver_preference: list,
        solver_rel_gap: float,
        solver_num_threads: int,
        solver_timeout: float,
        n_epoch_vars_max: int,
        logapx_bases: list,
        logapx_origin: dict,
        k: float,
        lam: float,
        rhomax: float,
        *,
        engine=None,
        reopt_rounds: int = 8,
    ):
        if ngpus <= 0 or future_nrounds <= 0 or round_duration <= 0 or k <= 0:
            raise ValueError("ngpus, future_nrounds, round_duration and k must be positive")
        self.ngpus = ngpus
        self.gram = gram
        self.future_nrounds = future_nrounds
        self.round_duration = round_duration
        self.solver_preference = solver_preference
        self.solver_rel_gap = solver_rel_gap
        self.solver_num_threads = solver_num_threads
        self.solver_timeout = solver_timeout
        self.n_epoch_vars_max = n_epoch_vars_max
        self.logapx_bases = list(logapx_bases)
        self.logapx_origin = dict(logapx_origin)
        self.k = k
        self.lam = lam
        self.rhomax = rhomax
        config = {
            "rounds": future_nrounds,
            "round_s": float(round_duration),
            "k": float(k),
            "lambda": float(lam),
            "rho_max": float(rhomax),
            "breakpoints": [float(b) for b in self.logapx_bases],
            "reopt_rounds": reopt_rounds,
        }
        if 0.0 in self.logapx_origin:
            config["log_zero"] = float(self.logapx_origin[0.0])
        self.engine = engine if engine is not None else _load()
        self._sched = self.engine.new_scheduler(ngpus, config)
        self.metadata = OrderedDict()
        self.completed_jobs = OrderedDict()
        self.schedules = OrderedDict()
        self.round_ptr = 0
        self.resolve = True
        self._ids = {}  # Go id -> the caller's id
        self._sent = {}  # Go id -> last timeline round sent
        for jobid, jobobj in init_metadata.items():
            self.add_metadata(jobid, jobobj)

    def add_metadata(self, jobid, jobobj, share_update=True):
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

    def remove_metadata(self, jobid, share_update=True):
        """Retire a completed job; the next round_schedule re-plans."""
        if jobid not in self.metadata:
            raise KeyError(jobid)
        self._sched.remove(_key(jobid))
        self.completed_jobs[jobid] = self.metadata.pop(jobid)
        self._sent.pop(_key(jobid), None)
        self.resolve = True

    def schedule_progress(self, jobid, epoch_progress, share_update=True):
        """The job's completed epochs."""
        if jobid not in self.metadata:
            raise KeyError(jobid)
        self._sched.progress(_key(jobid), int(epoch_progress))
        job = self.metadata[jobid]
        if hasattr(job, "set_epoch_progress"):
            job.set_epoch_progress(epoch_progress)
            if hasattr(job, "reset_waiting_delay"):
                job.reset_waiting_delay()

    def deschedule_waiting_delay(self, jobid, delay):
        """Kept for the simulator; the planner does not use waiting delays."""
        job = self.metadata.get(jobid)
        if job is not None and hasattr(job, "add_waiting_delay"):
            job.add_waiting_delay(delay)

    def increment_round_ptr(self):
        self.round_ptr = self._sched.end_round()

    def set_resolve(self):
        """Accepted: the Go scheduler re-plans on the authors' own triggers
        (see the module doc)."""
        self.resolve = True

    def clear_resolve(self):
        self.resolve = False

    def _sync_timelines(self):
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

    def round_schedule(self):
        """The ids of the jobs to run in the current round."""
        self._sync_timelines()
        ids = [self._ids[i] for i in self._sched.schedule()]
        self.schedules[self.round_ptr] = ids
        self.clear_resolve()
        return ids

    def last_plan(self):
        """The most recent plan (shockwave.plan's response)."""
        return self._sched.last_plan()

    def close(self):
        self._sched.close()
