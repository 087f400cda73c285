// nodehost.mjs: the node side of orrery-bench's native-vs-WebAssembly
// section, embedded in the command and run as
//
//   node nodehost.mjs ORRERY_JS MODULE CORPUS_DIR
//
// It loads the module through the JavaScript binding (bindings/js), says
// {"ready": true} and then answers one request per stdin line,
// {"name": NAME, "target_ms": T}, with one timed batch:
// {"name", "ops", "wall_ns", "cpu_ns", "digest"}. NAME is "search" (the
// linkSearch fast path on two jobs of 255 and 181 ticks), "search3" (the
// same on the three jobs of ok/link_exact_three_jobs.json) or a request file
// under CORPUS_DIR. The first request for a name warms up and sizes the
// batch; digest is the SHA-256 of the response bytes ("" for search).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';
import { createHash } from 'node:crypto';

const [orreryJs, module, dir] = process.argv.slice(2);
const { load } = await import(pathToFileURL(orreryJs).href);
const orrery = await load(module);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

function searchProblem() {
  const demand = new Int32Array(255 + 181);
  demand.fill(25000, 141, 255);
  demand.fill(30000, 255 + 120, 255 + 181);
  return { periods: [255, 181], demand, capacity: 50000 };
}

// threeJobs is ok/link_exact_three_jobs.json as the engine sees it: 1 ms
// ticks, 180/200/240-tick periods, 30/25/20 Gbps from each period's start.
function threeJobs() {
  const demand = new Int32Array(180 + 200 + 240);
  demand.fill(30000, 0, 60);
  demand.fill(25000, 180, 180 + 70);
  demand.fill(20000, 380, 380 + 90);
  return { periods: [180, 200, 240], demand, capacity: 50000 };
}

const calls = new Map();
function call(name) {
  let c = calls.get(name);
  if (c) return c;
  if (name === 'search' || name === 'search3') {
    const p = name === 'search' ? searchProblem() : threeJobs();
    c = { fn: () => orrery.linkSearch(p), digest: () => '' };
  } else {
    const env = readFileSync(join(dir, name));
    c = {
      fn: () => orrery.handleBytes(env),
      digest: () => createHash('sha256').update(orrery.handleBytes(env)).digest('hex'),
    };
  }
  calls.set(name, c);
  return c;
}

const cpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};
const sizes = new Map();

out({ ready: true, abi: orrery.abiVersion });
for await (const line of createInterface({ input: process.stdin })) {
  let name = '';
  try {
    const req = JSON.parse(line);
    name = req.name;
    const target = req.target_ms * 1e6;
    const c = call(name);
    let n = sizes.get(name);
    let digest = '';
    if (n === undefined) {
      digest = c.digest();
      c.fn();
      n = 1;
      for (;;) {
        const c0 = cpuNs();
        for (let i = 0; i < n; i++) c.fn();
        const t = cpuNs() - c0;
        if (t >= target / 4 || n >= 1 << 24) {
          n = Math.max(1, Math.ceil((n * target) / Math.max(t, 1)));
          break;
        }
        n *= 10;
      }
    }
    const c0 = cpuNs();
    const w0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) c.fn();
    const wall = Number(process.hrtime.bigint() - w0);
    const cpu = cpuNs() - c0;
    sizes.set(name, cpu < target ? Math.max(n + 1, Math.ceil((n * target) / Math.max(cpu, 1))) : n);
    out({ name, ops: n, wall_ns: wall, cpu_ns: cpu, digest });
  } catch (e) {
    out({ name, error: String(e && e.stack || e) });
  }
}
