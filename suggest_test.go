package orrery

import (
	"testing"
)

// The message names the suggestion, and only for an unknown key.
func TestUnknownFieldSuggestion(t *testing.T) {
	_, err := Call(t.Context(), "cassini.link", []byte(`{"capacity": 50, "jobs": []}`))
	e, ok := err.(*Error)
	if !ok || e.Code != CodeMalformed || e.Field != "capacity" || e.Message != `unknown field (did you mean "capacity_gbps"?)` {
		t.Fatalf("got %#v", err)
	}
}

// message strips internal package names at the start of each wrapped part
// only.
func TestMessage(t *testing.T) {
	for in, want := range map[string]string{
		"round: invalid state: 0 GPUs":                          "invalid state: 0 GPUs",
		"phase 0: profile: bandwidth is negative":               "phase 0: bandwidth is negative",
		"link: capacity must be in [1, kernels.MaxValue] units": "capacity must be in [1, 16777215] units",
		"jobs on the link: 3":                                   "jobs on the link: 3",
		"round: job 5: predictor: timeline: values too large":   "job 5: timeline: values too large",
		"": "",
	} {
		if got := message(errString(in)); got != want {
			t.Errorf("message(%q) = %q, want %q", in, got, want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
