#!/usr/bin/env bash
# The Python package installs in one command, offline: pip install
# ./bindings/python into a throwaway venv of Debian's python3 with
# --no-index (nothing from the package index), then, from another folder and
# with no ORRERY_* variables, import orrery and load() the library the wheel
# carries. Also: without a library, load() says how to build one.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
py=/usr/bin/python3
if ! "$py" -c 'import ensurepip' 2>/dev/null; then
	apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
"$py" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q --no-index --disable-pip-version-check "$root/bindings/python"
installed=$(date +%s)
cd "$tmp"
env -u ORRERY_LIB -u ORRERY_WASM "$tmp/venv/bin/python" - <<'PY'
import json, os, orrery
eng = orrery.load()
assert eng.backend == "native", eng.backend
lib = orrery.library_path()
assert lib and lib.startswith(os.path.dirname(orrery.__file__)), lib
res = eng.link({"capacity_gbps": 50, "jobs": [{"id": i, "phases": [{"ms": 30, "gbps": 40}, {"ms": 42, "gbps": 0}]} for i in "ab"]})
assert res["score"] == 1 and res["status"] == "optimal", res
s = eng.new_scheduler(4)
s.add({"id": "a", "gpus": 1, "submit_s": 0, "progress": 0, "epoch_bs": [32, 32], "epoch_dur_s": [60, 60]})
assert s.schedule() == ["a"], s.last_plan()
print("installed package:", lib)
PY
mkdir -p "$tmp/nolib/orrery"
cp "$root"/bindings/python/orrery/*.py "$tmp/nolib/orrery/"
if out=$(env -u ORRERY_LIB -u ORRERY_WASM PYTHONPATH="$tmp/nolib" "$tmp/venv/bin/python" -c 'import orrery; orrery.load()' 2>&1); then
	echo "load() without a library did not fail"; exit 1
fi
grep -q "pip install ./bindings/python" <<<"$out" || { echo "load() without a library: $out"; exit 1; }
echo "python-install: venv + pip install --no-index in $((installed - start)) s, checks in $(($(date +%s) - installed)) s"
