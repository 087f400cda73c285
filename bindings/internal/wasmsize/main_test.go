package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A module with one imported function and two bodies named by package:
// the bodies are attributed past the import, by package.
func TestParse(t *testing.T) {
	name := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	section := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	imports := append([]byte{1}, name("env")...)
	imports = append(append(imports, name("f")...), 0, 0)
	code := []byte{2, 3, 0, 0x0b, 0x0b, 5, 0, 0x01, 0x01, 0x01, 0x0b}
	names := append([]byte{3, 0}, name("env.f")...)
	names = append(append(names, 1), name("github.com_orrery_orrery_engine_cassini_link.(*Workspace).prepare")...)
	names = append(append(names, 2), name("runtime.main")...)
	custom := append(name("name"), append([]byte{1, byte(len(names))}, names...)...)
	data := []byte("\x00asm\x01\x00\x00\x00")
	data = append(data, section(2, imports...)...)
	data = append(data, section(10, code...)...)
	data = append(data, section(0, custom...)...)
	m, err := parse(data)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for i, n := range m.bodies {
		by[pkg(m.names[m.imported+i])] += n
	}
	if diff := cmp.Diff(map[string]int{"orrery/engine/cassini/link": 3, "runtime": 5}, by); diff != "" {
		t.Errorf("code by package (-want +got):\n%s", diff)
	}
	if m.sections["code"] != len(code) || m.sections["import"] != len(imports) {
		t.Errorf("sections %v", m.sections)
	}
	if _, err := parse(data[:len(data)-3]); err == nil {
		t.Error("a truncated module parsed")
	}
}
