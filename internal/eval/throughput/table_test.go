package throughput

import (
	"errors"
	"math"
	"strings"
	"testing"
)

const dataDir = "../../../internal/eval/data/shockwave/"

func TestLoadAuthorsTables(t *testing.T) {
	for _, name := range []string{"tacc_throughputs.json", "wisr_throughputs.json"} {
		tab, err := LoadFile(dataDir + name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := []string{"k80", "k80_unconsolidated", "p100", "p100_unconsolidated", "v100", "v100_unconsolidated"}
		if got := tab.Workers(); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: workers %v, want %v", name, got, want)
		}
		// 5 models x sizes x GPUs (Recommendation 1 GPU only) + A3C + CycleGAN.
		if n := len(tab.Keys("v100")); n != 83 {
			t.Errorf("%s: %d v100 keys, want 83", name, n)
		}
		if n := len(tab.Keys("k80_unconsolidated")); n != 77 {
			t.Errorf("%s: %d k80_unconsolidated keys, want 77", name, n)
		}
		// A key without a batch size.
		if _, err := tab.Alone("v100", Key{Model: "A3C", GPUs: 1}); err != nil {
			t.Errorf("%s: A3C: %v", name, err)
		}
	}
}

// The notes list V100 epoch times derived from the tables as
// ceil(samples/B)/tput (the authors' profiles use samples/B without the
// ceiling; internal/eval/trace tests that). Check a few against the loaded tables.
func TestEpochTimesFromNotes(t *testing.T) {
	tab, err := LoadFile(dataDir + "tacc_throughputs.json")
	if err != nil {
		t.Fatal(err)
	}
	wisr, err := LoadFile(dataDir + "wisr_throughputs.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tab     *Table
		model   string
		samples float64
		bs      int
		gpus    int
		want    float64 // seconds, as rounded in the notes
	}{
		{tab, "ResNet-18", 50000, 16, 1, 54.2},
		{tab, "ResNet-18", 50000, 32, 1, 36.4},
		{tab, "ResNet-18", 50000, 256, 1, 31.0},
		{tab, "ResNet-18", 50000, 128, 2, 17.9},
		{tab, "ResNet-18", 50000, 128, 8, 4.9},
		{tab, "ResNet-50", 100000, 16, 1, 590},
		{tab, "Transformer", 10000, 128, 1, 68.7},
		{tab, "LM", 59675, 5, 1, 89.2},
		{tab, "LM", 59675, 80, 1, 34.4},
		{wisr, "ResNet-18", 50000, 32, 1, 67.2},
		{wisr, "LM", 59675, 5, 1, 79.2},
	} {
		tput, err := c.tab.Alone("v100", Key{Model: c.model, BatchSize: c.bs, GPUs: c.gpus})
		if err != nil {
			t.Fatal(err)
		}
		got := math.Ceil(c.samples/float64(c.bs)) / tput
		tol := 0.051
		if c.want >= 100 {
			tol = 0.51
		}
		if math.Abs(got-c.want) > tol {
			t.Errorf("%s bs %d x%d: epoch %.2f s, notes say %.1f", c.model, c.bs, c.gpus, got, c.want)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	for _, s := range []string{
		"('ResNet-18 (batch size 32)', 1)",
		"('Recommendation (batch size 8192)', 1)",
		"('A3C', 1)",
		"('LM (batch size 5)', 8)",
	} {
		k, err := ParseKey(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if k.String() != s {
			t.Errorf("round trip %q -> %+v -> %q", s, k, k.String())
		}
	}
	k, _ := ParseKey("('ResNet-18 (batch size 32)', 4)")
	if k != (Key{"ResNet-18", 32, 4}) {
		t.Errorf("parsed %+v", k)
	}
}

func TestParseKeyErrors(t *testing.T) {
	for _, s := range []string{
		"",
		"ResNet-18 (batch size 32), 1",
		"('ResNet-18 (batch size 32)' 1)",
		"('ResNet-18 (batch size 32)', 1",
		"('ResNet-18 (batch size 32)', 0)",
		"('ResNet-18 (batch size 32)', -1)",
		"('ResNet-18 (batch size 32)', 01)",
		"('ResNet-18 (batch size 32)', +1)",
		"('ResNet-18 (batch size 0)', 1)",
		"('ResNet-18 (batch size x)', 1)",
		"('ResNet-18 (batch size 32', 1)",
		"('', 1)",
		"(' A3C', 1)",
		"('Res'Net (batch size 32)', 1)",
		"('(batch size 32)', 1)",
		"('ResNet-18 (batch size 99999999999999999999)', 1)",
	} {
		_, err := ParseKey(s)
		if !errors.Is(err, ErrKey) {
			t.Errorf("%q: err %v, want ErrKey", s, err)
			continue
		}
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != s {
			t.Errorf("%q: error does not name the key: %v", s, err)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	good := `{"v100": {"('LM (batch size 5)', 1)": {"null": 2.5, "('LM (batch size 5)', 1)": [1, 1.5]}}}`
	if _, err := Load(strings.NewReader(good)); err != nil {
		t.Fatalf("good table: %v", err)
	}
	for _, c := range []struct {
		name, in string
		want     error
		mention  string
	}{
		{"empty", ``, ErrSyntax, ""},
		{"not object", `[]`, ErrSyntax, ""},
		{"truncated", `{"v100": {"('LM (batch size 5)', 1)": {"null": 2.5`, ErrSyntax, "LM"},
		{"trailing", good + `{}`, ErrSyntax, ""},
		{"bad key", `{"v100": {"LM 5": {"null": 1}}}`, ErrKey, `"LM 5"`},
		{"bad other key", `{"v100": {"('LM (batch size 5)', 1)": {"null": 1, "x": [1, 2]}}}`, ErrKey, `"x"`},
		{"missing null", `{"v100": {"('LM (batch size 5)', 1)": {}}}`, ErrValue, "LM (batch size 5)"},
		{"negative", `{"v100": {"('LM (batch size 5)', 1)": {"null": -1}}}`, ErrValue, "v100"},
		{"overflow", `{"v100": {"('LM (batch size 5)', 1)": {"null": 1e999}}}`, ErrValue, ""},
		{"string value", `{"v100": {"('LM (batch size 5)', 1)": {"null": "1"}}}`, ErrValue, ""},
		{"json null value", `{"v100": {"('LM (batch size 5)', 1)": {"null": null}}}`, ErrValue, ""},
		{"short pair", `{"v100": {"('LM (batch size 5)', 1)": {"null": 1, "('LM (batch size 5)', 1)": [1]}}}`, ErrValue, ""},
		{"long pair", `{"v100": {"('LM (batch size 5)', 1)": {"null": 1, "('LM (batch size 5)', 1)": [1, 2, 3]}}}`, ErrSyntax, ""},
		{"dup worker", `{"v100": {}, "v100": {}}`, ErrDuplicate, "v100"},
		{"dup key", `{"v100": {"('A3C', 1)": {"null": 1}, "('A3C', 1)": {"null": 1}}}`, ErrDuplicate, "A3C"},
		{"dup null", `{"v100": {"('A3C', 1)": {"null": 1, "null": 2}}}`, ErrDuplicate, ""},
		{"empty worker", `{"": {}}`, ErrKey, ""},
	} {
		_, err := Load(strings.NewReader(c.in))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.mention)
		}
	}
}

func TestLookups(t *testing.T) {
	tab, err := Load(strings.NewReader(`{"v100": {"('LM (batch size 5)', 1)": {"null": 2.5, "('A3C', 1)": [1, 1.5]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	lm := Key{"LM", 5, 1}
	if v, err := tab.Alone("v100", lm); err != nil || v != 2.5 {
		t.Errorf("Alone = %v, %v", v, err)
	}
	if a, b, err := tab.Colocated("v100", lm, Key{"A3C", 0, 1}); err != nil || a != 1 || b != 1.5 {
		t.Errorf("Colocated = %v %v %v", a, b, err)
	}
	if _, err := tab.Alone("k80", lm); !errors.Is(err, ErrUnknownWorker) {
		t.Errorf("unknown worker: %v", err)
	}
	if _, err := tab.Alone("v100", Key{"LM", 5, 2}); !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "('LM (batch size 5)', 2)") {
		t.Errorf("unknown key: %v", err)
	}
	if _, _, err := tab.Colocated("v100", lm, lm); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown pair: %v", err)
	}
	if tab.Keys("nope") != nil {
		t.Error("Keys of unknown worker")
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = tab.Alone("v100", lm) }); allocs != 0 {
		t.Errorf("Alone allocates %v", allocs)
	}
}

func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadFile(dataDir + "tacc_throughputs.json"); err != nil {
			b.Fatal(err)
		}
	}
}
