// Type declarations of the CommonJS entry of @orrery/orrery (orrery.cjs).
import type * as ESM from './orrery.js';

/** load(source?) of the ES module: a promise of an Orrery. */
export declare function load(source?: string | URL | BufferSource | WebAssembly.Module): Promise<ESM.Orrery>;
/** The whole ES module (OrreryError, TrapError, ...). */
export declare function esm(): Promise<typeof ESM>;
/** Whether e is an error response of the engine (an OrreryError). */
export declare function isOrreryError(e: unknown): e is ESM.OrreryError;
export declare const ABI_VERSION: 1;
export declare const MAX_REQUEST_BYTES: number;
