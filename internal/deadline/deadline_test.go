package deadline

import (
	"context"
	"errors"
	"testing"
	"time"
)

// pastDeadline has a deadline in the past but is never cancelled: what a
// timeout context looks like on WebAssembly while a busy loop keeps its
// timer from firing.
type pastDeadline struct{ context.Context }

func (pastDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Second), true }

// TestDeadlineWithoutTimer proves the check reads the clock rather than
// waiting for the context to be cancelled.
func TestDeadlineWithoutTimer(t *testing.T) {
	ctx := pastDeadline{context.Background()}
	if ctx.Err() != nil {
		t.Fatal("the test context must not be cancelled")
	}
	if err := Err(ctx); !errors.Is(err, context.DeadlineExceeded) || !Done(ctx) {
		t.Fatalf("Err = %v, want DeadlineExceeded", err)
	}
}

func TestNoDeadline(t *testing.T) {
	if Done(context.Background()) {
		t.Fatal("background context reported done")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Err(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err = %v, want Canceled", err)
	}
}
