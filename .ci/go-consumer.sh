#!/usr/bin/env bash
# A Go module outside the repository uses orrery the way docs/go.md says an
# unpublished module is used (a require, a replace line to the clone, go mod
# tidy), ranks three jobs and runs a Shockwave round, and checks the answers.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
go mod init example.com/consumer >/dev/null 2>&1
go mod edit -require github.com/orrery/orrery@v0.0.0 -replace "github.com/orrery/orrery=$repo"
cat > main.go <<'GO'
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/orrery/orrery"
)

func main() {
	ctx := context.Background()
	pulse := func(id string, upMs float64) orrery.JobSpec {
		return orrery.JobSpec{ID: id, Phases: []orrery.PhaseSpec{{Ms: upMs, Gbps: 40}, {Ms: 72 - upMs}}}
	}
	resp, err := orrery.Rank(ctx, orrery.RankRequest{
		Links: []orrery.LinkSpec{{ID: "uplink", CapacityGbps: 50}},
		Jobs:  []orrery.JobSpec{pulse("a", 30), pulse("b", 30), pulse("c", 60)},
		Candidates: []orrery.CandidateSpec{
			{ID: "packed", Paths: map[string][]string{"a": {"uplink"}, "c": {"uplink"}}},
			{ID: "spread", Paths: map[string][]string{"a": {"uplink"}, "b": {"uplink"}}},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("best %s shift b %g\n", *resp.Best, resp.ShiftsMs["b"])
	s, err := orrery.NewScheduler(4, orrery.ShockwaveConfig{})
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Add(orrery.ShockwaveJob{ID: 7, GPUs: 2, EpochBS: []int{32, 32}, EpochDurS: []float64{60, 60}}); err != nil {
		log.Fatal(err)
	}
	ids, err := s.Schedule(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("round 0 runs", ids)
}
GO
go mod tidy >/dev/null 2>&1 || { go mod tidy; exit 1; }
got=$(go run .)
want=$'best spread shift b 30\nround 0 runs [7]'
if [ "$got" != "$want" ]; then
	printf 'go-consumer: got\n%s\nwant\n%s\n' "$got" "$want" >&2
	exit 1
fi
echo "go-consumer: a module outside the repository builds and answers as docs/go.md says"
