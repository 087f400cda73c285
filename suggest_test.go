package orrery

import (
	"reflect"
	"testing"
)

// An unknown key gets the schema key it most likely meant, by prefix or
// edit distance, and none when nothing is close.
func TestSuggest(t *testing.T) {
	link := (&keyScanner{}).structFields(reflect.TypeFor[LinkRequest]())
	job := (&keyScanner{}).structFields(reflect.TypeFor[ShockwaveJob]())
	for _, c := range []struct {
		fields map[string]reflect.Type
		key    string
		want   string
	}{
		{link, "capacity", "capacity_gbps"},
		{link, "capacity_gbs", "capacity_gbps"},
		{link, "job", "jobs"},
		{link, "tick", "tick_ms"},
		{link, "budgett", "budget"},
		{link, "zzz", ""},
		{job, "gpu", "gpus"},
		{job, "epoch_durs", "epoch_dur_s"},
		{job, "submit", "submit_s"},
		{job, "x", ""},
	} {
		if got := suggest(c.fields, c.key); got != c.want {
			t.Errorf("suggest(%q) = %q, want %q", c.key, got, c.want)
		}
	}
}

// The message names the suggestion, and only for an unknown key.
func TestUnknownFieldSuggestion(t *testing.T) {
	_, err := Call(t.Context(), "cassini.link", []byte(`{"capacity": 50, "jobs": []}`))
	e, ok := err.(*Error)
	if !ok || e.Code != CodeMalformed || e.Field != "capacity" || e.Message != `unknown field (did you mean "capacity_gbps"?)` {
		t.Fatalf("got %#v", err)
	}
}
