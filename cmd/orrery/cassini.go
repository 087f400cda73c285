package main

import "context"

func runCassini(ctx context.Context, args []string, s stdio) error {
	return subcommand(ctx, "cassini", args, s, map[string]func(context.Context, []string, stdio) error{
		"link":     jsonCommand("cassini.link"),
		"rank":     jsonCommand("cassini.rank"),
		"simulate": runCassiniSimulate,
	})
}
