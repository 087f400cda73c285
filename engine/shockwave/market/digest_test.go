package market

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateDigest = flag.Bool("update-digest", false, "rewrite testdata/plans.digest")

// TestPlanDigest hashes the plans of 300 random instances (both paths, both
// log modes, every k) bit for bit and compares with the digest recorded in
// testdata/plans.digest: every host (amd64, arm64, wasm) must compute the
// same plans. A deliberate change of the solver's rules updates it with
// -update-digest.
func TestPlanDigest(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	ws := NewWorkspace()
	h := sha256.New()
	var buf [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	for it := 0; it < 300; it++ {
		p := randomProblem(rng, 12, 8, 16, []int{1, 2, 4, 8})
		sol, err := ws.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		put(uint64(sol.Status))
		put(math.Float64bits(sol.Objective))
		put(math.Float64bits(sol.Bound))
		put(math.Float64bits(sol.RankCost))
		for j := range sol.Count {
			put(uint64(sol.Count[j]))
			put(math.Float64bits(sol.Priority[j]))
		}
		for r := range sol.Rounds {
			for _, j := range sol.Rounds[r] {
				put(uint64(j))
			}
			put(1 << 40)
			for _, j := range sol.Backfill[r] {
				put(uint64(j))
			}
			put(1 << 41)
		}
	}
	got := hex.EncodeToString(h.Sum(nil))
	path := filepath.Join("testdata", "plans.digest")
	if *updateDigest {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != strings.TrimSpace(string(want)) {
		t.Fatalf("plan digest %s, recorded %s: this host plans differently (or the rules changed: -update-digest)", got, want)
	}
}
