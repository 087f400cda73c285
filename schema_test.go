package orrery

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/orrery/orrery/internal/codec"
)

// The published JSON Schema of schema v1 (schema/v1.json) and the Python
// TypedDicts (bindings/python/orrery/types.py) are generated from the Go
// types of the registry's operations; the TypeScript declarations
// (bindings/js/orrery.d.ts) are written by hand and checked against the
// same types. Regenerate after changing a type:
//
//	go test -run TestSchema -update-schema .
var updateSchema = flag.Bool("update-schema", false, "rewrite schema/v1.json and bindings/python/orrery/types.py")

const (
	schemaFile = "schema/v1.json"
	pythonFile = "bindings/python/orrery/types.py"
)

// schemaGen walks Go types into JSON Schema definitions.
type schemaGen struct {
	defs map[string]any
	// fields of each definition, in order, for the Python and TypeScript
	// checks: name, whether required, and the Go type.
	fields map[string][]schemaField
}

type schemaField struct {
	name     string
	required bool
	t        reflect.Type
}

var (
	jobIDType = reflect.TypeFor[JobID]()
	rawType   = reflect.TypeFor[json.RawMessage]()
)

// ref returns the schema of t: a $ref to a definition for a named struct.
func (g *schemaGen) ref(t reflect.Type, response bool) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == jobIDType:
		return map[string]any{"oneOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "string", "minLength": 1}}}
	case t == rawType:
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": g.ref(t.Elem(), response)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.ref(t.Elem(), response)}
	case reflect.Struct:
		g.define(t, response)
		return map[string]any{"$ref": "#/$defs/" + t.Name()}
	}
	panic(fmt.Sprintf("schema: no JSON for %v", t))
}

// define adds the definition of struct t: its JSON keys as encoding/json
// sees them (embedded structs inlined, shadowed fields left out). A
// request field is never required (the decoder takes an absent one as its
// zero value, or the default); a response field is required unless
// omitempty.
func (g *schemaGen) define(t reflect.Type, response bool) {
	if _, ok := g.defs[t.Name()]; ok {
		return
	}
	g.defs[t.Name()] = nil // in progress: types may refer to themselves
	props := map[string]any{}
	var fields []schemaField
	var required []string
	for _, f := range reflect.VisibleFields(t) {
		name, ok := codec.JSONName(f)
		if !ok || slices.ContainsFunc(fields, func(x schemaField) bool { return x.name == name }) {
			continue
		}
		omit := strings.Contains(f.Tag.Get("json"), ",omitempty")
		req := response && !omit
		props[name] = g.ref(f.Type, response)
		fields = append(fields, schemaField{name, req, f.Type})
		if req {
			required = append(required, name)
		}
	}
	def := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		def["required"] = required
	}
	g.defs[t.Name()] = def
	g.fields[t.Name()] = fields
}

// generate returns the schema document, its definitions' fields, and the
// request and response definition of every op.
func generate() ([]byte, *schemaGen) {
	g := &schemaGen{defs: map[string]any{}, fields: map[string][]schemaField{}}
	var envelopes, ops []any
	for _, o := range registry {
		req := g.ref(o.req, false)
		resp := g.ref(o.resp, true)
		envelopes = append(envelopes, map[string]any{
			"type":                 "object",
			"properties":           map[string]any{"op": map[string]any{"const": o.Name}, "request": req},
			"required":             []string{"op", "request"},
			"additionalProperties": false,
		})
		ops = append(ops, map[string]any{"op": o.Name, "summary": o.Summary, "stateful": o.Session,
			"request": req["$ref"], "response": resp["$ref"]})
	}
	doc := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"title":   "orrery schema v1: request envelopes",
		"description": "Generated from the Go types of github.com/orrery/orrery (go test -run TestSchema -update-schema .). " +
			"A request envelope is one of oneOf; x-orrery-ops gives each operation's request and response definitions. " +
			"Request fields are all optional to the decoder (absent is the zero value or the default; explicit null is refused); " +
			"response fields are present unless marked optional. Responses come in {\"version\": 1, \"op\", \"response\"} or " +
			"{\"version\": 1, \"op\", \"error\": {\"code\", \"field\", \"message\"}}.",
		"oneOf":        envelopes,
		"x-orrery-ops": ops,
		"$defs":        g.defs,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n'), g
}

// TestSchema: the committed schema and Python types are what the Go types
// generate.
func TestSchema(t *testing.T) {
	schema, g := generate()
	py := pythonTypes(g)
	for _, f := range []struct {
		path string
		want []byte
	}{{schemaFile, schema}, {pythonFile, py}} {
		if *updateSchema {
			if err := os.WriteFile(f.path, f.want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.want) {
			t.Errorf("%s is not what the Go types generate: run go test -run TestSchema -update-schema .", f.path)
		}
	}
}

// pythonTypes renders the definitions as TypedDicts (total=False for
// requests: every key optional; responses mark their optional keys with
// NotRequired in a comment-free, Python 3.8-compatible way: a total base
// and a total=False extension).
func pythonTypes(g *schemaGen) []byte {
	var b bytes.Buffer
	b.WriteString(`"""TypedDicts of orrery's schema v1, generated from the Go types with
schema/v1.json (go test -run TestSchema -update-schema .): do not edit.

Request types have every key optional (the engine takes an absent key as
its default); response types have their always-present keys required.
"""

import sys
from typing import Any, Dict, List, Union

if sys.version_info >= (3, 8):
    from typing import TypedDict
else:  # pragma: no cover
    TypedDict = dict

JobId = Union[int, str]
`)
	names := make([]string, 0, len(g.fields))
	for n := range g.fields {
		names = append(names, n)
	}
	sort.Strings(names)
	// Python needs a class defined before it is named in another's
	// annotation: forward references as strings avoid ordering.
	for _, n := range names {
		fields := g.fields[n]
		var req, opt []schemaField
		for _, f := range fields {
			if f.required {
				req = append(req, f)
			} else {
				opt = append(opt, f)
			}
		}
		keyword := slices.ContainsFunc(fields, func(f schemaField) bool { return pyKeywords[f.name] })
		if keyword && len(req) > 0 {
			panic("schema: " + n + " has a Python keyword among keys of both kinds")
		}
		if keyword { // "lambda": only the functional syntax takes it
			fmt.Fprintf(&b, "\n\n%s = TypedDict(\n    %q,\n    {\n", n, n)
			for _, f := range opt {
				fmt.Fprintf(&b, "        %q: %s,\n", f.name, pyType(f.t))
			}
			b.WriteString("    },\n    total=False,\n)\n")
			continue
		}
		base := "TypedDict"
		if len(req) > 0 {
			fmt.Fprintf(&b, "\n\nclass _%sRequired(TypedDict):\n", n)
			for _, f := range req {
				fmt.Fprintf(&b, "    %s: %s\n", f.name, pyType(f.t))
			}
			base = "_" + n + "Required"
		}
		fmt.Fprintf(&b, "\n\nclass %s(%s, total=False):\n", n, base)
		if len(opt) == 0 {
			b.WriteString("    pass\n")
		}
		for _, f := range opt {
			fmt.Fprintf(&b, "    %s: %s\n", f.name, pyType(f.t))
		}
	}
	return b.Bytes()
}

// pyKeywords are the keys a TypedDict class body cannot declare.
var pyKeywords = map[string]bool{"lambda": true, "class": true, "def": true, "from": true, "import": true, "global": true,
	"return": true, "yield": true, "pass": true, "in": true, "is": true, "not": true, "and": true, "or": true, "if": true,
	"else": true, "elif": true, "for": true, "while": true, "with": true, "as": true, "try": true, "except": true,
	"finally": true, "raise": true, "del": true, "assert": true, "break": true, "continue": true, "None": true,
	"True": true, "False": true, "nonlocal": true, "async": true, "await": true}

func pyType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == jobIDType:
		return "JobId"
	case t == rawType:
		return "Any"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.String:
		return "str"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "float"
	case reflect.Slice, reflect.Array:
		return "List[" + pyType(t.Elem()) + "]"
	case reflect.Map:
		return "Dict[str, " + pyType(t.Elem()) + "]"
	case reflect.Struct:
		return `"` + t.Name() + `"`
	}
	return "Any"
}

// tsNames maps the schema's definitions to the TypeScript declarations'
// interfaces that stand for them (an empty name: not declared, the
// binding's method returns or takes plain values instead).
var tsNames = map[string]string{
	"LinkRequest":              "LinkRequest",
	"LinkResponse":             "LinkResponse",
	"RankRequest":              "RankRequest",
	"RankResponse":             "RankResponse",
	"CandidateResult":          "CandidateResult",
	"JobSpec":                  "Job",
	"PhaseSpec":                "Phase",
	"SeriesSpec":               "SeriesSource",
	"EventsSpec":               "EventsSource",
	"ProfileRequest":           "ProfileRequest",
	"ProfileResponse":          "ProfileResponse",
	"ShockwavePlanRequest":     "PlanRequest",
	"ShockwavePlanResponse":    "PlanResponse",
	"ShockwaveConfig":          "SchedulerConfig",
	"ShockwaveJob":             "PlanJob",
	"ShockwavePredictResponse": "PredictResponse",
	"SchedulerJob":             "SchedulerJob",
	"SchedulerState":           "SchedulerState",
	"SchedulerPlan":            "SchedulerPlan",
	"AgentPlan":                "AgentPlan",
	"AgentNewRequest":          "AgentNewRequest",
	"AgentDecision":            "AgentDecision",
	"AgentStats":               "AgentStats",
}

// TestSchemaMatchesTypeScript: each TypeScript interface that stands for
// a schema definition has exactly its keys, optional exactly where the
// schema's response keys are (request keys: optional or not, as the
// declarations document what a caller must give).
func TestSchemaMatchesTypeScript(t *testing.T) {
	_, g := generate()
	src, err := os.ReadFile("bindings/js/orrery.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	ifaces := parseTS(string(src))
	for def, ts := range tsNames {
		fields, ok := g.fields[def]
		if !ok {
			t.Errorf("tsNames: no schema definition %s", def)
			continue
		}
		got, ok := tsKeys(ifaces, ts, map[string]bool{})
		if !ok {
			t.Errorf("orrery.d.ts: no interface %s (schema %s)", ts, def)
			continue
		}
		want := map[string]bool{}
		for _, f := range fields {
			want[f.name] = f.required
		}
		for k, req := range want {
			opt, ok := got[k]
			switch {
			case !ok:
				t.Errorf("orrery.d.ts: %s lacks %q (schema %s)", ts, k, def)
			case req && opt:
				t.Errorf("orrery.d.ts: %s.%s is optional; the schema's %s always has it", ts, k, def)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("orrery.d.ts: %s has %q, which the schema's %s does not", ts, k, def)
			}
		}
	}
}

// tsInterface is a parsed `export interface Name extends A, B { ... }`.
type tsInterface struct {
	extends []string
	keys    map[string]bool // key -> optional
}

var (
	tsIfaceRe = regexp.MustCompile(`(?m)^export interface (\w+)(?: extends ([^{]+))? \{`)
	tsKeyRe   = regexp.MustCompile(`^  (\w+)(\??):`)
)

func parseTS(src string) map[string]tsInterface {
	out := map[string]tsInterface{}
	for _, m := range tsIfaceRe.FindAllStringSubmatchIndex(src, -1) {
		name := src[m[2]:m[3]]
		var ext []string
		if m[4] >= 0 {
			ext = splitTop(src[m[4]:m[5]])
		}
		body := src[m[1]:]
		if end := strings.Index(body, "\n}"); end >= 0 {
			body = body[:end]
		}
		keys := map[string]bool{}
		for _, line := range strings.Split(body, "\n") {
			if km := tsKeyRe.FindStringSubmatch(line); km != nil {
				keys[km[1]] = km[2] == "?"
			}
		}
		out[name] = tsInterface{ext, keys}
	}
	return out
}

// splitTop splits "A, Omit<B, 'x' | 'y'>" at its top-level commas.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '<':
			depth++
		case '>':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

var omitRe = regexp.MustCompile(`^Omit<(\w+), (.+)>$`)

// tsKeys returns an interface's keys with those it extends (Omit<T, 'k'>
// leaves k out).
func tsKeys(ifaces map[string]tsInterface, name string, seen map[string]bool) (map[string]bool, bool) {
	it, ok := ifaces[name]
	if !ok || seen[name] {
		return nil, ok
	}
	seen[name] = true
	keys := map[string]bool{}
	for _, e := range it.extends {
		base, omit := e, map[string]bool{}
		if m := omitRe.FindStringSubmatch(e); m != nil {
			base = m[1]
			for _, k := range strings.Split(m[2], "|") {
				omit[strings.Trim(strings.TrimSpace(k), "'")] = true
			}
		}
		bk, ok := tsKeys(ifaces, base, seen)
		if !ok {
			return nil, false
		}
		for k, v := range bk {
			if !omit[k] {
				keys[k] = v
			}
		}
	}
	for k, v := range it.keys {
		keys[k] = v
	}
	return keys, true
}
