package trace

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/orrery/orrery/internal/eval/throughput"
)

// Every setup names files the repository holds, with as many jobs as the
// trace's name says, and SetupFor finds each by its cluster size.
func TestSetups(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "internal", "eval", "data", "shockwave")
	for _, s := range Setups() {
		jobs, err := ParseFile(filepath.Join(dir, "traces", s.Trace))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(s.Trace[:strings.IndexByte(s.Trace, '_')])
		if len(jobs) != n {
			t.Errorf("%s: %d jobs, want %d", s.Trace, len(jobs), n)
		}
		tab, err := throughput.LoadFile(filepath.Join(dir, s.Table))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DeriveAll(jobs, tab, DeriveOptions{}); err != nil {
			t.Errorf("%s with %s: %v", s.Trace, s.Table, err)
		}
		if _, err := LoadConfigFile(filepath.Join(dir, "configurations", s.Config)); err != nil {
			t.Error(err)
		}
		if got, ok := SetupFor(s.GPUs); !ok || got != s {
			t.Errorf("SetupFor(%d) = %+v, %v", s.GPUs, got, ok)
		}
	}
	if _, ok := SetupFor(48); ok {
		t.Error("SetupFor(48): the authors ran no such setup")
	}
}
