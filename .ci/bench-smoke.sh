#!/usr/bin/env bash
# The benchmark smoke run of CI: installs COIN-OR CBC and HiGHS (SciPy's milp),
# then runs the suite's
# CI subset (bench/cmd/orrery-bench -smoke), whose gates are ratios and exact
# comparisons that a loaded machine cannot make flaky:
#   - every kernel path returns the same sums, and the fastest SIMD path is at
#     least 3x the generic one (median of per-round ratios, CPU time, paths
#     interleaved);
#   - the exact link search finds the brute force's optimum, with at least 10x
#     fewer pair evaluations and at least 1.5x faster (per-round ratio);
#   - orrery's planner plans are feasible in the Shockwave authors' program
#     and score their reported objective there, and equal CBC's proven optimum
#     (relative 1e-6) on small trace instances; CBC's plans are feasible in
#     orrery's program and never better;
#   - on the wide-job families (widths {1,2,4,8}, {1,2,3}, {3,5,6,1} on 7 to 32
#     GPUs, both paths, k up to 1e5), orrery proves optimality wherever HiGHS
#     does, its objective is at least HiGHS's plan's and at most HiGHS's bound.
# Exits non-zero if a gate fails. The report is in out/bench-smoke.
set -euo pipefail
cd "$(dirname "$0")/.."
./bench/install-cbc.sh
./bench/install-highs.sh
go run ./bench/cmd/orrery-bench -smoke -require-cbc -require-highs -out out/bench-smoke
