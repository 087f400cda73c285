package main

import "context"

// runShockwave dispatches the Shockwave commands:
//
//	orrery shockwave plan < state.json      plan the next rounds ("shockwave.plan")
//	orrery shockwave predict < state.json   predict without planning ("shockwave.predict")
func runShockwave(ctx context.Context, args []string, s stdio) error {
	return subcommand(ctx, "shockwave", args, s, map[string]func(context.Context, []string, stdio) error{
		"plan":     jsonCommand("shockwave.plan"),
		"predict":  jsonCommand("shockwave.predict"),
		"simulate": runShockwaveSimulate,
	})
}
