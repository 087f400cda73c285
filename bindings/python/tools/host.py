"""host.py runs orrery's Python package for the cross-host check
(bindings/crosscheck): one JSON object per line on stdout.

    python3 host.py corpus BACKEND DIR          {"name", "b64"} per request file under DIR
    python3 host.py bench BACKEND DIR NAME...   {"name", "ns_per_op"} per benchmark

BACKEND is "native" (ORRERY_LIB) or "wasmtime" (ORRERY_WASM). Benchmark names:
"abi_version" (one call into the library), "search" (link_search on the
two-job problem of the Go benchmarks), or a request file under DIR.
"""

import array
import base64
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import orrery  # noqa: E402


def walk(root):
    for d, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if f.endswith(".json") or f.endswith(".jsonl"):
                yield os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")


def measure(fn):
    for _ in range(3):
        fn()
    n = 1
    while True:
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        ns = time.perf_counter_ns() - t0
        if ns > 5e8 or n >= 1 << 24:
            return ns / n
        n = n * 100 if ns < 1e6 else max(n + 1, int(n * min(100, 6e8 / ns)))


def main(argv):
    if len(argv) < 3 or argv[0] not in ("corpus", "bench"):
        sys.stderr.write(__doc__)
        return 2
    mode, backend, root, names = argv[0], argv[1], argv[2], argv[3:]
    eng = orrery.load(backend=backend)
    out = sys.stdout
    if mode == "corpus":
        for name in walk(root):
            with open(os.path.join(root, name), "rb") as fh:
                data = fh.read()
            if name.endswith(".jsonl"):
                # A session: its lines in order on an engine of its own.
                with orrery.load(backend=backend) as own:
                    resp = b"\n".join(own.handle(line.strip()) for line in data.splitlines() if line.strip())
            else:
                resp = eng.handle(data)
            out.write(json.dumps({"name": name, "b64": base64.b64encode(resp).decode()}) + "\n")
        return 0
    for name in names:
        if name == "abi_version":
            def fn():
                return eng.abi_version
        elif name == "search":
            periods = array.array("i", [255, 181])
            demand = array.array("i", [0] * 141 + [25000] * 114 + [0] * 120 + [30000] * 61)

            def fn():
                return eng.link_search(periods, demand, 50000)
        else:
            with open(os.path.join(root, name), "rb") as fh:
                env = fh.read()

            def fn():
                return eng.handle(env)
        out.write(json.dumps({"name": name, "ns_per_op": measure(fn)}) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
