package codec

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
)

// BadFloat reports the first float of v (a request, or a pointer to one)
// that no request may hold: not a finite number, or below the smallest
// normal float64 in magnitude (and not 0). It returns its JSON path under
// prefix, the value and why, or ok. A Go caller can pass NaN, an infinity
// or 1e-320, which JSON cannot carry or [CheckKeys] refuses, so the typed
// operations check this first.
func BadFloat(v any, prefix string) (path string, x float64, why string, ok bool) {
	path, x, ok = badFloat(reflect.ValueOf(v), prefix)
	if ok {
		return "", 0, "", true
	}
	why = "not a finite number"
	if !math.IsNaN(x) && !math.IsInf(x, 0) {
		why = fmt.Sprintf("below the smallest normal number (%v) in magnitude: no quantity of the schema is that small", MinNormal)
	}
	return path, x, why, false
}

// goodFloat reports whether x may appear in a request.
func goodFloat(x float64) bool {
	a := math.Abs(x)
	return a <= math.MaxFloat64 && (a == 0 || a >= MinNormal)
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
			name, ok := JSONName(f)
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
