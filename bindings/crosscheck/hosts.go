package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/orrery/orrery"
	orrerywasm "github.com/orrery/orrery/bindings/go"
	"github.com/orrery/orrery/bindings/internal/build"
	"github.com/orrery/orrery/bindings/internal/corpus"
)

// artifacts are the built modules and library and where the repository
// is: module imports its kernels (which wazero's host provides natively),
// portable is the purego build, which imports none (what any other WASI
// host runs).
type artifacts struct {
	root, corpus string
	wasm, lib    string
	portableWasm string
	module       *orrerywasm.Module
	portable     *orrerywasm.Module
}

// errMissing marks a host whose program (node, python3, wasmtime) is not
// installed.
var errMissing = errors.New("not installed")

// prepare builds the module and the C shared library into dir.
func prepare(ctx context.Context, dir string) (*artifacts, error) {
	root, err := build.Root(ctx)
	if err != nil {
		return nil, err
	}
	a := &artifacts{root: root, corpus: filepath.Join(root, "testdata", "corpus"),
		wasm: filepath.Join(dir, "orrery.wasm"), lib: filepath.Join(dir, build.SharedLibName())}
	if err := build.Wasm(ctx, a.wasm); err != nil {
		return nil, err
	}
	a.portableWasm = filepath.Join(dir, "orrery-portable.wasm")
	if err := build.WasmPortable(ctx, a.portableWasm); err != nil {
		return nil, err
	}
	if err := build.CShared(ctx, a.lib); err != nil {
		return nil, err
	}
	var err2 error
	if a.module, err2 = newModule(ctx, a.wasm, true); err2 != nil {
		return nil, err2
	}
	if a.portable, err2 = newModule(ctx, a.portableWasm, false); err2 != nil {
		a.module.Close(ctx)
		return nil, err2
	}
	return a, nil
}

// newModule compiles the module at path after checking whether it imports
// its kernels, as the build it comes from must.
func newModule(ctx context.Context, path string, kernels bool) (*orrerywasm.Module, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	got, err := orrerywasm.ImportsKernels(ctx, b)
	if err != nil {
		return nil, err
	}
	if got != kernels {
		return nil, fmt.Errorf("%s: imports its kernels: %v, want %v", filepath.Base(path), got, kernels)
	}
	return orrerywasm.New(ctx, b, orrerywasm.Options{})
}

// A host answers the corpus (response bytes by case name) and runs
// benchmarks (ns/op by benchmark name; names it has no counterpart for are
// left out).
type host struct {
	name     string
	optional bool // only where installed (wasmtime is not on a fresh machine)
	corpus   func(ctx context.Context, a *artifacts, cases []corpus.Case) (map[string][]byte, error)
	bench    func(ctx context.Context, a *artifacts, names []string) (map[string]float64, error)
}

// hosts are every host the check knows, the reference (native) first.
var hosts = []host{
	{name: "native", corpus: nativeCorpus, bench: nativeBench},
	{name: "wazero", corpus: wazeroCorpus, bench: wazeroBench},
	{name: "wazero-portable", corpus: portableCorpus, bench: portableBench},
	program("node", nodeCmd),
	program("python", func(a *artifacts, mode string, names ...string) command {
		return pythonCmd(a, mode, "native", names...)
	}),
	optional(program("python-wasmtime", func(a *artifacts, mode string, names ...string) command {
		c := pythonCmd(a, mode, "wasmtime", names...)
		c.needs = "wasmtime"
		return c
	})),
}

func optional(h host) host {
	h.optional = true
	return h
}

func nativeCorpus(ctx context.Context, _ *artifacts, cases []corpus.Case) (map[string][]byte, error) {
	out := make(map[string][]byte, len(cases))
	for _, c := range cases {
		s := orrery.NewSession()
		out[c.Name], _ = c.Answer(func(env []byte) ([]byte, error) { return s.Handle(ctx, env), nil })
	}
	return out, nil
}

// portableCorpus answers the corpus with the purego module in wazero.
func portableCorpus(ctx context.Context, a *artifacts, cases []corpus.Case) (map[string][]byte, error) {
	return moduleCorpus(ctx, a.portable, cases)
}

func wazeroCorpus(ctx context.Context, a *artifacts, cases []corpus.Case) (map[string][]byte, error) {
	return moduleCorpus(ctx, a.module, cases)
}

func moduleCorpus(ctx context.Context, m *orrerywasm.Module, cases []corpus.Case) (map[string][]byte, error) {
	out := make(map[string][]byte, len(cases))
	for _, c := range cases {
		handle := m.Handle
		if c.Session() {
			s, err := m.NewSession(ctx)
			if err != nil {
				return nil, err
			}
			defer s.Close(ctx)
			handle = s.Handle
		}
		b, err := c.Answer(func(env []byte) ([]byte, error) { return handle(ctx, env) })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		out[c.Name] = b
	}
	return out, nil
}

// command is a program to run, with extra environment, and the Python
// package it needs ("" if none).
type command struct {
	args  []string
	env   []string
	needs string
}

// program is a host that runs as another process: host.mjs or host.py.
func program(name string, cmd func(a *artifacts, mode string, names ...string) command) host {
	return host{
		name: name,
		corpus: func(ctx context.Context, a *artifacts, _ []corpus.Case) (map[string][]byte, error) {
			lines, err := run[struct {
				Name string `json:"name"`
				B64  string `json:"b64"`
			}](ctx, cmd(a, "corpus"))
			if err != nil {
				return nil, err
			}
			out := make(map[string][]byte, len(lines))
			for _, l := range lines {
				if out[l.Name], err = base64.StdEncoding.DecodeString(l.B64); err != nil {
					return nil, err
				}
			}
			return out, nil
		},
		bench: func(ctx context.Context, a *artifacts, names []string) (map[string]float64, error) {
			lines, err := run[struct {
				Name    string  `json:"name"`
				NsPerOp float64 `json:"ns_per_op"`
			}](ctx, cmd(a, "bench", names...))
			if err != nil {
				return nil, err
			}
			out := make(map[string]float64, len(lines))
			for _, l := range lines {
				out[l.Name] = l.NsPerOp
			}
			return out, nil
		},
	}
}

// nodeCmd runs bindings/js/tools/host.mjs.
func nodeCmd(a *artifacts, mode string, names ...string) command {
	args := []string{"node", "--no-warnings", filepath.Join(a.root, "bindings", "js", "tools", "host.mjs"), mode, a.wasm, a.corpus}
	return command{args: append(args, names...)}
}

// pythonCmd runs bindings/python/tools/host.py on a backend.
func pythonCmd(a *artifacts, mode, backend string, names ...string) command {
	args := []string{"python3", filepath.Join(a.root, "bindings", "python", "tools", "host.py"), mode, backend, a.corpus}
	return command{args: append(args, names...), env: []string{"ORRERY_LIB=" + a.lib, "ORRERY_WASM=" + a.wasm}}
}

// run runs c and decodes each line of its output into a T.
func run[T any](ctx context.Context, c command) ([]T, error) {
	if _, err := exec.LookPath(c.args[0]); err != nil {
		return nil, fmt.Errorf("%s: %w", c.args[0], errMissing)
	}
	if c.needs != "" && exec.CommandContext(ctx, c.args[0], "-c", "import "+c.needs).Run() != nil {
		return nil, fmt.Errorf("the %s package: %w", c.needs, errMissing)
	}
	cmd := exec.CommandContext(ctx, c.args[0], c.args[1:]...)
	cmd.Env = append(os.Environ(), c.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", strings.Join(c.args, " "), err, stderr.Bytes())
	}
	var lines []T
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s: bad output line %.200q: %v", c.args[0], sc.Bytes(), err)
		}
		lines = append(lines, v)
	}
	return lines, sc.Err()
}
