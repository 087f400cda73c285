// Command wasmsize reports what a Go WebAssembly module's bytes are: the
// size of each section, and the code section by Go package (function
// bodies summed by the package prefix of their names in the "name"
// section). Build the module without -s -w so the names are there (the
// stripped module's code is the same):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o /tmp/orrery-names.wasm ./wasm
//	go run ./bindings/internal/wasmsize /tmp/orrery-names.wasm
//
// go tool nm reads no WebAssembly, and the linker's -dumpdep says why a
// function is kept, not what it costs.
package main

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: wasmsize module.wasm")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err == nil {
		var m module
		if m, err = parse(data); err == nil {
			m.report(os.Stdout)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmsize:", err)
		os.Exit(1)
	}
}

// module is what wasmsize reads of a module.
type module struct {
	sections map[string]int // bytes by section name
	imported int            // imported functions, which come first in the index space
	bodies   []int          // bytes of each function body, in order
	names    map[int]string // function index -> name
}

var sectionNames = []string{"custom", "type", "import", "function", "table", "memory", "global", "export", "start", "element", "code", "data", "datacount"}

var errTruncated = errors.New("truncated module")

// reader reads LEB128 numbers and names from a byte slice.
type reader struct {
	b   []byte
	i   int
	err error
}

func (r *reader) uint() int {
	v, n := binary.Uvarint(r.b[min(r.i, len(r.b)):])
	if n <= 0 {
		r.err, r.i = errTruncated, len(r.b)
		return 0
	}
	r.i += n
	return int(v)
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || r.i+n > len(r.b) {
		r.err, r.i = errTruncated, len(r.b)
		return nil
	}
	r.i += n
	return r.b[r.i-n : r.i]
}

func parse(data []byte) (module, error) {
	m := module{sections: map[string]int{}, names: map[int]string{}}
	if len(data) < 8 || string(data[:4]) != "\x00asm" {
		return m, errors.New("not a WebAssembly module")
	}
	r := &reader{b: data, i: 8}
	for r.i < len(data) && r.err == nil {
		id := int(r.bytes(1)[0])
		body := &reader{b: r.bytes(r.uint())}
		name := fmt.Sprint("section ", id)
		if id < len(sectionNames) {
			name = sectionNames[id]
		}
		switch id {
		case 0:
			custom := string(body.bytes(body.uint()))
			name = "custom " + custom
			if custom == "name" {
				m.readNames(body)
			}
		case 2:
			m.readImports(body)
		case 10:
			for range body.uint() {
				n := body.uint()
				body.bytes(n)
				m.bodies = append(m.bodies, n)
			}
		}
		m.sections[name] += len(body.b)
		if body.err != nil {
			return m, fmt.Errorf("%s: %w", name, body.err)
		}
	}
	return m, r.err
}

func (m *module) readImports(r *reader) {
	for range r.uint() {
		r.bytes(r.uint()) // module
		r.bytes(r.uint()) // name
		switch r.bytes(1)[0] {
		case 0: // function: its type index
			r.uint()
			m.imported++
		case 1: // table: element type, limits
			r.bytes(1)
			if r.bytes(1)[0]&1 != 0 {
				r.uint()
			}
			r.uint()
		case 2: // memory: limits
			if r.bytes(1)[0]&1 != 0 {
				r.uint()
			}
			r.uint()
		case 3: // global: type, mutability
			r.bytes(2)
		}
	}
}

func (m *module) readNames(r *reader) {
	for r.i < len(r.b) && r.err == nil {
		id := r.bytes(1)[0]
		sub := &reader{b: r.bytes(r.uint())}
		if id != 1 { // function names
			continue
		}
		for range sub.uint() {
			idx := sub.uint()
			m.names[idx] = string(sub.bytes(sub.uint()))
		}
	}
}

// pkg returns the Go package of a function name as the Go linker writes
// them into the name section ("/" as "_": github.com_orrery_orrery_engine_link.(*Workspace).prepare
// is engine/cassini/link's).
func pkg(name string) string {
	name, ok := strings.CutPrefix(name, "github.com_orrery_orrery")
	if ok {
		name = "orrery" + strings.ReplaceAll(strings.SplitN(name, ".", 2)[0], "_", "/")
		return name
	}
	p, _, _ := strings.Cut(name, ".")
	return p
}

func (m module) report(w *os.File) {
	type row struct {
		name  string
		bytes int
	}
	sorted := func(by map[string]int) []row {
		var rows []row
		for k, v := range by {
			rows = append(rows, row{k, v})
		}
		slices.SortFunc(rows, func(a, b row) int { return cmp.Or(b.bytes-a.bytes, strings.Compare(a.name, b.name)) })
		return rows
	}
	fmt.Fprintln(w, "sections:")
	for _, r := range sorted(m.sections) {
		fmt.Fprintf(w, "%10d  %s\n", r.bytes, r.name)
	}
	byPkg := map[string]int{}
	for i, n := range m.bodies {
		byPkg[pkg(m.names[m.imported+i])] += n
	}
	fmt.Fprintln(w, "code by package (function bodies):")
	for _, r := range sorted(byPkg) {
		fmt.Fprintf(w, "%10d  %s\n", r.bytes, r.name)
	}
}
