// Command orrery runs orrery's engines from the shell: CASSINI link search
// and candidate ranking, Shockwave round planning, and the demo.
//
// Engine commands read one JSON request (schema v1, see docs/schema.md) on
// standard input and write the JSON response on standard output. Bad input
// exits with status 1 and a message naming the field on standard error;
// a usage error exits with status 2.
//
//	orrery cassini link < request.json
//	orrery cassini rank < request.json
//	orrery shockwave plan < state.json
//	orrery shockwave predict < state.json
//	orrery serve            (envelopes, one per line, in one session)
//	orrery demo
//	orrery version
//
// Long commands report progress on standard error when it is a terminal
// (-q turns it off).
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
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

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

// errReported marks a usage error whose message and usage were printed
// already (by the flag package): exit status 2, nothing more to say. It
// is an errUsage.
var errReported = fmt.Errorf("%w (reported)", errUsage)

// commandUsage is a usage error found after a command parsed its flags
// (a flag's value the command or the simulation refuses): it prints the
// message, then that command's own usage.
type commandUsage struct {
	err error
	fs  *flag.FlagSet
}

func (e *commandUsage) Error() string { return e.err.Error() }
func (e *commandUsage) Unwrap() error { return e.err }

// withUsage ties err, if it is a usage error not yet reported, to the
// command whose flags are fs. Commands defer it over their result.
func withUsage(fs *flag.FlagSet, err error) error {
	var cu *commandUsage
	if err == nil || !errors.Is(err, errUsage) || errors.Is(err, errReported) || errors.As(err, &cu) {
		return err
	}
	return &commandUsage{err, fs}
}

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
		"regime":   {runCassiniRegime, "the congestion sweep: oversubscription x placement x transport (Markdown table, plot)"},
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
	row("serve", "answer schema-v1 envelopes, one per line, in one session (the stateful ops too)")
	row("demo", "run the built-in example end to end and print the result")
	row("version", "print the version of orrery, its schema and ABI")
	row("help", "print this message")
	b.WriteString("\nRun 'orrery <command> -h' for a command's flags.\n")
	return b.String()
}

// groupUsage is the help text of a group ("orrery cassini -h").
func groupUsage(group string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: orrery %s <command> [arguments]\n\ncommands:\n", group)
	cmds := commands(group)
	for _, name := range slices.Sorted(maps.Keys(cmds)) {
		fmt.Fprintf(&b, "  %-20s%s\n", group+" "+name, cmds[name].summary)
	}
	fmt.Fprintf(&b, "\nRun 'orrery %s <command> -h' for a command's flags.\n", group)
	return b.String()
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
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
	case g == "serve":
		err = runServe(ctx, args[1:], s)
	case g == "version" || g == "-version" || g == "--version":
		fmt.Fprintln(s.out, versionLine())
		return 0
	case isHelp(g):
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
	case errors.Is(err, errReported):
		return 2
	case errors.As(err, new(*commandUsage)):
		var cu *commandUsage
		errors.As(err, &cu)
		fmt.Fprintf(s.err, "orrery: %s\n\n", userMessage(err))
		cu.fs.SetOutput(s.err)
		cu.fs.Usage()
		return 2
	case errors.Is(err, errUsage):
		help := usage()
		if g := args[0]; groups[g] != nil {
			help = groupUsage(g)
		}
		fmt.Fprintf(s.err, "orrery: %s\n\n%s", userMessage(err), help)
		return 2
	default:
		fmt.Fprintf(s.err, "orrery: %s\n", userMessage(err))
		return 1
	}
}

// internalName matches the prefix an internal package puts on its errors
// ("round: invalid state", "trace: ...") at the start of a message or of a
// wrapped part of it, and the internal constants messages may name.
var internalName = regexp.MustCompile(`(^|: )(?:round|market|predictor|profile|link|circle|candidate|affinity|kernels|wire|sim|trace|throughput|policy|netsim|fluid|workload|metrics|agent|topology|usage): `)

// userMessage is err's text without internal package names: the command
// line is a user's first contact, and "round: invalid state: ..." names a
// package they never import. The front door already words its own errors
// this way; this catches the evaluation's.
func userMessage(err error) string {
	msg := strings.ReplaceAll(err.Error(), "kernels.MaxValue", "16777215")
	return internalName.ReplaceAllString(msg, "$1")
}

// versionLine describes this build: the module version (or the commit of
// a development build), the Go toolchain, and the schema and ABI versions
// it speaks.
func versionLine() string {
	version, commit := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" {
			version = v
		}
		var dirty bool
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				commit = kv.Value
			case "vcs.modified":
				dirty = kv.Value == "true"
			}
		}
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if commit != "" && dirty {
			commit += "+modified"
		}
	}
	line := "orrery " + version
	if commit != "" {
		line += " (" + commit + ")"
	}
	return fmt.Sprintf("%s %s %s/%s, schema v%d, ABI v1", line, runtime.Version(), runtime.GOOS, runtime.GOARCH, orrery.Version)
}

// subcommand dispatches args[0] among a group's commands.
func subcommand(ctx context.Context, group string, args []string, s stdio) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: %s needs a subcommand", errUsage, group)
	}
	if isHelp(args[0]) {
		fmt.Fprint(s.out, groupUsage(group))
		return nil
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

// parse parses args into fs. A bad flag is reported once, by the flag
// package (its message, then the command's own usage), and returns an
// error that prints nothing more; so is a stray argument.
func parse(fs *flag.FlagSet, args []string) error { return parseArgs(fs, args, 0) }

// parseArgs is parse for a command that takes up to n arguments, before,
// between or after its flags (orrery cassini link req.json -table). The
// arguments are fs.Args() afterwards.
func parseArgs(fs *flag.FlagSet, args []string, n int) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return fmt.Errorf("%w: %v", errReported, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		if len(pos) == n {
			fmt.Fprintf(fs.Output(), "unexpected argument %q\n", args[0])
			fs.Usage()
			return fmt.Errorf("%w: unexpected argument %q", errReported, args[0])
		}
		pos, args = append(pos, args[0]), args[1:]
	}
	// Leave the arguments where fs.Args finds them.
	return fs.Parse(append([]string{"--"}, pos...))
}

// quietFlag adds -q to a long command's flags: no progress on stderr.
func quietFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("q", false, "quiet: no progress on stderr")
}

// progress reports a long command's progress on standard error, one line
// rewritten in place, at most ten times a second, with the time left at
// the rate so far, and only when standard error is a terminal and -q is
// not set: piped or logged output gets none. The zero value, and a nil
// *progress, report nothing.
type progress struct {
	w           io.Writer
	start, last time.Time
	text        string
	now         func() time.Time // time.Now; tests set it
}

// newProgress returns the progress reporter of a command with stdio s.
func newProgress(s stdio, quiet bool) *progress {
	if quiet || !isTerminal(s.err) {
		return nil
	}
	return &progress{w: s.err}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Report shows "what: done/total (P%, ETA)" (total 0: no total). The
// ETA is the time so far scaled to the work left, shown once a second
// has passed and some work is done.
func (p *progress) Report(what string, done, total int) {
	if p == nil {
		return
	}
	now := time.Now
	if p.now != nil {
		now = p.now
	}
	t := now()
	if p.start.IsZero() {
		p.start = t
	}
	if t.Sub(p.last) < 100*time.Millisecond && done != total {
		return
	}
	p.last = t
	text := fmt.Sprintf("%s: %d", what, done)
	if total > 0 {
		text = fmt.Sprintf("%s: %d/%d (%d%%", what, done, total, 100*done/total)
		if el := t.Sub(p.start); done > 0 && done < total && el >= time.Second {
			left := time.Duration(float64(el) * float64(total-done) / float64(done))
			text += ", ETA " + left.Round(time.Second).String()
		}
		text += ")"
	}
	pad := max(0, len(p.text)-len(text))
	fmt.Fprintf(p.w, "\r%s%s", text, strings.Repeat(" ", pad))
	p.text = text
}

// Done clears the progress line.
func (p *progress) Done() {
	if p == nil || p.text == "" {
		return
	}
	fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", len(p.text)))
	p.text = ""
}
