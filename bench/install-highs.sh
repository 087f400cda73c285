#!/usr/bin/env bash
# Installs HiGHS for the benchmark suite's planner comparison: SciPy's
# scipy.optimize.milp runs HiGHS (Debian/Ubuntu package python3-scipy, into
# the system Python), unless some python3 already imports it. Needs root or
# sudo; prints the interpreter that has it.
set -euo pipefail
for py in /usr/bin/python3 python3; do
	if command -v "$py" >/dev/null 2>&1 && "$py" -c 'from scipy.optimize import milp' 2>/dev/null; then
		command -v "$py"
		exit 0
	fi
done
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-highs: no apt-get here; install SciPy (>= 1.9, for scipy.optimize.milp) by hand" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends python3-scipy >/dev/null
/usr/bin/python3 -c 'from scipy.optimize import milp'
echo /usr/bin/python3
