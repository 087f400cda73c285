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
"$(dirname "$0")/../.ci/apt-install.sh" install-highs python3-scipy
/usr/bin/python3 -c 'from scipy.optimize import milp'
echo /usr/bin/python3
