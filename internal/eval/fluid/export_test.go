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

// SetDefaultMode sets the filling of every Solver without its own ("",
// "full" or "eager", as ORRERY_FLUID); the returned func undoes it.
func SetDefaultMode(name string) (restore func()) {
	old := defaultMode
	defaultMode = modeFromEnv(name)
	return func() { defaultMode = old }
}

// SolveFresh solves with a fresh Solver in the mode named as ORRERY_FLUID,
// unobserved.
func SolveFresh(name string, capacity []float64, flows []Flow) ([]float64, error) {
	defer SetObserver(nil)()
	s := Solver{mode: modeFromEnv(name)}
	return s.Rates(nil, capacity, flows)
}
