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
	"os"
	"os/signal"
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

const usage = `usage: orrery <command> [arguments]

commands:
  cassini link     optimize the time shifts of jobs sharing one link (JSON on stdin)
  cassini rank     rank placement candidates by link compatibility (JSON on stdin)
  cassini simulate simulate placement policies on a fabric (table, or --json)
  shockwave plan   plan the next rounds of a GPU cluster with Shockwave (JSON on stdin)
  shockwave predict  predict the jobs' remaining runtimes and fair finish times (JSON on stdin)
  shockwave simulate  replay a trace under Shockwave and the baselines (table or --json)
  demo             run the built-in example end to end and print the result
  help             print this message

Run 'orrery <command> -h' for a command's flags.
`

func run(ctx context.Context, args []string, s stdio) int {
	if len(args) == 0 {
		fmt.Fprint(s.err, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "cassini":
		err = runCassini(ctx, args[1:], s)
	case "shockwave":
		err = runShockwave(ctx, args[1:], s)
	case "demo":
		err = runDemo(ctx, args[1:], s)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(s.out, usage)
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
		fmt.Fprintf(s.err, "orrery: %v\n\n%s", err, usage)
		return 2
	default:
		fmt.Fprintf(s.err, "orrery: %v\n", err)
		return 1
	}
}

// subcommand dispatches args[0] among a group's commands.
func subcommand(ctx context.Context, group string, args []string, s stdio, cmds map[string]func(context.Context, []string, stdio) error) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: %s needs a subcommand", errUsage, group)
	}
	f, ok := cmds[args[0]]
	if !ok {
		return fmt.Errorf("%w: unknown command %q", errUsage, group+" "+args[0])
	}
	return f(ctx, args[1:], s)
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
