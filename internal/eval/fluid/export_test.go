package fluid

// Hooks for the external tests (netsim_test.go), which drive real
// simulations through the package.

// SetObserver makes f see every solved problem; the returned func undoes
// it.
func SetObserver(f func(capacity []float64, flows []Flow, rates []float64)) (restore func()) {
	old := observe
	observe = f
	return func() { observe = old }
}

// SolveFresh solves with a fresh Solver of filling f, unobserved.
func SolveFresh(f Filling, capacity []float64, flows []Flow) ([]float64, error) {
	defer SetObserver(nil)()
	s := Solver{Filling: f}
	return s.Rates(nil, capacity, flows)
}
