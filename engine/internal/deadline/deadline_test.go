package deadline

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDeadlineWithoutTimer proves the check does not wait for the timer
// goroutine: a busy loop that never yields must still see the deadline.
func TestDeadlineWithoutTimer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	start := time.Now()
	for !Done(ctx) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("deadline never observed")
		}
	}
	if err := Err(ctx); !errors.Is(err, context.DeadlineExceeded) {
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
