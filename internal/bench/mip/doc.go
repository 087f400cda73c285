// Package mip writes mixed-integer linear programs in the CPLEX LP format,
// checks candidate solutions against them, and solves them with COIN-OR
// CBC, the off-the-shelf open-source MILP solver a scheduler author would
// reach for instead of orrery's exact planner.
//
// A [Model] is a list of variables (continuous, binary or integer, with
// bounds), linear rows (≤, ≥ or =) and a linear objective to minimize or
// maximize. [Model.WriteLP] writes it for any LP-format reader;
// [Model.Check] lists the bounds, integrality and rows an assignment
// violates, and [Model.Objective] evaluates it, so that a solution from
// anywhere (CBC, or a plan orrery computed without a MILP) is judged by the
// same program.
//
// [Solve] runs the cbc binary on a model with a time limit and returns its
// status, objective, bound and solution. CBC is not a Go dependency: it is
// found on PATH ([Available]); on Debian it is the package coinor-cbc.
package mip
