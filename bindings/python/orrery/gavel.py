"""Shockwave as a Gavel-style policy: get_allocation(throughputs,
scale_factors, priority_weights, cluster_spec) returns each job's share of
time on the cluster, as Gavel's policies do (stanford-futuredata/gavel,
scheduler/policies), computed by orrery's Shockwave planner in Go.

What it covers: a cluster of ONE GPU type (cluster_spec = {"v100": 32}).
The allocation of job j is the fraction of the planning window's rounds in
which the plan runs it (planned or backfilled), {worker_type: rounds_j /
window}; Gavel's round-based
mechanism then realizes those fractions.

What it does not cover: mixed GPU types (cluster_spec with more than one
worker type raises NotImplementedError: Shockwave's market prices one kind
of GPU time, and the authors evaluate it on homogeneous clusters only), and
space sharing / packing (Gavel's *_packing policies). priority_weights are
accepted and not used: Shockwave's budgets are equal, and its priorities
come from finish-time fairness.

Gavel's get_allocation sees throughputs only, while Shockwave plans from
each job's epoch profile: register every job with add_job (shockwave.plan's
job dict: gpus, submit_s, epoch_bs, epoch_dur_s, ...) and report its
completed epochs with set_progress; remove_job when it completes.
"""

from . import load as _load


class ShockwavePolicy(object):
    """Shockwave's plan as Gavel time fractions. config is shockwave.plan's
    configuration; round_s the round length (Gavel's time_per_iteration).
    Plans are stateless calls of shockwave.plan; the policy keeps what
    Shockwave's state needs between calls (each job's finish-time
    estimates)."""

    def __init__(self, engine=None, config=None, round_s=120.0):
        self._name = "shockwave"
        self.engine = engine if engine is not None else _load()
        self.config = dict(config or {})
        self.config.setdefault("round_s", float(round_s))
        self.round_s = float(self.config["round_s"])
        self._jobs = {}  # the caller's id -> job dict (with our integer id)
        self._next = 0
        self._calls = 0
        self._arrived = False
        self.last_plan = None

    @property
    def name(self):
        return self._name

    def add_job(self, job_id, job):
        """Register a job's profile (shockwave.plan's job dict; its "id" is
        replaced). Jobs the planner cannot tell apart are ordered by
        registration."""
        if job_id in self._jobs:
            raise ValueError("job %r is already registered" % (job_id,))
        d = dict(job)
        d["id"] = self._next
        d.setdefault("progress", 0)
        self._next += 1
        self._jobs[job_id] = d
        self._arrived = True

    def remove_job(self, job_id):
        del self._jobs[job_id]
        self._arrived = True

    def set_progress(self, job_id, epochs):
        self._jobs[job_id]["progress"] = int(epochs)

    def get_allocation(self, throughputs, scale_factors, priority_weights, cluster_spec, now=None):
        """{job_id: {worker_type: fraction of time}} for the jobs in
        throughputs. now (seconds) sets the round being planned; without
        it, each call is the next round of planning."""
        if len(cluster_spec) != 1:
            raise NotImplementedError(
                "orrery's ShockwavePolicy plans one GPU type; cluster_spec has %d (%s): mixed GPU types are "
                "not covered" % (len(cluster_spec), ", ".join(sorted(map(str, cluster_spec)))))
        (worker_type, gpus), = cluster_spec.items()
        ids = [j for j in throughputs if j in self._jobs]
        missing = [j for j in throughputs if j not in self._jobs]
        if missing:
            raise KeyError("jobs without a profile (register them with add_job): %r" % (missing[:5],))
        if not ids:
            return {}
        jobs = []
        for j in ids:
            d = dict(self._jobs[j])
            if j in scale_factors:
                d["gpus"] = int(scale_factors[j])
            jobs.append(d)
        rnd = int(now // self.round_s) if now is not None else self._calls
        self._calls += 1
        req = {"gpus": int(gpus), "round": rnd, "reestimate": self._arrived, "config": self.config, "jobs": jobs}
        plan = self.engine.plan(req)
        self._arrived = False
        self.last_plan = plan
        window = plan["window"]
        runs = {}
        for ids_t in plan["rounds"]:  # planned and backfilled: what would run
            for i in ids_t:
                runs[i] = runs.get(i, 0) + 1
        alloc = {}
        for j, d, res in zip(ids, jobs, plan["jobs"]):
            finish = self._jobs[j].setdefault("finish", [])
            if res.get("estimate_s") and (not finish or finish[-1]["round"] < rnd):
                finish.append({"round": rnd, "estimate_s": res["estimate_s"]})
            alloc[j] = {worker_type: runs.get(d["id"], 0) / float(window)}
        return alloc
