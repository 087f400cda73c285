package plan_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/orrery/orrery/bindings/k8s/plan"
	"github.com/orrery/orrery/engine/cassini/agent"
)

// virtual is a clock whose Sleep advances time at once.
type virtual struct{ now time.Time }

func (v *virtual) Now() time.Time { return v.now }
func (v *virtual) Sleep(_ context.Context, d time.Duration) error {
	v.now = v.now.Add(d)
	return nil
}

// A training container reads the plan the scheduler wrote on its pod (a
// downward API file; here a temporary one) and waits for its slot before
// each iteration.
func Example() {
	dir, _ := os.MkdirTemp("", "plan")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "plan")
	os.WriteFile(path, []byte(`{"job":"default/vgg","reference":"2025-01-01T00:00:00Z","shift":"30ms","period":"72ms","commOffset":"0s","score":1,"generation":1}`), 0o644)

	p, err := plan.Read(path)
	if err != nil {
		fmt.Println("no plan, running unshifted:", err)
		return
	}
	clk := &virtual{now: p.Reference.Add(time.Hour)}
	a, err := agent.New(p.Agent(), agent.Options{Clock: clk})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		a.Wait(context.Background())
		fmt.Println("iteration starts", clk.now.Sub(p.Reference)%p.Period, "into the period")
		clk.now = clk.now.Add(70 * time.Millisecond) // compute and communicate
	}
	// Output:
	// iteration starts 30ms into the period
	// iteration starts 30ms into the period
	// iteration starts 30ms into the period
}
