package codec

import (
	"reflect"
	"strings"
	"sync"
)

// Raw is a JSON value kept as its bytes: decoded as any value, encoded
// as is.
type Raw []byte

// MarshalJSON returns r, or null when r is empty.
func (r Raw) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps a copy of b.
func (r *Raw) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// marshalerJSON and unmarshalerJSON are encoding/json's Marshaler and
// Unmarshaler, declared here so the codec needs nothing of that package.
type marshalerJSON interface{ MarshalJSON() ([]byte, error) }

type unmarshalerJSON interface{ UnmarshalJSON([]byte) error }

var (
	rawType         = reflect.TypeFor[Raw]()
	marshalerType   = reflect.TypeFor[marshalerJSON]()
	unmarshalerType = reflect.TypeFor[unmarshalerJSON]()
)

// codecField is a struct field as JSON sees it: its key, where it is (an
// index path through embedded structs) and whether omitempty drops it.
type codecField struct {
	name      string
	key       []byte // the encoded key and its colon, "name":
	index     []int
	omitEmpty bool
	typ       *schemaType
}

// schemaType is what the key scan and the codec know of a Go type, worked
// out once per type so that a scan or a decoding walks these nodes rather
// than asking reflect again at every value (reflect.PointerTo and
// Implements at each value cost the key scan most of its time in
// WebAssembly).
type schemaType struct {
	t    reflect.Type
	kind reflect.Kind
	// anyValue: the type takes any JSON value (Raw, a type with its own
	// UnmarshalJSON, a registered type), so the scan checks nothing
	// inside it; custom: it was registered (see Register).
	anyValue bool
	custom   *custom
	elem     *schemaType            // of a pointer, slice, array or map
	fields   []codecField           // of a struct, in encoding/json's order
	keyTypes map[string]*schemaType // field type by key, for the scan
}

// schemaTypes caches schemaType by reflect.Type, the way encoding/json
// caches its encoders: a type's node depends on the type alone. building
// serializes the building of new nodes, which may refer to each other.
var (
	schemaTypes sync.Map
	building    sync.Mutex
)

// schemaOf returns t's node.
func schemaOf(t reflect.Type) *schemaType {
	if st, ok := schemaTypes.Load(t); ok {
		return st.(*schemaType)
	}
	building.Lock()
	defer building.Unlock()
	fresh := map[reflect.Type]*schemaType{}
	st := buildSchema(t, fresh)
	for t, st := range fresh {
		schemaTypes.Store(t, st)
	}
	return st
}

func buildSchema(t reflect.Type, fresh map[reflect.Type]*schemaType) *schemaType {
	if st, ok := schemaTypes.Load(t); ok {
		return st.(*schemaType)
	}
	if st, ok := fresh[t]; ok {
		return st // a recursive type: filled in below, further up
	}
	st := &schemaType{t: t, kind: t.Kind()}
	fresh[t] = st
	if c, ok := customs.Load(t); ok {
		st.custom = c.(*custom)
	}
	st.anyValue = t == rawType || st.custom != nil || reflect.PointerTo(t).Implements(unmarshalerType)
	switch st.kind {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		st.elem = buildSchema(t.Elem(), fresh)
	case reflect.Struct:
		st.fields = jsonFields(t)
		st.keyTypes = make(map[string]*schemaType, len(st.fields))
		for i := range st.fields {
			f := &st.fields[i]
			f.typ = buildSchema(t.FieldByIndex(f.index).Type, fresh)
			f.key = append(AppendString(nil, f.name), ':')
			st.keyTypes[f.name] = f.typ
		}
	}
	return st
}

// fieldIndex returns the index in st.fields of the field of key name, or
// -1: it compares from hint on, round, since a request's keys mostly come
// in the fields' order (a hash of the key, in a map, costs more than the
// one or two comparisons that then find it).
func (st *schemaType) fieldIndex(name []byte, hint int) int {
	n := len(st.fields)
	i := min(max(hint, 0), n)
	for range n {
		if i == n {
			i = 0
		}
		if st.fields[i].name == string(name) {
			return i
		}
		i++
	}
	return -1
}

// jsonFields returns the JSON fields of struct t in encoding/json's order
// and with its rule for embedded structs: of the fields sharing a key, the
// shallowest wins, a tagged one breaks a tie at that depth, and a tie that
// remains drops them all.
func jsonFields(t reflect.Type) []codecField {
	type cand struct {
		codecField
		tagged bool
	}
	var all []cand
	for _, f := range reflect.VisibleFields(t) {
		name, ok := JSONName(f)
		if !ok || f.Type.Kind() == reflect.Func || f.Type.Kind() == reflect.Chan {
			continue
		}
		tag := f.Tag.Get("json")
		_, opts, _ := strings.Cut(tag, ",")
		all = append(all, cand{codecField{name: name, index: f.Index, omitEmpty: hasOption(opts, "omitempty")}, tag != "" && !strings.HasPrefix(tag, ",")})
	}
	var out []codecField
	for i, c := range all {
		win, tie := true, false
		for j, d := range all {
			if i == j || d.name != c.name {
				continue
			}
			switch {
			case len(d.index) < len(c.index):
				win = false
			case len(d.index) == len(c.index) && d.tagged && !c.tagged:
				win = false
			case len(d.index) == len(c.index) && d.tagged == c.tagged:
				tie = true
			}
		}
		if win && !tie {
			out = append(out, c.codecField)
		}
	}
	return out
}

func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}
