#!/usr/bin/env bash
# Installs COIN-OR CBC, the MILP solver the benchmark suite runs against
# orrery's planner (Debian/Ubuntu package coinor-cbc), unless cbc is already
# on PATH. Needs root or sudo; prints where cbc is.
set -euo pipefail
if command -v cbc >/dev/null 2>&1; then
	command -v cbc
	exit 0
fi
"$(dirname "$0")/../.ci/apt-install.sh" install-cbc coinor-cbc
command -v cbc
