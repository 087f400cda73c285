package fluid

import "fmt"

// Filling is how a [Solver] or a [Network] fills. The zero value is the
// default; the others are the references the tests compare it with and
// the fillings of the ablations (see the package documentation).
type Filling int

const (
	// Hot fills hot components, only hot links taking part (the default;
	// a Network then solves only what changed).
	Hot Filling = iota
	// Full fills each connected component with every link taking part.
	Full
	// Eager runs the reference filling of the whole network, scanned
	// every round.
	Eager
	// Legacy runs the filling before components: one level for the whole
	// network, residuals decremented every round (rates within about
	// 1e-15 of the others, to reproduce older results exactly).
	Legacy
)

func (f Filling) String() string {
	switch f {
	case Hot:
		return "hot"
	case Full:
		return "full"
	case Eager:
		return "eager"
	case Legacy:
		return "legacy"
	}
	return fmt.Sprintf("Filling(%d)", int(f))
}

// ParseFilling parses a filling's name: "hot" (or "" and "default"),
// "full", "eager" or "legacy".
func ParseFilling(s string) (Filling, error) {
	switch s {
	case "", "default", "hot":
		return Hot, nil
	case "full":
		return Full, nil
	case "eager":
		return Eager, nil
	case "legacy":
		return Legacy, nil
	}
	return 0, fmt.Errorf("fluid: filling %q (want hot, full, eager or legacy)", s)
}
