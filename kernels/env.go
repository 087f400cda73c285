package kernels

import (
	"os"
	"strings"
)

// EnvVar is the environment variable, read once at program start, that
// turns kernel paths off; see the package documentation.
const EnvVar = "ORRERY_KERNELS"

// The ORRERY_KERNELS words.
const (
	envNoAVX512 = "noavx512" // AVX-512 off
	envNoAVX2   = "noavx2"   // AVX2 off, and with it AVX-512
	envGeneric  = "generic"  // every vector path off
)

// envWords splits ORRERY_KERNELS at commas and spaces.
func envWords() []string {
	return strings.FieldsFunc(os.Getenv(EnvVar), func(r rune) bool { return r == ',' || r == ' ' })
}

// envDisables reports whether ORRERY_KERNELS turns off the path that word
// names, counting the words that imply it.
func envDisables(word string) bool {
	for _, w := range envWords() {
		switch {
		case w == word, w == envGeneric, w == envNoAVX2 && word == envNoAVX512:
			return true
		}
	}
	return false
}
