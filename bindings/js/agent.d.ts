// Type declarations of @orrery/orrery/agent: CASSINI's time-shift agent
// for a training loop.
import type { AgentDecision, AgentPlan, AgentStats, Orrery } from './orrery.js';

/** The plan in a shift file: {period_ms, shift_ms, ...}, or a cassini.link/rank response's entry for job. */
export function readPlan(path: string, job?: string): AgentPlan;

export interface TimeShiftAgentOptions {
  shiftMs?: number;
  periodMs?: number;
  shiftFile?: string;
  job?: string;
  commOffsetMs?: number;
  referenceUnixMs?: number;
  /** 'pad' (the engine's default), 'free' (the paper's rule) or 'elastic' (on the plan's clock, shared by every agent of the same reference). */
  mode?: 'elastic' | 'pad' | 'free';
  threshold?: number;
  cooldownMs?: number;
  orrery?: Orrery;
  /** Milliseconds since the Unix epoch (default Date.now). */
  now?: () => number;
  /** Waits ms milliseconds. */
  sleep?: (ms: number) => Promise<unknown>;
  reloadMs?: number;
}

export class TimeShiftAgent {
  static create(options: TimeShiftAgentOptions): Promise<TimeShiftAgent>;
  constructor(orrery: Orrery, options: TimeShiftAgentOptions);
  plan: AgentPlan;
  wait(): Promise<AgentDecision>;
  communicating(): number;
  stats(): AgentStats;
  close(): object;
}
