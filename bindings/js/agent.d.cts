// Type declarations of the CommonJS entry of @orrery/orrery/agent (agent.cjs).
import type * as ESM from './agent.js';
import type { AgentPlan } from './orrery.js';

export declare function esm(): Promise<typeof ESM>;
export declare const TimeShiftAgent: { create(options: ESM.TimeShiftAgentOptions): Promise<ESM.TimeShiftAgent> };
export declare function readPlan(path: string, job?: string): Promise<AgentPlan>;
