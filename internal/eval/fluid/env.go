package fluid

import "os"

// EnvVar is the environment variable, read once at program start, that
// selects the filling for ablations; see the package documentation.
const EnvVar = "ORRERY_FLUID"

// mode is how Rates fills.
type mode int

const (
	modeHot    mode = iota + 1 // hot components, only hot links taking part
	modeFull                   // components, every link taking part
	modeEager                  // the whole network, scanned per round
	modeLegacy                 // the filling before components: one level, residuals
)

// defaultMode is the mode of a Solver whose own is unset.
var defaultMode = modeFromEnv(os.Getenv(EnvVar))

func modeFromEnv(v string) mode {
	switch v {
	case "full":
		return modeFull
	case "eager":
		return modeEager
	case "legacy":
		return modeLegacy
	}
	return modeHot
}
