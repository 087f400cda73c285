// orrery: the WebAssembly module of orrery (ABI v1) hosted by Node's WASI.
//
//   import { load } from '@orrery/orrery';
//   const orrery = await load('orrery.wasm');
//   const res = orrery.link({ capacity_gbps: 50, jobs: [...] });
//
// The module is a WASI preview 1 reactor built from the Go sources
// (`make wasm`). Every call is synchronous and answers exactly what the Go
// engine's orrery.Handle answers for the same request, byte for byte. An
// Orrery object owns one instance; Node runs JavaScript on one thread, so one
// is enough (use one per worker thread). No dependencies beyond Node >= 20.

import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';

/** The ABI version this package speaks. */
export const ABI_VERSION = 1;

/** wire.MaxRequestBytes: envelopes above it are refused unread. */
export const MAX_REQUEST_BYTES = 64 << 20;

/** Largest block the module allocates (abi.MaxBlock). */
const MAX_BLOCK = 128 << 20;

const OPTIONS_SIZE = 32;
const RESULT_SIZE = 256;

/** Status codes of linkSearch, by number (abi.Code). */
const CODES = ['ok', 'invalid_argument', 'limit_exceeded', 'internal', 'bad_pointer'];

/** The number of a linkSearch mode: 0 exact (the default), 1 paper, -1 unknown. */
function modeNumber(mode = 'exact') {
  if (mode === 'exact' || mode === 0) return 0;
  if (mode === 'paper' || mode === 1) return 1;
  return -1;
}

/** Result statuses of linkSearch, by number (link.Status). */
const STATUSES = ['optimal', 'budget', 'time_limit'];

/**
 * An error of a request: the JSON error object's code ("malformed_json",
 * "invalid_argument", "unknown_op", "limit_exceeded", "internal"), the field
 * it names (a JSON path such as "jobs[1].phases[0].gbps", or "") and the
 * message.
 */
export class OrreryError extends Error {
  constructor(code, field, message) {
    super(field ? `${field}: ${message}` : message);
    this.name = 'OrreryError';
    this.code = code;
    this.field = field || '';
  }
}

/**
 * The module instance trapped or exited (a search that needed more memory
 * than a 32-bit memory holds, or a bug). The instance was replaced; the
 * call that caused it has no answer.
 */
export class TrapError extends Error {
  constructor(cause) {
    super(`orrery: the module instance trapped: ${cause && cause.message ? cause.message : cause}`, { cause });
    this.name = 'TrapError';
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Compiles the module and starts an instance. source is a file path or URL,
 * the module's bytes, or a compiled WebAssembly.Module.
 * @returns {Promise<Orrery>}
 */
export async function load(source) {
  let module = source;
  if (!(source instanceof WebAssembly.Module)) {
    const bytes = typeof source === 'string' || source instanceof URL ? await readFile(source) : source;
    module = await WebAssembly.compile(bytes);
  }
  return new Orrery(module);
}

/** One instance of the module. Create it with load(). */
export class Orrery {
  #module;
  #exports;
  #req = { ptr: 0, size: 0 };
  #fast = { ptr: 0, size: 0 };

  /** @param {WebAssembly.Module} module */
  constructor(module) {
    this.#module = module;
    this.#start();
  }

  #start() {
    const wasi = new WASI({ version: 'preview1', args: [], env: {}, returnOnExit: true });
    const instance = new WebAssembly.Instance(this.#module, wasi.getImportObject());
    wasi.initialize(instance);
    const x = instance.exports;
    for (const name of ['abi_version', 'alloc', 'free', 'call', 'link_search', 'memory']) {
      if (!(name in x)) throw new Error(`orrery: not an orrery module: no export ${name}`);
    }
    const v = x.abi_version();
    if (v !== ABI_VERSION) throw new Error(`orrery: module speaks ABI ${v}, this package ${ABI_VERSION}`);
    this.#exports = x;
    this.#req = { ptr: 0, size: 0 };
    this.#fast = { ptr: 0, size: 0 };
  }

  /** Runs fn against the exports; a trap replaces the instance. */
  #guard(fn) {
    try {
      return fn(this.#exports);
    } catch (err) {
      if (err instanceof OrreryError) throw err;
      this.#start();
      throw new TrapError(err);
    }
  }

  /** The module's ABI version (1). */
  get abiVersion() {
    return this.#guard((x) => x.abi_version());
  }

  /** Makes block b at least n bytes; false if the module refuses. */
  #ensure(x, b, n) {
    if (n <= b.size) return true;
    if (n > MAX_BLOCK) return false;
    const size = Math.min(Math.max(n, 2 * b.size, 4096), MAX_BLOCK);
    if (b.ptr !== 0) x.free(b.ptr);
    b.ptr = 0;
    b.size = 0;
    const p = x.alloc(size) >>> 0;
    if (p === 0) return false;
    b.ptr = p;
    b.size = size;
    return true;
  }

  /**
   * Runs a request envelope ({"op": ..., "request": {...}}, as bytes) and
   * returns the response envelope's bytes: exactly what orrery.Handle returns.
   * @param {Uint8Array} envelope
   * @returns {Uint8Array}
   */
  handleBytes(envelope) {
    if (envelope.length > MAX_REQUEST_BYTES) {
      return encoder.encode(
        `{"version":1,"error":{"code":"limit_exceeded","message":"request is ${envelope.length} bytes, above the ${MAX_REQUEST_BYTES} byte limit"}}`,
      );
    }
    return this.#guard((x) => {
      let ptr = 0;
      if (envelope.length > 0) {
        if (!this.#ensure(x, this.#req, envelope.length)) {
          throw new OrreryError('limit_exceeded', '', `the module refused a ${envelope.length}-byte block`);
        }
        ptr = this.#req.ptr;
        new Uint8Array(x.memory.buffer, ptr, envelope.length).set(envelope);
      }
      const r = x.call(ptr, envelope.length);
      const rp = Number(BigInt.asUintN(64, r) >> 32n);
      const rl = Number(BigInt.asUintN(32, r));
      return new Uint8Array(x.memory.buffer, rp, rl).slice();
    });
  }

  /**
   * Like handleBytes, on text: the envelope as a string (or bytes), the
   * response envelope as a string.
   * @param {string | Uint8Array} envelope
   * @returns {string}
   */
  handle(envelope) {
    const bytes = typeof envelope === 'string' ? encoder.encode(envelope) : envelope;
    return decoder.decode(this.handleBytes(bytes));
  }

  /**
   * Runs op on a request (an object, encoded as JSON, or JSON text) and
   * returns the decoded response; throws OrreryError for an error response.
   * Works for every operation of the schema, including ones added later.
   */
  call(op, request) {
    const body = typeof request === 'string' ? request : JSON.stringify(request);
    const reply = JSON.parse(this.handle(`{"op":${JSON.stringify(op)},"request":${body}}`));
    if (reply.error) throw new OrreryError(reply.error.code, reply.error.field, reply.error.message);
    return reply.response;
  }

  /** "cassini.link": the best rotation of the jobs sharing one link. */
  link(request) {
    return this.call('cassini.link', request);
  }

  /** "cassini.rank": placement candidates ranked by their links' compatibility. */
  rank(request) {
    return this.call('cassini.rank', request);
  }

  /** "shockwave.plan": the next rounds of a GPU cluster from Shockwave's market. */
  plan(request) {
    return this.call('shockwave.plan', request);
  }

  /** "shockwave.predict": every job's remaining runtime, mean epoch and fair finish time, without a plan. */
  predict(request) {
    return this.call('shockwave.predict', request);
  }

  /**
   * The flat fast path of cassini.link on quantized profiles (link_search):
   * periods in ticks, demands in units (all jobs' per-tick demands,
   * concatenated), capacity in units. Throws OrreryError on bad input.
   */
  linkSearch({ periods, demand, capacity, fixed = null, options = {} }) {
    const k = periods.length;
    const nf = fixed ? k : 0;
    if (fixed && fixed.length !== k) {
      throw new OrreryError('invalid_argument', 'fixed', `${fixed.length} entries for ${k} jobs`);
    }
    let total = 0;
    for (let j = 0; j < k; j++) total += Math.max(0, periods[j] | 0);
    if (demand.length !== total) {
      throw new OrreryError('invalid_argument', 'demand', `${demand.length} demands for periods summing to ${total} ticks`);
    }
    const periodsAt = OPTIONS_SIZE + RESULT_SIZE;
    const fixedAt = periodsAt + 4 * k;
    const shiftsAt = fixedAt + 4 * nf;
    const demandAt = shiftsAt + 4 * k;
    const size = demandAt + 4 * total;
    if (size > MAX_BLOCK) {
      throw new OrreryError('limit_exceeded', '', `${k} jobs with periods summing to ${total} ticks do not fit in a ${MAX_BLOCK}-byte block`);
    }
    return this.#guard((x) => {
      if (!this.#ensure(x, this.#fast, size)) {
        throw new OrreryError('limit_exceeded', '', `the module refused a ${size}-byte block`);
      }
      const base = this.#fast.ptr;
      const view = new DataView(x.memory.buffer, base, size);
      view.setInt32(0, modeNumber(options.mode), true);
      view.setInt32(4, options.maxPerimeter ?? 0, true);
      view.setInt32(8, options.roundPeriods ? 1 : 0, true);
      view.setInt32(12, options.restarts ?? 0, true);
      view.setBigInt64(16, BigInt(options.budget ?? 0), true);
      view.setBigUint64(24, BigInt.asUintN(64, BigInt(options.seed ?? 0)), true);
      const i32 = new Int32Array(x.memory.buffer, base + periodsAt, (size - periodsAt) / 4);
      i32.set(periods, 0);
      if (fixed) i32.set(fixed, k);
      i32.set(demand, (demandAt - periodsAt) / 4);
      const code = x.link_search(k, base + periodsAt, base + demandAt, capacity | 0, fixed ? base + fixedAt : 0,
        base, base + shiftsAt, base + OPTIONS_SIZE);
      const res = new DataView(x.memory.buffer, base + OPTIONS_SIZE, RESULT_SIZE);
      if (code !== 0) {
        const msg = new Uint8Array(x.memory.buffer, base + OPTIONS_SIZE + 56, 200);
        const end = msg.indexOf(0);
        throw new OrreryError(CODES[code] ?? `code ${code}`, '', decoder.decode(msg.subarray(0, end < 0 ? 200 : end)));
      }
      return {
        shifts: new Int32Array(x.memory.buffer, base + shiftsAt, k).slice(),
        status: STATUSES[res.getInt32(0, true)] ?? 'unknown',
        points: res.getInt32(4, true),
        perimeter: res.getInt32(8, true),
        grid: res.getInt32(12, true),
        excess: res.getBigInt64(16, true),
        evaluations: res.getBigInt64(24, true),
        score: res.getFloat64(32, true),
        bound: res.getFloat64(40, true),
        unshifted: res.getFloat64(48, true),
      };
    });
  }
}
