// Command orrery runs orrery's engines from the shell: CASSINI link search
// and candidate ranking, Shockwave round planning, and the demo.
//
// Engine commands read one JSON request (schema v1, see the README) on
// standard input and write the JSON response on standard output. Bad input
// exits with status 1 and a message naming the field on standard error;
// a usage error exits with status 2.
//
//	orrery cassini link < request.json
//	orrery cassini rank < request.json
//	orrery shockwave plan < state.json
//	orrery shockwave predict < state.json
//	orrery demo
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/orrery/orrery"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})
	stop()
	os.Exit(code)
}

// stdio is a command's standard streams.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// errUsage marks an error in the command line itself (exit status 2).
var errUsage = errors.New("usage")

// command is one command of the command line.
type command struct {
	run     func(context.Context, []string, stdio) error
	summary string
}

// groups holds the commands of each group that are not operations of the
// schema. A group's other commands are the registry's operations named
// "<group>.<command>" (orrery.Ops), which read a JSON request on stdin.
var groups = map[string]map[string]command{
	"cassini": {
		"simulate": {runCassiniSimulate, "simulate placement policies on a fabric (table, or --json)"},
	},
	"shockwave": {
		"simulate": {runShockwaveSimulate, "replay a trace under Shockwave and the baselines (table or --json)"},
	},
}

// commands returns group's commands: its operations, then its own.
func commands(group string) map[string]command {
	cmds := maps.Clone(groups[group])
	if cmds == nil {
		cmds = map[string]command{}
	}
	for _, op := range orrery.Ops() {
		if op.Session {
			continue // a one-shot process keeps no state: see orrery serve
		}
		if g, name, ok := strings.Cut(op.Name, "."); ok && g == group {
			cmds[name] = command{jsonCommand(op.Name), op.Summary + " (JSON on stdin)"}
		}
	}
	return cmds
}

// usage is the top-level help text.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: orrery <command> [arguments]\n\ncommands:\n")
	row := func(name, summary string) { fmt.Fprintf(&b, "  %-20s%s\n", name, summary) }
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		cmds := commands(g)
		for _, name := range slices.Sorted(maps.Keys(cmds)) {
			row(g+" "+name, cmds[name].summary)
		}
	}
	row("demo", "run the built-in example end to end and print the result")
	row("help", "print this message")
	b.WriteString("\nRun 'orrery <command> -h' for a command's flags.\n")
	return b.String()
}

func run(ctx context.Context, args []string, s stdio) int {
	if len(args) == 0 {
		fmt.Fprint(s.err, usage())
		return 2
	}
	var err error
	switch g := args[0]; {
	case groups[g] != nil:
		err = subcommand(ctx, g, args[1:], s)
	case g == "demo":
		err = runDemo(ctx, args[1:], s)
	case g == "help" || g == "-h" || g == "-help" || g == "--help":
		fmt.Fprint(s.out, usage())
		return 0
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(s.err, "orrery: %v\n\n%s", err, usage())
		return 2
	default:
		fmt.Fprintf(s.err, "orrery: %v\n", err)
		return 1
	}
}

// subcommand dispatches args[0] among a group's commands.
func subcommand(ctx context.Context, group string, args []string, s stdio) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: %s needs a subcommand", errUsage, group)
	}
	c, ok := commands(group)[args[0]]
	if !ok {
		return fmt.Errorf("%w: unknown command %q", errUsage, group+" "+args[0])
	}
	return c.run(ctx, args[1:], s)
}

// flags returns a flag set that reports errors instead of exiting.
func flags(name string, s stdio) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(s.err)
	return fs
}

// parse parses args into fs, turning a bad flag into a usage error.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}
