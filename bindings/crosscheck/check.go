package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/orrery/orrery/bindings/internal/corpus"
)

// report is the outcome of the corpus on every host.
type report struct {
	cases   int
	missing []string // hosts not installed here (optional ones left out)
	failed  []error  // mismatches, wrong answers and host failures
	rows    [][2]string
}

// check sends every corpus case through every host and compares the bytes
// with the native answer, which must also be the answer the corpus
// expects.
func check(ctx context.Context, a *artifacts, cases []corpus.Case) report {
	r := report{cases: len(cases)}
	var want map[string][]byte
	for _, h := range hosts {
		got, err := h.corpus(ctx, a, cases)
		if errors.Is(err, errMissing) {
			if !h.optional {
				r.missing = append(r.missing, h.name)
			}
			r.rows = append(r.rows, [2]string{h.name, "skipped: " + err.Error()})
			continue
		}
		if err != nil {
			r.failed = append(r.failed, fmt.Errorf("%s: %w", h.name, err))
			r.rows = append(r.rows, [2]string{h.name, "failed"})
			continue
		}
		same := 0
		for _, c := range cases {
			b, ok := got[c.Name]
			switch {
			case !ok:
				r.failed = append(r.failed, fmt.Errorf("%s: no answer to %s", h.name, c.Name))
			case want == nil:
				if err := c.Check(b); err != nil {
					r.failed = append(r.failed, fmt.Errorf("%s: %w", h.name, err))
				} else {
					same++
				}
			case !bytes.Equal(b, want[c.Name]):
				r.failed = append(r.failed, fmt.Errorf("%s: %s differs from native\n%s: %.300s\nnative: %.300s", h.name, c.Name, h.name, b, want[c.Name]))
			default:
				same++
			}
		}
		if want == nil {
			want = got
			r.rows = append(r.rows, [2]string{h.name, fmt.Sprintf("%d/%d as the corpus expects", same, len(cases))})
		} else {
			r.rows = append(r.rows, [2]string{h.name, fmt.Sprintf("%d/%d byte-identical to native", same, len(cases))})
		}
	}
	return r
}

func (r report) print(w io.Writer) {
	fmt.Fprintf(w, "| host | %d requests |\n|---|---|\n", r.cases)
	for _, row := range r.rows {
		fmt.Fprintf(w, "| %s | %s |\n", row[0], row[1])
	}
	for _, err := range r.failed {
		fmt.Fprintln(w, "FAIL:", err)
	}
}
