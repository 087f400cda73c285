// Type declarations of @orrery/orrery: orrery's WebAssembly module (ABI v1)
// hosted by node:wasi. The request and response types mirror the Go
// package orrery (the repository root; schema v1); field comments are brief, the Go docs
// are the reference.

/** The ABI version this package speaks. */
export const ABI_VERSION: 1;

/** Envelopes above this many bytes are refused unread (wire.MaxRequestBytes). */
export const MAX_REQUEST_BYTES: number;

/** Error codes of the JSON error object (and of linkSearch). */
export type ErrorCode =
  | 'malformed_json'
  | 'invalid_argument'
  | 'unknown_op'
  | 'limit_exceeded'
  | 'internal'
  | 'bad_pointer';

/** An error response: code, the JSON path of the field it concerns ("" if none), message. */
export class OrreryError extends Error {
  readonly code: ErrorCode;
  readonly field: string;
}

/** The instance trapped (out of memory, or a bug) and was replaced; the call has no answer. */
export class TrapError extends Error {}

/** The orrery.wasm this package carries. */
export const MODULE_URL: URL;

/**
 * Compiles the module (a path, URL, bytes or compiled module; by default
 * ORRERY_WASM's file, else MODULE_URL) and starts an instance.
 */
export function load(source?: string | URL | BufferSource | WebAssembly.Module): Promise<Orrery>;

/** The SIMD kernel module this package carries (kernels.wasm), which the module imports as "orrery_kernels". */
export const KERNELS_URL: URL;

/** One instance of the module; every method is synchronous. */
export class Orrery {
  /** kernels: the compiled kernel module (default: KERNELS_URL's), used when module imports its kernels. */
  constructor(module: WebAssembly.Module, kernels?: WebAssembly.Module);
  readonly abiVersion: number;
  /** The response envelope's bytes for a request envelope's bytes: exactly orrery.Handle's. */
  handleBytes(envelope: Uint8Array): Uint8Array;
  /** handleBytes on text. */
  handle(envelope: string | Uint8Array): string;
  /** Runs op; returns the decoded response or throws OrreryError. */
  call<Resp = unknown>(op: string, request: object | string): Resp;
  link(request: LinkRequest): LinkResponse;
  rank(request: RankRequest): RankResponse;
  /** "cassini.profile": a job's quantized iteration; the period found in a series or events. */
  profile(request: ProfileRequest): ProfileResponse;
  plan(request: PlanRequest): PlanResponse;
  /** "shockwave.predict": every job's predictions, without a plan. */
  predict(request: PlanRequest): PredictResponse;
  /** The flat fast path of cassini.link on quantized profiles. */
  linkSearch(input: LinkSearchInput): LinkSearchResult;
  /** "cassini.agent.new": CASSINI's time-shift agent for one job, in this instance. */
  newAgent(plan: AgentNewRequest): Agent;
  /** "shockwave.scheduler.new": Shockwave's incremental scheduler in this instance. */
  newScheduler(gpus: number, config?: SchedulerConfig): Scheduler;
}

/** A job id of the stateful scheduler: an integer or a non-empty string (one kind per scheduler). */
/**
 * A job's id in the stateful operations: an integer or a non-empty string.
 * Integers outside ±Number.MAX_SAFE_INTEGER are BigInt, both ways: pass
 * one as a BigInt, and every id the module answers past that range comes
 * back as one (a number there would round: 2^53 + 1 is 2^53). Ids within
 * it are numbers.
 */
export type JobId = number | bigint | string;

/** shockwave.plan's configuration, with the scheduler's periodic re-plan. */
export interface SchedulerConfig extends PlanConfig {
  /** Re-plan every this many rounds (default 8). */
  reopt_rounds?: number;
}

/** A job of the stateful scheduler: shockwave.plan's job with an integer or string id. */
export interface SchedulerJob extends Omit<PlanJob, 'id'> {
  id: JobId;
}

/** What a call that changes a scheduler answers: its round and active jobs afterwards. */
export interface SchedulerState {
  round: number;
  active: number;
}

/** shockwave.plan's response with the scheduler's ids. */
export interface SchedulerPlan extends Omit<PlanResponse, 'rounds' | 'backfill' | 'jobs'> {
  rounds: JobId[][];
  backfill: JobId[][];
  jobs: (Omit<PlanResponse['jobs'][number], 'id'> & { id: JobId })[];
}

/** Shockwave's incremental round scheduler behind a handle (Go's orrery.Scheduler). */
export class Scheduler {
  readonly handle: number;
  /** add_metadata: admit a job; the next schedule re-plans. */
  add(job: SchedulerJob): SchedulerState;
  /** remove_metadata: retire a job. */
  remove(id: JobId): SchedulerState;
  /** schedule_progress: a job's completed epochs. */
  progress(id: JobId, epochs: number): SchedulerState;
  /** A job's measured throughput, for calibration. */
  observe(id: JobId, sample: { round: number; it_per_s: number; bs: number }): SchedulerState;
  /** increment_round_ptr: returns the new round. */
  endRound(): number;
  /** set_resolve: re-plan at the next schedule (with reopt_rounds -1, the caller decides when). */
  resolve(): SchedulerState;
  /** round_schedule: the ids to run in the current round, planned ones first. */
  schedule(): JobId[];
  /** The most recent plan, or null before the first. */
  lastPlan(): SchedulerPlan | null;
  /** Release the handle. */
  close(): SchedulerState;
}

// ---- cassini.link and cassini.rank

export interface Phase {
  ms: number;
  gbps: number;
}

export interface Job {
  id: string;
  /** Iteration time; must equal the phases' sum when given. */
  period_ms?: number;
  phases?: Phase[];
  samples?: { interval_ms: number; gbps: number[] };
  /** A long measured record: the iteration is found in it. */
  series?: SeriesSource;
  /** Communication events: binned, then profiled as a series. */
  events?: EventsSource;
}

/** Options of the period search of a series or events. */
export interface PeriodSearch {
  min_period_ms?: number;
  max_period_ms?: number;
  /** Least correlation of consecutive iterations (default 0.5). */
  min_quality?: number;
}

export interface SeriesSource extends PeriodSearch {
  interval_ms: number;
  gbps: number[];
}

export interface EventsSource extends PeriodSearch {
  /** Bin width. */
  interval_ms: number;
  at_ms: number[];
  bytes: number[];
  /** Each event's duration; absent: unknown. */
  duration_ms?: number[];
}

export interface ProfileRequest extends SearchOptions {
  job: Job;
}

export interface ProfileResponse {
  id: string;
  period_ms: number;
  peak_gbps: number;
  mean_gbps: number;
  /** The quantized iteration, one value per tick: a Job's samples. */
  samples: { interval_ms: number; gbps: number[] };
  /** For a series or events: the period found and how well the record repeats it. */
  fit?: { period_ms: number; quality: number; explained: number; iterations: number };
  warnings?: Warning[];
}

/** Options every CASSINI request shares; absent means the default. */
export interface SearchOptions {
  tick_ms?: number;
  unit_mbps?: number;
  mode?: 'exact' | 'paper';
  max_perimeter_ticks?: number;
  round_periods?: boolean;
  /** Pair evaluations per link search (default 2^26, -1 unlimited): the reproducible way to bound a search. */
  budget?: number;
  restarts?: number;
  seed?: number;
  /** Wall-clock limit; results then depend on the host's speed. Prefer budget. */
  time_limit_ms?: number;
}

export interface LinkRequest extends SearchOptions {
  capacity_gbps: number;
  jobs: Job[];
}

export type Status = 'optimal' | 'budget' | 'time_limit';

export interface LinkResponse {
  score: number;
  unshifted_score: number;
  bound: number;
  status: Status;
  mode: 'exact' | 'paper';
  excess_gbit: number;
  perimeter_ms: number;
  points: number;
  shifts_ms: Record<string, number>;
  rotations_deg: Record<string, number>;
  periods_ms: Record<string, number>;
  /** Where each job's communication starts in its iteration: its agent's comm_offset_ms. */
  comm_offsets_ms: Record<string, number>;
  grid_ms?: number;
  score_periods?: 'rounded';
  unrounded_score?: number;
  unrounded_excess_gbit?: number;
  unrounded_perimeter_ms?: number;
  /** The shifts to hold: each centred in the range the link tolerates (shifts_ms is its edge). */
  centred_shifts_ms: Record<string, number>;
  /** Each job's room around its centred shift; an agent's slack is late_ms. */
  shift_room_ms: Record<string, ShiftRoom>;
  evaluations: number;
  /** Values the call accepted but changed or doubts; absent when none. */
  warnings?: Warning[];
}

/**
 * A value a call accepted but that is likely a mistake or that it changed:
 * a period rounded up to whole ticks, an iteration of few ticks (seconds
 * typed as milliseconds?), a phase under a tick, a demand above the link.
 */
export interface Warning {
  /** The value's JSON path in the request. */
  field: string;
  /** What happened to it, with its unit. */
  message: string;
}

export interface ShiftRoom {
  early_ms: number;
  late_ms: number;
  partial?: boolean;
}

export interface RankRequest extends SearchOptions {
  links: { id: string; capacity_gbps: number }[];
  jobs: Job[];
  candidates: { id: string; paths: Record<string, string[]> }[];
  aggregate?: 'mean' | 'min';
  loops?: 'resolve' | 'paper' | 'reoptimize';
  workers?: number;
}

export interface CandidateResult {
  id: string;
  score: number;
  status: Status | '';
  discarded: boolean;
  reason?: string;
  links?: { id: string; jobs: string[]; score: number }[];
  shifts_ms?: Record<string, number>;
  grid_ms?: number;
}

export interface RankResponse {
  best: string | null;
  shifts_ms: Record<string, number> | null;
  ranking: string[];
  candidates: CandidateResult[];
  periods_ms: Record<string, number>;
  /** Where each job's communication starts in its iteration: its agent's comm_offset_ms. */
  comm_offsets_ms: Record<string, number>;
  searches: number;
  centred_shifts_ms?: Record<string, number>;
  shift_room_ms?: Record<string, ShiftRoom>;
  warnings?: Warning[];
}

// ---- shockwave.plan

export interface PlanConfig {
  rounds?: number;
  round_s?: number;
  k?: number;
  lambda?: number;
  rho_max?: number;
  breakpoints?: number[];
  log_zero?: number;
  urgent_power?: number;
  log?: 'piecewise' | 'exact';
  no_relax?: boolean;
  gap?: number;
  max_nodes?: number;
  estimator?: 'faithful' | 'posterior' | 'oracle';
  prior_strength?: number;
  momentum?: number;
  tolerance?: number;
  time_limit_ms?: number;
}

export interface PlanJob {
  /** An integer; past ±Number.MAX_SAFE_INTEGER a BigInt (see JobId). */
  id: number | bigint;
  gpus: number;
  submit_s: number;
  epochs?: number;
  progress: number;
  epoch_bs?: number[];
  epoch_dur_s?: number[];
  modes?: number[];
  mode_dur_s?: number[];
  profiled_dur_s?: number[];
  samples_per_epoch?: number;
  timeline?: { round: number; it_per_s: number; bs: number }[];
  finish?: { round: number; estimate_s: number }[];
  known?: { remaining_s: number; mean_epoch_s: number; elapsed_s?: number; fair_finish_s?: number };
}

export interface PlanRequest {
  gpus: number;
  round: number;
  reestimate?: boolean;
  config?: PlanConfig;
  jobs: PlanJob[];
}

export interface PlanResponse {
  round: number;
  window: number;
  status: 'optimal' | 'feasible' | 'infeasible';
  relaxed: boolean;
  objective: number;
  bound: number;
  welfare: number;
  makespan_s: number;
  nodes: number;
  rounds: (number | bigint)[][];
  backfill: (number | bigint)[][];
  jobs: (JobPrediction & { rounds: number; epochs: number; priority: number })[];
}

// ---- shockwave.predict (the same request as shockwave.plan)

/** What the planner predicts for one job. */
export interface JobPrediction {
  id: number | bigint;
  remaining_s: number;
  remaining_std_s: number;
  mean_epoch_s: number;
  fair_finish_s: number;
  /** This round's finish-time estimate: append it to the job's finish history. */
  estimate_s?: number;
  calibration: number;
}

export interface PredictResponse {
  round: number;
  /** In request order. */
  jobs: JobPrediction[];
}

// ---- the flat fast path

export interface LinkSearchInput {
  /** Each job's iteration time, ticks. */
  periods: ArrayLike<number>;
  /** Every job's per-tick demand in units, concatenated (sum of periods values). */
  demand: ArrayLike<number>;
  /** The link's capacity, units. */
  capacity: number;
  /** A shift per job that must be kept, or -1 for a job the search may move. */
  fixed?: ArrayLike<number> | null;
  options?: {
    mode?: 'exact' | 'paper' | 0 | 1;
    maxPerimeter?: number;
    roundPeriods?: boolean;
    restarts?: number;
    budget?: number | bigint;
    seed?: number | bigint;
  };
}

export interface LinkSearchResult {
  /** Each job's delay, ticks, in [0, period). */
  shifts: Int32Array;
  status: Status;
  points: number;
  perimeter: number;
  grid: number;
  excess: bigint;
  evaluations: bigint;
  score: number;
  bound: number;
  unshifted: number;
}

// ---- the time-shift agent (cassini.agent.*)

/** Where a job's iterations belong: iteration n starts at reference + shift + n·period (ms). */
export interface AgentPlan {
  period_ms: number;
  shift_ms: number;
  comm_offset_ms?: number;
  /** 0 (the default) is the Unix epoch, which synchronized clocks share. */
  reference_unix_ms?: number;
  /** Elastic: how late the job may start (the room's late_ms). */
  slack_ms?: number;
  /** Elastic: communication time without the shift; 0 never gives up. */
  free_comm_ms?: number;
}

export interface AgentNewRequest extends AgentPlan {
  /** 'pad' (the default), 'free' (the paper's rule) or 'elastic': on the plan's clock, shared with every agent of the same reference. */
  mode?: 'pad' | 'free' | 'elastic';
  threshold?: number;
  cooldown_ms?: number;
  give_up?: 'group' | 'own';
}

export interface AgentDecision {
  start_unix_ms: number;
  delay_ms: number;
  late_ms: number;
  adjusted: boolean;
  /** An elastic agent gave its shift up: the job runs free from now on. */
  released?: boolean;
}

export interface AgentStats {
  iterations: number;
  adjustments: number;
  adjustments_per_minute: number;
  replans: number;
  padding_ms: number;
  adjust_delay_ms: number;
  samples: number;
  over_threshold: number;
  mean_abs_drift_ms: number;
  max_abs_drift_ms: number;
  last_drift_ms: number;
}

/** CASSINI's time-shift agent behind a handle (the Go engine/cassini/agent). */
export class Agent {
  readonly handle: number;
  next(readyUnixMs: number, commMs?: number): AgentDecision;
  communicating(atUnixMs: number): number;
  setPlan(plan: AgentPlan): object;
  stats(): AgentStats;
  close(): object;
}
