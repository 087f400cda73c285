package throughput

import (
	"errors"
	"strings"
	"testing"
)

// FuzzLoad checks that any input either loads or fails with one of the
// package's sentinels, and that every loaded key prints back to itself.
func FuzzLoad(f *testing.F) {
	f.Add(`{"v100": {"('LM (batch size 5)', 1)": {"null": 2.5, "('LM (batch size 5)', 1)": [1, 1.5]}}}`)
	f.Add(`{"k80": {"('A3C', 1)": {"null": 0}}}`)
	f.Add(`{"v100": {"('LM (batch size 5)', 1)": {}}}`)
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, in string) {
		tab, err := Load(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrKey) && !errors.Is(err, ErrValue) && !errors.Is(err, ErrDuplicate) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		for _, w := range tab.Workers() {
			for _, k := range tab.Keys(w) {
				k2, err := ParseKey(k.String())
				if err != nil || k2 != k {
					t.Fatalf("key %+v prints as %q, parses back to %+v, %v", k, k.String(), k2, err)
				}
				if v, err := tab.Alone(w, k); err != nil || v < 0 {
					t.Fatalf("Alone(%q, %v) = %v, %v", w, k, v, err)
				}
			}
		}
	})
}

// FuzzParseKey checks that a key parses only if it prints back identically.
func FuzzParseKey(f *testing.F) {
	f.Add("('ResNet-18 (batch size 32)', 1)")
	f.Add("('A3C', 1)")
	f.Add("('LM (batch size 5)', 08)")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKey(s)
		if err != nil {
			if !errors.Is(err, ErrKey) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		if k.String() != s {
			t.Fatalf("%q parses to %+v which prints as %q", s, k, k.String())
		}
	})
}
