package kernels

import (
	"os"
	"testing"
)

// TestEnvironment checks the ORRERY_KERNELS words of this run: all known, and
// the active path consistent with them (so a CI leg that means to test the
// AVX2 or generic path cannot silently test another).
func TestEnvironment(t *testing.T) {
	v, set := os.LookupEnv(EnvVar)
	if !set {
		t.Skipf("%s not set", EnvVar)
	}
	for _, w := range envWords() {
		switch w {
		case envNoAVX512, envNoAVX2, envGeneric:
		default:
			t.Errorf("%s=%q: unknown word %q (want %s, %s or %s)", EnvVar, v, w, envNoAVX512, envNoAVX2, envGeneric)
		}
	}
	impl := Implementation()
	if envDisables(envNoAVX512) && impl == "avx512" || envDisables(envNoAVX2) && impl == "avx2" {
		t.Errorf("%s=%q but Implementation() = %q", EnvVar, v, impl)
	}
	t.Logf("%s=%q: Implementation() = %q", EnvVar, v, impl)
}

func TestEnvDisables(t *testing.T) {
	for _, tc := range []struct {
		env          string
		avx512, avx2 bool // disabled
	}{
		{"", false, false},
		{"noavx512", true, false},
		{"noavx2", true, true},
		{"generic", true, true},
		{" noavx512 , other", true, false},
	} {
		t.Setenv(EnvVar, tc.env)
		if got := envDisables(envNoAVX512); got != tc.avx512 {
			t.Errorf("%q: AVX-512 disabled = %v, want %v", tc.env, got, tc.avx512)
		}
		if got := envDisables(envNoAVX2); got != tc.avx2 {
			t.Errorf("%q: AVX2 disabled = %v, want %v", tc.env, got, tc.avx2)
		}
	}
}
