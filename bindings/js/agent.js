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
// ({"shifts_ms", "periods_ms"}) with job naming this job.

import { readFileSync, statSync } from 'node:fs';
import { setTimeout as sleepMs } from 'node:timers/promises';
import { load } from './orrery.js';

/** The plan (period_ms, shift_ms, ...) in a shift file. */
export function readPlan(path, job) {
  const doc = JSON.parse(readFileSync(path, 'utf8'));
  if (doc.shifts_ms) {
    if (job === undefined) throw new Error(`${path} holds the shifts of several jobs: name this one (job)`);
    if (!(job in doc.shifts_ms) || !(job in (doc.periods_ms ?? {}))) throw new Error(`${path} has no shift or period for job ${job}`);
    return { period_ms: doc.periods_ms[job], shift_ms: doc.shifts_ms[job] };
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

  /**
   * options: shiftMs and periodMs, or shiftFile (and job); commOffsetMs,
   * referenceUnixMs (default 0, the Unix epoch), mode ('pad' or 'free'),
   * threshold, cooldownMs; orrery (an Orrery; default: load()); now (ms)
   * and sleep (ms, returns a promise), injectable for tests; reloadMs.
   */
  static async create(options) {
    const orrery = options.orrery ?? (await load());
    return new TimeShiftAgent(orrery, options);
  }

  constructor(orrery, { shiftMs, periodMs, shiftFile, job, commOffsetMs = 0, referenceUnixMs = 0, mode = 'pad', threshold, cooldownMs,
    now = Date.now, sleep = sleepMs, reloadMs = 1000 } = {}) {
    this.#file = shiftFile;
    this.#job = job;
    this.#now = now;
    this.#sleep = sleep;
    this.#reloadMs = reloadMs;
    let plan;
    if (shiftFile !== undefined) {
      plan = readPlan(shiftFile, job);
      this.#mtime = statSync(shiftFile).mtimeMs;
      this.#checked = now();
    } else {
      if (shiftMs === undefined || periodMs === undefined) throw new Error('give shiftMs and periodMs, or a shiftFile');
      plan = { period_ms: periodMs, shift_ms: shiftMs, comm_offset_ms: commOffsetMs, reference_unix_ms: referenceUnixMs };
    }
    this.plan = plan;
    const req = { ...plan, mode };
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
    const plan = readPlan(this.#file, this.#job);
    this.#mtime = mtime;
    if (JSON.stringify(plan) !== JSON.stringify(this.plan)) {
      this.#agent.setPlan(plan);
      this.plan = plan;
    }
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
    return this.#agent.communicating(this.#now());
  }

  stats() {
    return this.#agent.stats();
  }

  close() {
    return this.#agent.close();
  }
}
