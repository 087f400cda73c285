package fluid

import "os"

// EnvVar is the environment variable, read once at program start, that
// selects the filling for ablations; see the package documentation.
const EnvVar = "ORRERY_FLUID"

// mode is how Rates fills.
type mode int

const (
	modeIncremental mode = iota + 1 // components, reusing the previous call's
	modeScratch                     // components, every one filled
	modeEager                       // the whole network, scanned per round
)

// defaultMode is the mode of a Solver whose own is unset.
var defaultMode = modeFromEnv(os.Getenv(EnvVar))

func modeFromEnv(v string) mode {
	switch v {
	case "scratch":
		return modeScratch
	case "eager":
		return modeEager
	}
	return modeIncremental
}
