// CASSINI's time-shift agent for a JavaScript training loop (a Node
// worker driving TensorFlow.js, or a loop that drives a trainer by IPC).
//
//   import { TimeShiftAgent } from '@orrery/orrery/agent';
//   const agent = await TimeShiftAgent.create({ shiftFile: 'shift.json', job: 'resnet-1' });
//   for (;;) { await agent.wait(); step(); }     // agent.communicating() when the all-reduce starts
//
// wait() asks the Go agent (engine/cassini/agent, through "cassini.agent.next")
// when the next iteration starts and sleeps until then; the decisions are
// the Go agent's. Slots are reference + shift + n·period on Date.now()'s
// clock, so the jobs sharing a link need synchronized clocks. The shift
// comes from options (shiftMs, periodMs) or from a JSON file the
// scheduler writes and may rewrite: {"period_ms", "shift_ms",
// "comm_offset_ms"?, "reference_unix_ms"?} or a cassini.link/rank response
// ({"shifts_ms", "periods_ms", "comm_offsets_ms"}) with job naming this job.
//
// comm_offset_ms is where the job's communication starts in its iteration:
// the angle communicating() measures drift from. The responses carry it;
// without it the drift is measured from the iteration's start (a job whose
// all-reduce starts 34 ms in reports a 34 ms drift every iteration), and
// the first communicating() warns (process.emitWarning).
//
// Modes: 'pad' (the engine's default when mode is absent) starts every
// iteration on its slot of a fixed period; 'free' is the paper's rule;
// 'elastic' holds the job's phase on the plan's clock, which every agent
// built from the same plan (reference_unix_ms) shares without sharing
// memory, with the plan's slack_ms and, given free_comm_ms, the give-up.

import { readFileSync, statSync } from 'node:fs';
import { setTimeout as sleepMs } from 'node:timers/promises';
import { load } from './orrery.js';

const NO_OFFSET =
  "the plan has no comm_offset_ms, so communicating() measures drift from the start of the iteration (a job whose all-reduce starts 34 ms in reports a 34 ms drift every iteration). Give commOffsetMs (where the job's communication starts in its iteration, in ms), or a shift file that is a cassini.link or cassini.rank response: they carry comm_offsets_ms.";

/** The plan (period_ms, shift_ms, and comm_offset_ms when the file has it) in a shift file. */
export function readPlan(path, job) {
  const doc = JSON.parse(readFileSync(path, 'utf8'));
  if (doc.shifts_ms) {
    if (job === undefined) throw new Error(`${path} holds the shifts of several jobs: name this one (job)`);
    if (!(job in doc.shifts_ms) || !(job in (doc.periods_ms ?? {}))) throw new Error(`${path} has no shift or period for job ${job}`);
    const plan = { period_ms: doc.periods_ms[job], shift_ms: doc.shifts_ms[job] };
    if (doc.comm_offsets_ms && job in doc.comm_offsets_ms) plan.comm_offset_ms = doc.comm_offsets_ms[job];
    return plan;
  }
  if (doc.period_ms === undefined || doc.shift_ms === undefined) throw new Error(`${path}: want period_ms and shift_ms`);
  const plan = {};
  for (const k of ['period_ms', 'shift_ms', 'comm_offset_ms', 'reference_unix_ms']) if (k in doc) plan[k] = doc[k];
  return plan;
}

export class TimeShiftAgent {
  #agent;
  #file;
  #job;
  #mtime = 0;
  #checked = 0;
  #reloadMs;
  #now;
  #sleep;
  #offset;
  #warned = false;

  /**
   * options: shiftMs and periodMs, or shiftFile (and job); commOffsetMs
   * (default: the shift file's), referenceUnixMs (default 0, the Unix
   * epoch), mode ('pad', the engine's default, 'free' or 'elastic'),
   * threshold, cooldownMs; orrery (an Orrery; default: load()); now (ms)
   * and sleep (ms, returns a promise), injectable for tests; reloadMs.
   */
  static async create(options) {
    const orrery = options.orrery ?? (await load());
    return new TimeShiftAgent(orrery, options);
  }

  constructor(orrery, { shiftMs, periodMs, shiftFile, job, commOffsetMs, referenceUnixMs = 0, mode, threshold, cooldownMs,
    now = Date.now, sleep = sleepMs, reloadMs = 1000 } = {}) {
    this.#file = shiftFile;
    this.#job = job;
    this.#now = now;
    this.#sleep = sleep;
    this.#reloadMs = reloadMs;
    this.#offset = commOffsetMs;
    let plan;
    if (shiftFile !== undefined) {
      plan = readPlan(shiftFile, job);
      this.#mtime = statSync(shiftFile).mtimeMs;
      this.#checked = now();
    } else {
      if (shiftMs === undefined || periodMs === undefined) throw new Error('give shiftMs and periodMs, or a shiftFile');
      plan = { period_ms: periodMs, shift_ms: shiftMs, reference_unix_ms: referenceUnixMs };
    }
    plan = this.#withOffset(plan);
    this.plan = plan;
    const req = { ...plan };
    if (mode !== undefined) req.mode = mode;
    if (threshold) req.threshold = threshold;
    if (cooldownMs) req.cooldown_ms = cooldownMs;
    this.#agent = orrery.newAgent(req);
  }

  #maybeReload() {
    if (this.#file === undefined || this.#now() - this.#checked < this.#reloadMs) return;
    this.#checked = this.#now();
    let mtime;
    try {
      mtime = statSync(this.#file).mtimeMs;
    } catch {
      return; // keep the plan while the scheduler rewrites the file
    }
    if (mtime === this.#mtime) return;
    const plan = this.#withOffset(readPlan(this.#file, this.#job));
    this.#mtime = mtime;
    if (JSON.stringify(plan) !== JSON.stringify(this.plan)) {
      this.#agent.setPlan(plan);
      this.plan = plan;
    }
  }

  /** plan with the constructor's comm offset, if any (it wins over the file's). */
  #withOffset(plan) {
    return this.#offset === undefined ? plan : { ...plan, comm_offset_ms: this.#offset };
  }

  /** Sleeps until the next iteration's slot; resolves to the decision. */
  async wait() {
    this.#maybeReload();
    const d = this.#agent.next(this.#now());
    if (d.delay_ms > 0) await this.#sleep(d.delay_ms);
    return d;
  }

  /** This iteration's communication starts now; returns its drift (ms). */
  communicating() {
    if (!('comm_offset_ms' in this.plan) && !this.#warned) {
      this.#warned = true;
      process.emitWarning(NO_OFFSET, { code: 'ORRERY_NO_COMM_OFFSET' });
    }
    return this.#agent.communicating(this.#now());
  }

  stats() {
    return this.#agent.stats();
  }

  close() {
    return this.#agent.close();
  }
}
