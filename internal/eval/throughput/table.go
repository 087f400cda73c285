package throughput

import (
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
)

// Table is a loaded throughput table. It is immutable and safe for
// concurrent use.
type Table struct {
	workers []string
	alone   map[string]map[Key]float64
	coloc   map[string]map[pair][2]float64
}

type pair struct{ self, other Key }

// LoadFile loads the table in the named JSON file.
func LoadFile(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Load(f)
}

// Load reads a JSON throughput table (see the package doc for the format and
// the checks).
func Load(r io.Reader) (*Table, error) {
	d := &decoder{dec: json.NewDecoder(r)}
	d.dec.UseNumber()
	t := &Table{alone: map[string]map[Key]float64{}, coloc: map[string]map[pair][2]float64{}}
	if err := d.delim('{'); err != nil {
		return nil, err
	}
	for d.dec.More() {
		w, err := d.str()
		if err != nil {
			return nil, err
		}
		d.worker, d.key, d.other = w, "", ""
		if w == "" {
			return nil, d.fail(ErrKey, "empty worker type")
		}
		if _, dup := t.alone[w]; dup {
			return nil, d.fail(ErrDuplicate, "")
		}
		alone, coloc := map[Key]float64{}, map[pair][2]float64{}
		t.alone[w], t.coloc[w] = alone, coloc
		t.workers = append(t.workers, w)
		if err := d.delim('{'); err != nil {
			return nil, err
		}
		for d.dec.More() {
			if err := d.entry(alone, coloc); err != nil {
				return nil, err
			}
		}
		d.key = ""
		if err := d.delim('}'); err != nil {
			return nil, err
		}
	}
	d.worker = ""
	if err := d.delim('}'); err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		return nil, d.fail(ErrSyntax, "data after the table")
	}
	slices.Sort(t.workers)
	return t, nil
}

// entry reads one "key": {"null": x, "other": [a, b], ...} member.
func (d *decoder) entry(alone map[Key]float64, coloc map[pair][2]float64) error {
	ks, err := d.str()
	if err != nil {
		return err
	}
	d.key, d.other = ks, ""
	k, err := ParseKey(ks)
	if err != nil {
		return d.wrap(err)
	}
	if _, dup := alone[k]; dup {
		return d.fail(ErrDuplicate, "")
	}
	if err := d.delim('{'); err != nil {
		return err
	}
	seenNull := false
	for d.dec.More() {
		name, err := d.str()
		if err != nil {
			return err
		}
		d.other = name
		if name == "null" {
			if seenNull {
				return d.fail(ErrDuplicate, "")
			}
			seenNull = true
			v, err := d.num()
			if err != nil {
				return err
			}
			alone[k] = v
			continue
		}
		o, err := ParseKey(name)
		if err != nil {
			return d.wrap(err)
		}
		p := pair{k, o}
		if _, dup := coloc[p]; dup {
			return d.fail(ErrDuplicate, "")
		}
		if err := d.delim('['); err != nil {
			return err
		}
		var v [2]float64
		for i := range v {
			if v[i], err = d.num(); err != nil {
				return err
			}
		}
		if err := d.delim(']'); err != nil {
			return err
		}
		coloc[p] = v
	}
	d.other = ""
	if !seenNull {
		return d.fail(ErrValue, `missing "null" (throughput alone)`)
	}
	return d.delim('}')
}

// decoder wraps the token stream and remembers where it is for errors.
type decoder struct {
	dec                *json.Decoder
	worker, key, other string
}

func (d *decoder) fail(sentinel error, detail string) error {
	return &KeyError{Worker: d.worker, Key: d.key, Other: d.other, Detail: detail, Err: sentinel}
}

// wrap turns a ParseKey error into one that also names the worker.
func (d *decoder) wrap(err error) error {
	var ke *KeyError
	if errors.As(err, &ke) {
		return d.fail(ke.Err, ke.Detail)
	}
	return d.fail(ErrKey, err.Error())
}

func (d *decoder) token() (json.Token, error) {
	t, err := d.dec.Token()
	if err == io.EOF {
		return nil, d.fail(ErrSyntax, "unexpected end of input")
	}
	if err != nil {
		return nil, d.fail(ErrSyntax, err.Error())
	}
	return t, nil
}

func (d *decoder) delim(want json.Delim) error {
	t, err := d.token()
	if err != nil {
		return err
	}
	if got, ok := t.(json.Delim); !ok || got != want {
		return d.fail(ErrSyntax, "expected "+strconv.QuoteRune(rune(want))+", found "+describe(t))
	}
	return nil
}

func (d *decoder) str() (string, error) {
	t, err := d.token()
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", d.fail(ErrSyntax, "expected a string, found "+describe(t))
	}
	return s, nil
}

func (d *decoder) num() (float64, error) {
	t, err := d.token()
	if err != nil {
		return 0, err
	}
	n, ok := t.(json.Number)
	if !ok {
		return 0, d.fail(ErrValue, "expected a number, found "+describe(t))
	}
	v, err := strconv.ParseFloat(string(n), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) {
		return 0, d.fail(ErrValue, string(n)+" is not a finite non-negative number")
	}
	return v, nil
}

func describe(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		return strconv.QuoteRune(rune(v))
	case string:
		return "string " + strconv.Quote(v)
	case json.Number:
		return "number " + string(v)
	case bool:
		return "boolean " + strconv.FormatBool(v)
	case nil:
		return "null"
	}
	return "unexpected token"
}

// Workers returns the worker types in ascending order.
func (t *Table) Workers() []string { return slices.Clone(t.workers) }

// Keys returns the keys of one worker type, ordered by model, batch size and
// GPUs; nil for an unknown worker type.
func (t *Table) Keys(worker string) []Key {
	m := t.alone[worker]
	if m == nil {
		return nil
	}
	keys := make([]Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.BatchSize, b.BatchSize), cmp.Compare(a.GPUs, b.GPUs))
	})
	return keys
}

// Alone returns the iterations per second of k running alone on the worker
// type (the "null" entry). It may be 0: not measured, or does not fit.
func (t *Table) Alone(worker string, k Key) (float64, error) {
	m, ok := t.alone[worker]
	if !ok {
		return 0, &KeyError{Worker: worker, Err: ErrUnknownWorker}
	}
	v, ok := m[k]
	if !ok {
		return 0, &KeyError{Worker: worker, Key: k.String(), Err: ErrUnknownKey}
	}
	return v, nil
}

// Colocated returns the iterations per second of k and of other when they
// share the worker type's GPUs.
func (t *Table) Colocated(worker string, k, other Key) (self, others float64, err error) {
	m, ok := t.coloc[worker]
	if !ok {
		return 0, 0, &KeyError{Worker: worker, Err: ErrUnknownWorker}
	}
	v, ok := m[pair{k, other}]
	if !ok {
		return 0, 0, &KeyError{Worker: worker, Key: k.String(), Other: other.String(), Err: ErrUnknownKey}
	}
	return v[0], v[1], nil
}
