#!/usr/bin/env bash
# Installs COIN-OR CBC, the MILP solver the benchmark suite runs against
# orrery's planner (Debian/Ubuntu package coinor-cbc), unless cbc is already
# on PATH. Needs root or sudo; prints where cbc is.
set -euo pipefail
if command -v cbc >/dev/null 2>&1; then
	command -v cbc
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-cbc: no apt-get here; install COIN-OR CBC (the cbc program) by hand" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends coinor-cbc >/dev/null
command -v cbc
