package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/orrery/orrery"
)

// jsonCommand returns a command that reads a request for op on standard
// input and writes the response on standard output.
func jsonCommand(op string) func(context.Context, []string, stdio) error {
	return func(ctx context.Context, args []string, s stdio) error {
		fs := flags(op, s)
		pretty := fs.Bool("pretty", false, "indent the JSON response")
		fs.Usage = func() {
			fmt.Fprintf(s.err, "usage: orrery %s [-pretty] < request.json\n\nReads a %q request (schema v1) on stdin; writes the response on stdout.\n", opCommand(op), op)
			fs.PrintDefaults()
		}
		if err := parse(fs, args); err != nil {
			return err
		}
		req, err := io.ReadAll(io.LimitReader(s.in, orrery.MaxRequestBytes+1))
		if err != nil {
			return fmt.Errorf("reading the request: %w", err)
		}
		resp, err := orrery.Call(ctx, op, req)
		if err != nil {
			return err
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
