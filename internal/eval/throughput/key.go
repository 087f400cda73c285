package throughput

import (
	"strconv"
	"strings"
)

// Key identifies a job configuration: a model at a batch size on a number
// of GPUs. BatchSize is 0 for job types that have none (A3C, CycleGAN).
type Key struct {
	Model     string
	BatchSize int
	GPUs      int
}

// JobType returns the authors' job-type string, "ResNet-18 (batch size 32)",
// or the bare model name when BatchSize is 0.
func (k Key) JobType() string {
	if k.BatchSize == 0 {
		return k.Model
	}
	return k.Model + " (batch size " + strconv.Itoa(k.BatchSize) + ")"
}

// String returns the key as it appears in the JSON tables,
// "('ResNet-18 (batch size 32)', 1)".
func (k Key) String() string {
	return "('" + k.JobType() + "', " + strconv.Itoa(k.GPUs) + ")"
}

// ParseKey parses a key written as [Key.String] writes it. Integers must be
// positive and written without sign or leading zeros; the model name must be
// non-empty and free of quotes and parentheses.
func ParseKey(s string) (Key, error) {
	rest, ok := strings.CutPrefix(s, "('")
	if !ok {
		return Key{}, keyErr(s, `must start with "('"`)
	}
	jobType, gpus, ok := strings.Cut(rest, "', ")
	if !ok {
		return Key{}, keyErr(s, `missing "', " between job type and GPUs`)
	}
	gpus, ok = strings.CutSuffix(gpus, ")")
	if !ok {
		return Key{}, keyErr(s, `must end with ")"`)
	}
	var k Key
	var err error
	if k.GPUs, err = parsePositive(gpus); err != nil {
		return Key{}, keyErr(s, "GPUs "+err.Error())
	}
	k.Model, k.BatchSize, err = ParseJobType(jobType)
	if err != nil {
		return Key{}, keyErr(s, err.Error())
	}
	return k, nil
}

// ParseJobType splits "ResNet-18 (batch size 32)" into ("ResNet-18", 32). A
// bare name ("A3C") has batch size 0.
func ParseJobType(s string) (model string, batchSize int, err error) {
	const open = " (batch size "
	if name, bs, ok := strings.Cut(s, open); ok {
		bs, ok = strings.CutSuffix(bs, ")")
		if !ok {
			return "", 0, &syntaxError{"job type " + strconv.Quote(s) + ` must end with ")"`}
		}
		n, err := parsePositive(bs)
		if err != nil {
			return "", 0, &syntaxError{"batch size " + err.Error()}
		}
		if err := checkName(name); err != nil {
			return "", 0, err
		}
		return name, n, nil
	}
	if err := checkName(s); err != nil {
		return "", 0, err
	}
	return s, 0, nil
}

func checkName(name string) error {
	if name == "" || strings.ContainsAny(name, "'\"()\n\t") || strings.TrimSpace(name) != name {
		return &syntaxError{"model name " + strconv.Quote(name) + " is empty or has quotes, parentheses or surrounding spaces"}
	}
	return nil
}

// parsePositive parses a canonical positive decimal integer.
func parsePositive(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || strconv.Itoa(n) != s {
		return 0, &syntaxError{strconv.Quote(s) + " is not a positive integer"}
	}
	return n, nil
}

type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }

func keyErr(key, msg string) error {
	return &KeyError{Key: key, Detail: msg, Err: ErrKey}
}
