// Package deadline checks a context's end without relying on the runtime's
// timers.
//
// A context made by context.WithTimeout or WithDeadline is cancelled by a
// timer goroutine. On GOARCH=wasm the Go scheduler is cooperative and has
// no preemption, so while a search loop runs without blocking that timer
// never fires and ctx.Err stays nil forever: a deadline would be ignored in
// the WebAssembly module and under wazero. Reading the clock against
// ctx.Deadline works on every platform.
package deadline

import (
	"context"
	"time"
)

// Err returns ctx.Err(), or context.DeadlineExceeded once the clock has
// passed ctx's deadline even if the context has not been cancelled yet.
func Err(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// Done reports whether Err(ctx) is non-nil.
func Done(ctx context.Context) bool { return Err(ctx) != nil }
