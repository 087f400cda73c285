package orrery

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
)

// checkFloats reports the first float64 of a request (v, a pointer to it)
// that is not a finite number or is below the smallest normal float64 in
// magnitude (and not 0), named by its JSON path under prefix: what the
// typed functions check first, since a Go caller can pass NaN, an
// infinity or 1e-320, which JSON cannot carry or the key scan refuses
// (see checkKeys). The JSON operations skip it: their requests hold none.
func checkFloats(prefix string, v any) error {
	path, x, ok := badFloat(reflect.ValueOf(v), prefix)
	if ok {
		return nil
	}
	why := "not a finite number"
	if !math.IsNaN(x) && !math.IsInf(x, 0) {
		why = fmt.Sprintf("below the smallest normal number (%v) in magnitude: no quantity of the schema is that small", minNormal)
	}
	return fieldError(path, fmt.Errorf("%w: %v is %s", ErrInvalid, x, why))
}

// goodFloat reports whether x may appear in a request.
func goodFloat(x float64) bool {
	a := math.Abs(x)
	return a <= math.MaxFloat64 && (a == 0 || a >= minNormal)
}

// badFloat walks v and returns the path and value of its first bad float,
// or ok.
func badFloat(v reflect.Value, path string) (string, float64, bool) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if x := v.Float(); !goodFloat(x) {
			return path, x, false
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return badFloat(v.Elem(), path)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous && f.Tag.Get("json") == "" {
				if p, x, ok := badFloat(v.Field(i), path); !ok { // inlined into its parent's object
					return p, x, false
				}
				continue
			}
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			if p, x, ok := badFloat(v.Field(i), joinPath(path, name)); !ok {
				return p, x, false
			}
		}
	case reflect.Slice, reflect.Array:
		if fs, ok := v.Interface().([]float64); ok {
			for i, x := range fs {
				if !goodFloat(x) {
					return path + "[" + strconv.Itoa(i) + "]", x, false
				}
			}
			return "", 0, true
		}
		if k := v.Type().Elem().Kind(); k != reflect.Struct && k != reflect.Pointer && k != reflect.Slice && k != reflect.Float32 {
			return "", 0, true // ints, strings, ids: no floats
		}
		for i := range v.Len() {
			if p, x, ok := badFloat(v.Index(i), path+"["+strconv.Itoa(i)+"]"); !ok {
				return p, x, false
			}
		}
	}
	return "", 0, true
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
