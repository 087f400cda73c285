package candidate

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCacheAcrossCalls: a Workspace that remembers searches gives exactly the
// ranking a fresh one gives, call after call, as jobs change.
func TestCacheAcrossCalls(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	warm := Workspace{Cache: 64}
	hits := 0
	for it := range 60 {
		in := randomInstance(rng)
		if it%3 != 0 {
			// Change one job: its links must be searched again.
			in.jobs[0] = randomProfile(rng)
		}
		for rep := range 2 {
			got, err := warm.Rank(context.Background(), in.jobs, in.links, in.cands, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := Rank(context.Background(), in.jobs, in.links, in.cands, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep == 1 && got.Cached+got.Fit != got.Searches {
				t.Fatalf("case %d: the second identical call searched %d of %d problems again", it, got.Searches-got.Cached-got.Fit, got.Searches)
			}
			hits += got.Cached
			got.Cached, want.Cached = 0, 0
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("case %d call %d: cached ranking differs (-uncached +cached):\n%s", it, rep, diff)
			}
		}
	}
	if len(warm.cache.order) > 64 {
		t.Fatalf("cache holds %d entries, cap 64", len(warm.cache.order))
	}
	if hits == 0 {
		t.Fatal("the cache never answered")
	}
}
