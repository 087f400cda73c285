package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/orrery/orrery"
)

// jsonCommand returns a command that reads a request for op from a file
// named by its one argument, or standard input, and writes the response
// on standard output: JSON, or with -table (cassini link and rank) a table.
func jsonCommand(op string) func(context.Context, []string, stdio) error {
	return func(ctx context.Context, args []string, s stdio) (err error) {
		fs := flags(op, s)
		defer func() { err = withUsage(fs, err) }()
		pretty := fs.Bool("pretty", false, "indent the JSON response")
		table := tableWriters[op]
		var asTable *bool
		if table != nil {
			asTable = fs.Bool("table", false, "print a table instead of JSON")
		}
		fs.Usage = func() {
			fmt.Fprintf(s.err, "usage: orrery %s [flags] [request.json]\n\nReads a %q request (schema v1) from the file, or standard input without one (or with -);\nwrites the response on standard output.\n\nflags:\n", opCommand(op), op)
			fs.PrintDefaults()
		}
		if err := parseArgs(fs, args, 1); err != nil {
			return err
		}
		in, name := s.in, "the request"
		if p := fs.Arg(0); p != "" && p != "-" {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			in, name = f, p
		}
		req, err := io.ReadAll(io.LimitReader(in, orrery.MaxRequestBytes+1))
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		resp, err := orrery.Call(ctx, op, req)
		if err != nil {
			return err
		}
		writeWarnings(s.err, resp)
		if asTable != nil && *asTable {
			return table(s.out, resp)
		}
		return writeJSON(s.out, resp, *pretty)
	}
}

// opCommand turns "cassini.link" into "cassini link".
func opCommand(op string) string {
	return string(bytes.ReplaceAll([]byte(op), []byte("."), []byte(" ")))
}

func writeJSON(w io.Writer, resp []byte, pretty bool) error {
	if pretty {
		var b bytes.Buffer
		if err := json.Indent(&b, resp, "", "  "); err != nil {
			return err
		}
		resp = b.Bytes()
	}
	_, err := fmt.Fprintf(w, "%s\n", resp)
	return err
}

// runServe is "orrery serve": a line protocol over the schema, for any
// language that can start a process. Each line of standard input is one
// envelope ({"op": ..., "request": {...}}); each gets one line of
// standard output, the response envelope, in order. All lines run in one
// orrery.Session, so the stateful operations work across lines
// ("shockwave.scheduler.new" answers a handle the next lines use). A line
// longer than the request limit gets the limit error; the command ends at
// the end of input.
func runServe(ctx context.Context, args []string, s stdio) error {
	fs := flags("serve", s)
	fs.Usage = func() {
		fmt.Fprint(s.err, "usage: orrery serve < envelopes.jsonl\n\nAnswers schema-v1 envelopes, one per line, in one session; one response per line.\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	session := orrery.NewSession()
	in := bufio.NewReaderSize(s.in, 64<<10)
	out := bufio.NewWriter(s.out)
	for {
		line, err := readLine(in, orrery.MaxRequestBytes+1)
		if len(bytes.TrimSpace(line)) > 0 {
			out.Write(session.Handle(ctx, line))
			out.WriteByte('\n')
			if in.Buffered() == 0 { // answer now: the caller may wait for it
				if ferr := out.Flush(); ferr != nil {
					return ferr
				}
			}
		}
		if err == io.EOF {
			return out.Flush()
		}
		if err != nil {
			return fmt.Errorf("reading envelopes: %w", err)
		}
	}
}

// readLine reads one line without its newline. Past limit bytes it keeps
// only the first limit (the envelope is refused by its size either way)
// and discards the rest of the line.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line) < limit {
			line = append(line, chunk[:min(len(chunk), limit-len(line))]...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			return line, err
		}
		return bytes.TrimSuffix(line, []byte("\n")), nil
	}
}
