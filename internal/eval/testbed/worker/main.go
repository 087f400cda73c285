//go:build linux

// Command worker is one rank of a kernel testbed job (package
// internal/eval/testbed): it reads its configuration from the JSON file
// its argument names, runs its iterations over real TCP and prints its
// report. The testbed builds and starts it; it is not meant to be run by
// hand.
package main

import "github.com/orrery/orrery/internal/eval/testbed"

func main() { testbed.WorkerMain() }
