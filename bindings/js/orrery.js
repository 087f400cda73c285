// orrery: the WebAssembly module of orrery (ABI v1) hosted by Node's WASI.
//
//   import { load } from '@orrery/orrery';
//   const orrery = await load();          // the orrery.wasm of this package
//   const res = orrery.link({ capacity_gbps: 50, jobs: [...] });
//   const s = orrery.newScheduler(32);    // Shockwave's incremental scheduler
//
// The module is a WASI preview 1 reactor built from the Go sources
// (`make wasm`). Every call is synchronous and answers exactly what the Go
// engine's orrery.Handle answers for the same request, byte for byte. An
// Orrery object owns one instance; Node runs JavaScript on one thread, so one
// is enough (use one per worker thread). No dependencies beyond Node >= 20.
//
// This file is an ES module without top-level await; CommonJS code gets
// load() from orrery.cjs (require('@orrery/orrery'), see README.md).

import { randomFillSync } from 'node:crypto';
import { readFileSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

/**
 * Runs fn without the ExperimentalWarning node prints for WASI: node:wasi
 * is what this package is built on, and the warning says nothing a user of
 * orrery can act on. Other warnings pass.
 */
function withoutWASIWarning(fn) {
  const emit = process.emitWarning;
  process.emitWarning = function (warning, ...rest) {
    const type = typeof rest[0] === 'string' ? rest[0] : rest[0]?.type;
    if (type === 'ExperimentalWarning' && String(warning).includes('WASI')) return undefined;
    return emit.call(this, warning, ...rest);
  };
  try {
    return fn();
  } finally {
    process.emitWarning = emit;
  }
}

// Node warns when node:wasi is first loaded (Node 20-22). Loaded with a
// synchronous require, not a top-level await import, so that require() of
// this module works where Node supports it.
const { WASI } = withoutWASIWarning(() => createRequire(import.meta.url)('node:wasi'));

/**
 * The JSON path and value of the first number of value that JSON cannot
 * carry (NaN, an infinity), or null: JSON.stringify would write it as
 * null, and the engine would refuse "null is not a value" without saying
 * which number was wrong.
 */
function nonFinite(value, path = '') {
  if (typeof value === 'number') return Number.isFinite(value) ? null : { path, value };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nonFinite(value[i], `${path}[${i}]`);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object' && typeof value.toJSON !== 'function') {
    for (const k of Object.keys(value)) {
      const found = nonFinite(value[k], path ? `${path}.${k}` : k);
      if (found) return found;
    }
  }
  return null;
}

/** A replacer for JSON.stringify that stops at a number JSON cannot carry. */
function finiteOnly(key, value) {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError('non-finite');
  return value;
}

/**
 * request as JSON text; a NaN or an infinity is an OrreryError naming its
 * field ("jobs[0].phases[1].gbps").
 */
function encode(request) {
  if (typeof request === 'string') return request;
  try {
    try {
      return JSON.stringify(request, finiteOnly);
    } catch (e) {
      if (!(e instanceof TypeError)) throw e;
      return withBigInts(request); // JSON.stringify refuses a BigInt
    }
  } catch (e) {
    const found = e instanceof RangeError && e.message === 'non-finite' ? nonFinite(request) : null;
    if (!found) throw e;
    throw new OrreryError('invalid_argument', found.path, `${found.value} is not a finite number (JSON has no NaN or infinity)`);
  }
}

/** The ABI version this package speaks. */
export const ABI_VERSION = 1;

/** orrery.MaxRequestBytes: envelopes above it are refused unread. */
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

/** The module this package carries (npm pack puts it next to this file). */
export const MODULE_URL = new URL('./orrery.wasm', import.meta.url);

/**
 * The SIMD kernel module this package carries (kernels.wasm, assembled from
 * kernels.wat): excess, rotations, excess_slack, add_rotated, fold_delta,
 * residues, windows, place and below in WebAssembly (SIMD where it pays), the imports
 * "orrery_kernels" of the module (package kernels of the Go
 * sources documents them), run on the module's own memory.
 */
export const KERNELS_URL = new URL('./kernels.wasm', import.meta.url);

/** The compiled kernel module, compiled on first use. */
let kernelsModule = null;

/** The namespace under which the module imports its kernels. */
const KERNELS_NAMESPACE = 'orrery_kernels';

/** Whether module imports its kernels (a build without the purego tag). */
function importsKernels(module) {
  return WebAssembly.Module.imports(module).some((i) => i.module === KERNELS_NAMESPACE);
}

/**
 * Compiles the module and starts an instance. source is a file path or URL,
 * the module's bytes, or a compiled WebAssembly.Module; by default the
 * ORRERY_WASM environment variable's file, else the orrery.wasm this
 * package carries.
 * @returns {Promise<Orrery>}
 */
export async function load(source = process.env.ORRERY_WASM || MODULE_URL) {
  let module = source;
  if (!(source instanceof WebAssembly.Module)) {
    let bytes = source;
    if (typeof source === 'string' || source instanceof URL) {
      try {
        bytes = await readFile(source);
      } catch (err) {
        if (err.code !== 'ENOENT') throw err;
        throw new Error(`orrery: no module at ${source instanceof URL ? source.pathname : source}: ` +
          'build it with `make wasm` (or `npm pack` in bindings/js, which builds it into the package), ' +
          'or pass its path to load()', { cause: err });
      }
    }
    module = await WebAssembly.compile(bytes);
  }
  return new Orrery(module);
}

// WASI errno values (wasi_snapshot_preview1).
const ERRNO_SUCCESS = 0;
const ERRNO_BADF = 8;
const ERRNO_INVAL = 28;

// poll_oneoff's records: a subscription is 48 bytes (userdata u64, tag u8
// at 8, then the clock's id u32 at 16, timeout u64 at 24, flags u16 at 40,
// or the fd's number u32 at 16), an event 32 (userdata u64, errno u16 at 8,
// type u8 at 10, fd_readwrite nbytes u64 at 16).
const SUBSCRIPTION_SIZE = 48;
const EVENT_SIZE = 32;
const EVENTTYPE_CLOCK = 0;
const SUBCLOCKFLAG_ABSTIME = 1;

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function clockNow(id) {
  if (id === 0) return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
  if (id === 1) return process.hrtime.bigint();
  return -1n;
}

/**
 * The WASI imports the module can call after start-up that write into its
 * memory, answered here through a view of memory taken at each call.
 *
 * node:wasi keeps the view of the instance's memory it takes in
 * initialize() and does not renew it when memory grows: a later call that
 * writes (a clock reading, a poll's events, a write's byte count) lands in
 * freed memory, and node crashes (SIGSEGV, a V8 check failure) or silently
 * corrupts its own heap. The module's memory grows with large requests, and
 * a request with a time limit reads the clock throughout its search and
 * lets the Go runtime poll for its timer, so none of these may go through
 * node:wasi. The rest (arguments, environment) are read at start-up only.
 */
function memorySafeImports(memory) {
  return {
    clock_time_get(id, _precision, ptr) {
      const ns = clockNow(id);
      if (ns < 0n) return ERRNO_INVAL;
      new DataView(memory().buffer).setBigUint64(ptr >>> 0, ns, true);
      return ERRNO_SUCCESS;
    },
    random_get(ptr, len) {
      randomFillSync(new Uint8Array(memory().buffer, ptr >>> 0, len >>> 0));
      return ERRNO_SUCCESS;
    },
    fd_write(fd, iovs, iovsLen, nwritten) {
      if (fd !== 1 && fd !== 2) return ERRNO_BADF;
      const buf = memory().buffer;
      const v = new DataView(buf);
      let n = 0;
      for (let i = 0; i < iovsLen >>> 0; i++) {
        const base = v.getUint32((iovs >>> 0) + 8 * i, true);
        const len = v.getUint32((iovs >>> 0) + 8 * i + 4, true);
        n += writeSync(fd, new Uint8Array(buf, base, len));
      }
      v.setUint32(nwritten >>> 0, n, true);
      return ERRNO_SUCCESS;
    },
    // The Go runtime polls with one clock subscription (its next timer) and
    // no file descriptors, since the module does no I/O: sleep until the
    // earliest clock fires and report the clocks that have.
    poll_oneoff(inPtr, outPtr, nsubs, neventsPtr) {
      const v = new DataView(memory().buffer);
      const subs = [];
      let wake = -1n;
      for (let i = 0; i < nsubs >>> 0; i++) {
        const at = (inPtr >>> 0) + SUBSCRIPTION_SIZE * i;
        const tag = v.getUint8(at + 8);
        if (tag !== EVENTTYPE_CLOCK) return ERRNO_INVAL; // the module polls no file
        const id = v.getUint32(at + 16, true);
        const now = clockNow(id);
        if (now < 0n) return ERRNO_INVAL;
        let timeout = v.getBigUint64(at + 24, true);
        if ((v.getUint16(at + 40, true) & SUBCLOCKFLAG_ABSTIME) === 0) timeout += now;
        const hr = process.hrtime.bigint() + (timeout > now ? timeout - now : 0n);
        subs.push({ userdata: v.getBigUint64(at, true), hr });
        if (wake < 0n || hr < wake) wake = hr;
      }
      if (wake >= 0n) {
        const ms = Number(wake - process.hrtime.bigint()) / 1e6;
        if (ms > 0) Atomics.wait(sleeper, 0, 0, ms);
      }
      const now = process.hrtime.bigint();
      let n = 0;
      for (const sub of subs) {
        if (sub.hr > now && sub.hr !== wake) continue;
        const at = (outPtr >>> 0) + EVENT_SIZE * n++;
        for (let k = 0; k < EVENT_SIZE; k += 8) v.setBigUint64(at + k, 0n, true);
        v.setBigUint64(at, sub.userdata, true);
        v.setUint8(at + 10, EVENTTYPE_CLOCK);
      }
      v.setUint32(neventsPtr >>> 0, n, true);
      return ERRNO_SUCCESS;
    },
  };
}

/**
 * JSON text of a request: JSON.stringify's, with BigInt values written as
 * the integers they are (JSON.stringify refuses them), so that an id past
 * Number.MAX_SAFE_INTEGER reaches the module exactly; a number JSON cannot
 * carry stops it as finiteOnly does.
 */
function withBigInts(value) {
  const write = (v) => {
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'number' && !Number.isFinite(v)) throw new RangeError('non-finite');
    if (v === null || typeof v !== 'object') return JSON.stringify(v);
    if (typeof v.toJSON === 'function') return write(v.toJSON());
    if (Array.isArray(v)) return `[${v.map((x) => write(x) ?? 'null').join(',')}]`;
    const parts = [];
    for (const [k, x] of Object.entries(v)) {
      const w = write(x);
      if (w !== undefined) parts.push(`${JSON.stringify(k)}:${w}`);
    }
    return `{${parts.join(',')}}`;
  };
  return write(value);
}

/** Keys whose integers are job ids (their own value, or their array's elements). */
const ID_KEYS = new Set(['id', 'jobs', 'rounds', 'backfill']);

/**
 * The reply envelope's value. Integer ids (a key "id", or an element of a
 * "jobs", "rounds" or "backfill" array) outside ±Number.MAX_SAFE_INTEGER
 * come back as BigInt, exactly as the module wrote them (JSON.parse would
 * round 2^53 + 1 to 2^53); every other value is JSON.parse's. The
 * lexical check is cheap: replies without a run of 16 digits take
 * JSON.parse itself.
 */
function parseReply(text) {
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const value = (idKey) => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const o = {};
      ws();
      if (text[i] === '}') return i++, o;
      for (;;) {
        ws();
        const k = string();
        ws();
        i++; // ':'
        o[k] = value(ID_KEYS.has(k) ? k : null);
        ws();
        if (text[i++] === '}') return o;
      }
    }
    if (c === '[') {
      i++;
      const a = [];
      ws();
      if (text[i] === ']') return i++, a;
      for (;;) {
        // An array of ids (or of arrays of ids: rounds) passes its key on.
        a.push(value(idKey === 'id' ? null : idKey));
        ws();
        if (text[i++] === ']') return a;
      }
    }
    if (c === '"') return string();
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?|^true|^false|^null/.exec(text.slice(i, i + 400));
    i += m[0].length;
    if (m[0] === 'true') return true;
    if (m[0] === 'false') return false;
    if (m[0] === 'null') return null;
    const n = Number(m[0]);
    if (idKey && m[1] === undefined && m[2] === undefined && !Number.isSafeInteger(n)) return BigInt(m[0]);
    return n;
  };
  const string = () => {
    const start = i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i));
  };
  return value(null);
}

/** One instance of the module. Create it with load(). */
export class Orrery {
  #module;
  #kernels;
  #exports;
  #req = { ptr: 0, size: 0 };
  #fast = { ptr: 0, size: 0 };

  /**
   * @param {WebAssembly.Module} module
   * @param {WebAssembly.Module} [kernels] the kernel module (default: KERNELS_URL's), used
   *   when module imports its kernels
   */
  constructor(module, kernels) {
    this.#module = module;
    if (importsKernels(module)) {
      kernelsModule ??= kernels ?? new WebAssembly.Module(readFileSync(KERNELS_URL));
      this.#kernels = kernels ?? kernelsModule;
    }
    this.#start();
  }

  #start() {
    const wasi = new WASI({ version: 'preview1', args: [], env: {}, returnOnExit: true });
    const imports = wasi.getImportObject();
    let memory = null;
    imports.wasi_snapshot_preview1 = { ...imports.wasi_snapshot_preview1, ...memorySafeImports(() => memory) };
    // The kernels run in their own instance on this one's memory, which
    // exists only once this one does: the imports call through to it.
    let k = null;
    if (this.#kernels) {
      imports[KERNELS_NAMESPACE] = {
        excess: (a, b, n, c) => k.excess(a, b, n, c),
        rotations: (dst, base, rotor, n, c, s0, m) => k.rotations(dst, base, rotor, n, c, s0, m),
        excess_slack: (a, n, c, out) => k.excess_slack(a, n, c, out),
        add_rotated: (dst, tile, n, t) => k.add_rotated(dst, tile, n, t),
        fold_delta: (psi, m, base, n, v, c) => k.fold_delta(psi, m, base, n, v, c),
        residues: (tab, m, base, n, v, c, lv, dst, out) => k.residues(tab, m, base, n, v, c, lv, dst, out),
        windows: (out, n, x0lo, x0hi, psi, m, runs, r, from0, pre) => k.windows(out, n, x0lo, x0hi, psi, m, runs, r, from0, pre),
        place: (dst, base, tile, n, t, c, out) => k.place(dst, base, tile, n, t, c, out),
        below: (a, n, xlo, xhi) => k.below(a, n, xlo, xhi),
      };
    }
    const instance = new WebAssembly.Instance(this.#module, imports);
    memory = instance.exports.memory;
    if (this.#kernels) k = new WebAssembly.Instance(this.#kernels, { orrery: { memory } }).exports;
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
    const body = encode(request);
    const reply = parseReply(this.handle(`{"op":${JSON.stringify(op)},"request":${body}}`));
    if (reply.error) throw new OrreryError(reply.error.code, reply.error.field, reply.error.message);
    return reply.response;
  }

  /** "cassini.link": the best rotation of the jobs sharing one link. */
  link(request) {
    return this.call('cassini.link', request);
  }

  /**
   * "cassini.profile": one job's quantized iteration, and for a measured
   * series or events the period found and how well the record repeats it.
   */
  profile(request) {
    return this.call('cassini.profile', request);
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
   * "cassini.agent.new": CASSINI's time-shift agent for one job ({period_ms,
   * shift_ms, comm_offset_ms?, reference_unix_ms?, mode?, threshold?,
   * cooldown_ms?}), living in this instance. See agent.js for the
   * training-loop side (wait, a shift file).
   * @returns {Agent}
   */
  newAgent(plan) {
    const r = this.call('cassini.agent.new', plan);
    return new Agent(this, r.handle);
  }

  /**
   * "shockwave.scheduler.new": Shockwave's incremental scheduler for a
   * cluster of gpus GPUs, living in this instance (config is
   * shockwave.plan's, with reopt_rounds).
   * @returns {Scheduler}
   */
  newScheduler(gpus, config) {
    const r = this.call('shockwave.scheduler.new', config === undefined ? { gpus } : { gpus, config });
    return new Scheduler(this, r.handle);
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

/**
 * Shockwave's incremental round scheduler (the Go orrery.Scheduler, the
 * authors' ShockwaveScheduler) behind a handle of an Orrery instance. Job
 * ids are integers or non-empty strings, one kind per scheduler (its first
 * add decides); with strings, jobs the planner cannot tell apart run in
 * the order they were added. A TrapError of the instance loses its
 * schedulers: their calls then fail with an unknown handle.
 *
 *   const s = orrery.newScheduler(32);
 *   s.add({ id: 'resnet-1', gpus: 2, submit_s: 0, progress: 0, epoch_bs: [...], epoch_dur_s: [...] });
 *   for (;;) { const ids = s.schedule(); ...; s.progress('resnet-1', 3); s.endRound(); }
 */
export class Scheduler {
  #orrery;
  #handle;

  /** Use Orrery.newScheduler. */
  constructor(orrery, handle) {
    this.#orrery = orrery;
    this.#handle = handle;
  }

  /** The scheduler's handle in its instance. */
  get handle() {
    return this.#handle;
  }

  #call(op, fields) {
    return this.#orrery.call(op, { handle: this.#handle, ...fields });
  }

  /** "shockwave.scheduler.add" (add_metadata): admit a job; the next schedule re-plans. */
  add(job) {
    return this.#call('shockwave.scheduler.add', { job });
  }

  /** "shockwave.scheduler.remove" (remove_metadata): retire a job. */
  remove(id) {
    return this.#call('shockwave.scheduler.remove', { id });
  }

  /** "shockwave.scheduler.progress" (schedule_progress): a job's completed epochs. */
  progress(id, epochs) {
    return this.#call('shockwave.scheduler.progress', { id, epochs });
  }

  /** "shockwave.scheduler.observe": a job's measured throughput, {round, it_per_s, bs}. */
  observe(id, sample) {
    return this.#call('shockwave.scheduler.observe', { id, sample });
  }

  /** "shockwave.scheduler.end_round" (increment_round_ptr): returns the new round. */
  endRound() {
    return this.#call('shockwave.scheduler.end_round', {}).round;
  }

  /** "shockwave.scheduler.resolve" (set_resolve): re-plan at the next schedule. */
  resolve() {
    return this.#call('shockwave.scheduler.resolve', {});
  }

  /** "shockwave.scheduler.schedule" (round_schedule): the ids to run this round. */
  schedule() {
    return this.#call('shockwave.scheduler.schedule', {}).jobs;
  }

  /** "shockwave.scheduler.last_plan": the most recent plan, or null before the first. */
  lastPlan() {
    return this.#call('shockwave.scheduler.last_plan', {}).plan ?? null;
  }

  /** "shockwave.scheduler.close": release the handle. */
  close() {
    return this.#call('shockwave.scheduler.close', {});
  }
}

/**
 * CASSINI's time-shift agent (the Go engine/cassini/agent) behind a handle: it
 * decides, for instants in milliseconds since the Unix epoch, when each
 * iteration starts. agent.js wraps it for a training loop.
 */
export class Agent {
  #orrery;
  #handle;

  /** Use Orrery.newAgent. */
  constructor(orrery, handle) {
    this.#orrery = orrery;
    this.#handle = handle;
  }

  /** The agent's handle in its instance. */
  get handle() {
    return this.#handle;
  }

  #call(op, fields) {
    return this.#orrery.call(op, { handle: this.#handle, ...fields });
  }

  /**
   * "cassini.agent.next": {start_unix_ms, delay_ms, late_ms, adjusted, released} for a loop
   * ready at readyUnixMs; commMs, if given, is the last iteration's communication time.
   */
  next(readyUnixMs, commMs) {
    return this.#call('cassini.agent.next', commMs > 0 ? { ready_unix_ms: readyUnixMs, comm_ms: commMs } : { ready_unix_ms: readyUnixMs });
  }

  /** "cassini.agent.communicating": the drift (ms) of a communication start. */
  communicating(atUnixMs) {
    return this.#call('cassini.agent.communicating', { at_unix_ms: atUnixMs }).drift_ms;
  }

  /** "cassini.agent.set_plan": a new {period_ms, shift_ms, ...}. */
  setPlan(plan) {
    return this.#call('cassini.agent.set_plan', { plan });
  }

  /** "cassini.agent.stats": adjustments, padding, drift. */
  stats() {
    return this.#call('cassini.agent.stats', {});
  }

  /** "cassini.agent.close": release the handle. */
  close() {
    return this.#call('cassini.agent.close', {});
  }
}
