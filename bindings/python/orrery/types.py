"""TypedDicts of orrery's schema v1, generated from the Go types with
schema/v1.json (go test -run TestSchema -update-schema .): do not edit.

Request types have every key optional (the engine takes an absent key as
its default); response types have their always-present keys required.
"""

import sys
from typing import Any, Dict, List, Union

if sys.version_info >= (3, 8):
    from typing import TypedDict
else:  # pragma: no cover
    TypedDict = dict

JobId = Union[int, str]


class AgentCommRequest(TypedDict, total=False):
    handle: int
    at_unix_ms: float


class _AgentDecisionRequired(TypedDict):
    start_unix_ms: float
    delay_ms: float
    late_ms: float
    adjusted: bool


class AgentDecision(_AgentDecisionRequired, total=False):
    released: bool


class _AgentDriftRequired(TypedDict):
    drift_ms: float


class AgentDrift(_AgentDriftRequired, total=False):
    pass


class _AgentHandleRequired(TypedDict):
    handle: int


class AgentHandle(_AgentHandleRequired, total=False):
    pass


class AgentNewRequest(TypedDict, total=False):
    period_ms: float
    shift_ms: float
    comm_offset_ms: float
    reference_unix_ms: float
    slack_ms: float
    free_comm_ms: float
    mode: str
    threshold: float
    cooldown_ms: float
    give_up: str


class AgentNextRequest(TypedDict, total=False):
    handle: int
    ready_unix_ms: float
    comm_ms: float


class AgentPlan(TypedDict, total=False):
    period_ms: float
    shift_ms: float
    comm_offset_ms: float
    reference_unix_ms: float
    slack_ms: float
    free_comm_ms: float


class AgentPlanRequest(TypedDict, total=False):
    handle: int
    plan: "AgentPlan"


class AgentRequest(TypedDict, total=False):
    handle: int


class _AgentStatsRequired(TypedDict):
    iterations: int
    adjustments: int
    adjustments_per_minute: float
    replans: int
    padding_ms: float
    adjust_delay_ms: float
    samples: int
    over_threshold: int
    mean_abs_drift_ms: float
    max_abs_drift_ms: float
    last_drift_ms: float


class AgentStats(_AgentStatsRequired, total=False):
    pass


class _CandidateResultRequired(TypedDict):
    id: str
    score: float
    discarded: bool


class CandidateResult(_CandidateResultRequired, total=False):
    status: str
    reason: str
    links: List["LinkResult"]
    shifts_ms: Dict[str, float]
    grid_ms: float


class CandidateSpec(TypedDict, total=False):
    id: str
    paths: Dict[str, List[str]]


class Empty(TypedDict, total=False):
    pass


class EventsSpec(TypedDict, total=False):
    interval_ms: float
    at_ms: List[float]
    bytes: List[float]
    duration_ms: List[float]
    min_period_ms: float
    max_period_ms: float
    min_quality: float


class FinishSpec(TypedDict, total=False):
    round: int
    estimate_s: float


class _FitSpecRequired(TypedDict):
    period_ms: float
    quality: float
    explained: float
    iterations: int


class FitSpec(_FitSpecRequired, total=False):
    pass


class JobSpec(TypedDict, total=False):
    id: str
    period_ms: float
    phases: List["PhaseSpec"]
    samples: "SamplesSpec"
    series: "SeriesSpec"
    events: "EventsSpec"


class KnownPredictions(TypedDict, total=False):
    remaining_s: float
    mean_epoch_s: float
    elapsed_s: float
    fair_finish_s: float


class LinkRequest(TypedDict, total=False):
    capacity_gbps: float
    jobs: List["JobSpec"]
    tick_ms: float
    unit_mbps: float
    mode: str
    max_perimeter_ticks: int
    round_periods: bool
    budget: int
    restarts: int
    seed: int
    time_limit_ms: float


class _LinkResponseRequired(TypedDict):
    score: float
    unshifted_score: float
    bound: float
    status: str
    mode: str
    excess_gbit: float
    perimeter_ms: float
    points: int
    shifts_ms: Dict[str, float]
    rotations_deg: Dict[str, float]
    periods_ms: Dict[str, float]
    comm_offsets_ms: Dict[str, float]
    centred_shifts_ms: Dict[str, float]
    shift_room_ms: Dict[str, "ShiftRoom"]
    evaluations: int


class LinkResponse(_LinkResponseRequired, total=False):
    grid_ms: float
    score_periods: str
    unrounded_score: float
    unrounded_excess_gbit: float
    unrounded_perimeter_ms: float
    warnings: List["Warning"]


class _LinkResultRequired(TypedDict):
    id: str
    jobs: List[str]
    score: float


class LinkResult(_LinkResultRequired, total=False):
    pass


class LinkSpec(TypedDict, total=False):
    id: str
    capacity_gbps: float


class PhaseSpec(TypedDict, total=False):
    ms: float
    gbps: float


class ProfileRequest(TypedDict, total=False):
    job: "JobSpec"
    tick_ms: float
    unit_mbps: float
    mode: str
    max_perimeter_ticks: int
    round_periods: bool
    budget: int
    restarts: int
    seed: int
    time_limit_ms: float


class _ProfileResponseRequired(TypedDict):
    id: str
    period_ms: float
    peak_gbps: float
    mean_gbps: float
    samples: "SamplesSpec"


class ProfileResponse(_ProfileResponseRequired, total=False):
    fit: "FitSpec"
    warnings: List["Warning"]


class RankRequest(TypedDict, total=False):
    links: List["LinkSpec"]
    jobs: List["JobSpec"]
    candidates: List["CandidateSpec"]
    aggregate: str
    loops: str
    workers: int
    tick_ms: float
    unit_mbps: float
    mode: str
    max_perimeter_ticks: int
    round_periods: bool
    budget: int
    restarts: int
    seed: int
    time_limit_ms: float


class _RankResponseRequired(TypedDict):
    best: str
    shifts_ms: Dict[str, float]
    ranking: List[str]
    candidates: List["CandidateResult"]
    periods_ms: Dict[str, float]
    comm_offsets_ms: Dict[str, float]
    searches: int


class RankResponse(_RankResponseRequired, total=False):
    warnings: List["Warning"]
    centred_shifts_ms: Dict[str, float]
    shift_room_ms: Dict[str, "ShiftRoom"]


class SamplesSpec(TypedDict, total=False):
    interval_ms: float
    gbps: List[float]


class SchedulerAddRequest(TypedDict, total=False):
    handle: int
    job: "SchedulerJob"


class _SchedulerHandleRequired(TypedDict):
    handle: int


class SchedulerHandle(_SchedulerHandleRequired, total=False):
    pass


class SchedulerJob(TypedDict, total=False):
    id: JobId
    gpus: int
    submit_s: float
    epochs: int
    progress: int
    epoch_bs: List[int]
    epoch_dur_s: List[float]
    modes: List[int]
    mode_dur_s: List[float]
    profiled_dur_s: List[float]
    samples_per_epoch: float
    timeline: List["ThroughputSpec"]
    finish: List["FinishSpec"]
    known: "KnownPredictions"


class _SchedulerJobPlanRequired(TypedDict):
    id: JobId
    rounds: int
    epochs: float
    priority: float
    remaining_s: float
    remaining_std_s: float
    mean_epoch_s: float
    fair_finish_s: float
    calibration: float


class SchedulerJobPlan(_SchedulerJobPlanRequired, total=False):
    estimate_s: float


class SchedulerLastPlan(TypedDict, total=False):
    plan: "SchedulerPlan"


class SchedulerNewRequest(TypedDict, total=False):
    gpus: int
    config: "ShockwaveConfig"


class SchedulerObserveRequest(TypedDict, total=False):
    handle: int
    id: JobId
    sample: "ThroughputSpec"


class _SchedulerPlanRequired(TypedDict):
    round: int
    window: int
    status: str
    relaxed: bool
    objective: float
    bound: float
    welfare: float
    makespan_s: float
    nodes: int
    rounds: List[List[JobId]]
    backfill: List[List[JobId]]
    jobs: List["SchedulerJobPlan"]


class SchedulerPlan(_SchedulerPlanRequired, total=False):
    pass


class SchedulerProgressRequest(TypedDict, total=False):
    handle: int
    id: JobId
    epochs: int


class SchedulerRemoveRequest(TypedDict, total=False):
    handle: int
    id: JobId


class SchedulerRequest(TypedDict, total=False):
    handle: int


class _SchedulerScheduleRequired(TypedDict):
    round: int
    jobs: List[JobId]


class SchedulerSchedule(_SchedulerScheduleRequired, total=False):
    pass


class _SchedulerStateRequired(TypedDict):
    round: int
    active: int


class SchedulerState(_SchedulerStateRequired, total=False):
    pass


class SeriesSpec(TypedDict, total=False):
    interval_ms: float
    gbps: List[float]
    min_period_ms: float
    max_period_ms: float
    min_quality: float


class _ShiftRoomRequired(TypedDict):
    early_ms: float
    late_ms: float


class ShiftRoom(_ShiftRoomRequired, total=False):
    partial: bool


ShockwaveConfig = TypedDict(
    "ShockwaveConfig",
    {
        "rounds": int,
        "round_s": float,
        "k": float,
        "lambda": float,
        "rho_max": float,
        "breakpoints": List[float],
        "log_zero": float,
        "urgent_power": float,
        "log": str,
        "no_relax": bool,
        "gap": float,
        "max_nodes": int,
        "estimator": str,
        "prior_strength": float,
        "momentum": float,
        "tolerance": float,
        "time_limit_ms": float,
        "reopt_rounds": int,
    },
    total=False,
)


class ShockwaveJob(TypedDict, total=False):
    id: int
    gpus: int
    submit_s: float
    epochs: int
    progress: int
    epoch_bs: List[int]
    epoch_dur_s: List[float]
    modes: List[int]
    mode_dur_s: List[float]
    profiled_dur_s: List[float]
    samples_per_epoch: float
    timeline: List["ThroughputSpec"]
    finish: List["FinishSpec"]
    known: "KnownPredictions"


class _ShockwaveJobPlanRequired(TypedDict):
    id: int
    rounds: int
    epochs: float
    priority: float
    remaining_s: float
    remaining_std_s: float
    mean_epoch_s: float
    fair_finish_s: float
    calibration: float


class ShockwaveJobPlan(_ShockwaveJobPlanRequired, total=False):
    estimate_s: float


class _ShockwaveJobPredictionRequired(TypedDict):
    id: int
    remaining_s: float
    remaining_std_s: float
    mean_epoch_s: float
    fair_finish_s: float
    calibration: float


class ShockwaveJobPrediction(_ShockwaveJobPredictionRequired, total=False):
    estimate_s: float


class ShockwavePlanRequest(TypedDict, total=False):
    gpus: int
    round: int
    reestimate: bool
    config: "ShockwaveConfig"
    jobs: List["ShockwaveJob"]


class _ShockwavePlanResponseRequired(TypedDict):
    round: int
    window: int
    status: str
    relaxed: bool
    objective: float
    bound: float
    welfare: float
    makespan_s: float
    nodes: int
    rounds: List[List[int]]
    backfill: List[List[int]]
    jobs: List["ShockwaveJobPlan"]


class ShockwavePlanResponse(_ShockwavePlanResponseRequired, total=False):
    pass


class _ShockwavePredictResponseRequired(TypedDict):
    round: int
    jobs: List["ShockwaveJobPrediction"]


class ShockwavePredictResponse(_ShockwavePredictResponseRequired, total=False):
    pass


class ThroughputSpec(TypedDict, total=False):
    round: int
    it_per_s: float
    bs: int


class _WarningRequired(TypedDict):
    field: str
    message: str


class Warning(_WarningRequired, total=False):
    pass
