package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/orrery/orrery"
)

// tableWriters print an operation's response as a table (-table).
var tableWriters = map[string]func(io.Writer, []byte) error{
	"cassini.link": writeLinkTable,
	"cassini.rank": writeRankTable,
}

// writeLinkTable prints a cassini.link response: the score, then one row
// per job with its period, shift and rotation.
func writeLinkTable(w io.Writer, resp []byte) error {
	var r orrery.LinkResponse
	if err := json.Unmarshal(resp, &r); err != nil {
		return err
	}
	fmt.Fprintf(w, "score %.3f (unshifted %.3f, bound %.3f, %s; %s search, %d evaluations)\n", r.Score, r.UnshiftedScore, r.Bound, r.Status, r.Mode, r.Evaluations)
	fmt.Fprintf(w, "unified circle %g ms (%d points), %g Gbit above capacity per turn\n", r.PerimeterMs, r.Points, r.ExcessGbit)
	if r.GridMs > 0 {
		fmt.Fprintf(w, "periods rounded up to multiples of %g ms", r.GridMs)
		if r.UnroundedScore != nil {
			fmt.Fprintf(w, "; the shifts score %.3f on the jobs' own periods", *r.UnroundedScore)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "job\tperiod (ms)\tshift (ms)\trotation (deg)\t\n")
	for _, id := range sortedKeys(r.ShiftsMs) {
		fmt.Fprintf(tw, "%s\t%g\t%g\t%.1f\t\n", id, r.PeriodsMs[id], r.ShiftsMs[id], r.RotationsDeg[id])
	}
	return tw.Flush()
}

// writeRankTable prints a cassini.rank response: the best candidate, then
// one row per candidate (best first, the discarded last) with its score,
// its shared links and its shifts.
func writeRankTable(w io.Writer, resp []byte) error {
	var r orrery.RankResponse
	if err := json.Unmarshal(resp, &r); err != nil {
		return err
	}
	if r.Best == nil {
		fmt.Fprintf(w, "no candidate kept (%d link searches)\n\n", r.Searches)
	} else {
		fmt.Fprintf(w, "best %s (%d link searches)\n\n", *r.Best, r.Searches)
	}
	order := slices.Clone(r.Ranking)
	for _, c := range r.Candidates {
		if c.Discarded {
			order = append(order, c.ID)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "candidate\tscore\tstatus\tshared links (score: jobs)\tshifts (ms)\n")
	for _, id := range order {
		k := slices.IndexFunc(r.Candidates, func(c orrery.CandidateResult) bool { return c.ID == id })
		if k < 0 {
			continue
		}
		c := r.Candidates[k]
		if c.Discarded {
			fmt.Fprintf(tw, "%s\t-\tdiscarded\t%s\t\n", c.ID, c.Reason)
			continue
		}
		var links, shifts []string
		for _, l := range c.Links {
			links = append(links, fmt.Sprintf("%s %.3f: %s", l.ID, l.Score, strings.Join(l.Jobs, ", ")))
		}
		for _, j := range sortedKeys(c.ShiftsMs) {
			if v := c.ShiftsMs[j]; v != 0 {
				shifts = append(shifts, fmt.Sprintf("%s %g", j, v))
			}
		}
		if links == nil {
			links = []string{"none"}
		}
		if shifts == nil {
			shifts = []string{"none"}
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%s\t%s\t%s\n", c.ID, c.Score, c.Status, strings.Join(links, "; "), strings.Join(shifts, ", "))
	}
	return tw.Flush()
}

// writeWarnings prints a response's warnings on w (standard error), one a
// line, so that none passes silently whatever the output's format.
func writeWarnings(w io.Writer, resp []byte) {
	var r struct {
		Warnings []orrery.Warning `json:"warnings"`
	}
	if json.Unmarshal(resp, &r) != nil {
		return
	}
	for _, x := range r.Warnings {
		if x.Field == "" {
			fmt.Fprintf(w, "orrery: warning: %s\n", x.Message)
			continue
		}
		fmt.Fprintf(w, "orrery: warning: %s: %s\n", x.Field, x.Message)
	}
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
