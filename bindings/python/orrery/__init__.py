"""orrery: network-aware placement (CASSINI) and fair round planning
(Shockwave) for ML-cluster schedulers, from Python with no third-party
dependency.

    import orrery
    eng = orrery.load()
    res = eng.link({"capacity_gbps": 50, "jobs": [...]})
    s = eng.new_scheduler(32)             # Shockwave's incremental scheduler

Modules: orrery.shockwave (the Shockwave authors' ShockwaveScheduler, as
a drop-in), orrery.gavel (a Gavel-style policy), orrery.agent (CASSINI's
time-shift agent for a training loop), orrery.types (TypedDicts of the
schema).

Two backends speak the same schema-v1 JSON API and answer byte for byte what
the Go engine's orrery.Handle answers:

* "native": ctypes over orrery's C shared library (liborrery.so), which
  ``pip install ./bindings/python`` builds into the package. Thread-safe;
  the GIL is released during calls.
* "wasmtime": the WebAssembly module (orrery.wasm, ``make wasm``) hosted by
  the wasmtime package, when it is installed.

``load()`` picks the first that is available: a library given by argument,
the ORRERY_LIB environment variable, the one inside this package, or the
repository's out/ directory (a checkout used in place); then the module
given by argument or ORRERY_WASM (or out/orrery.wasm) if wasmtime is
importable. With none, it says how to build one.
"""

import os

from ._common import (
    ABI_VERSION,
    MAX_REQUEST_BYTES,
    Agent,
    Engine,
    LinkSearchResult,
    OrreryError,
    Scheduler,
    TrapError,
)

__all__ = [
    "ABI_VERSION",
    "MAX_REQUEST_BYTES",
    "Agent",
    "Engine",
    "LinkSearchResult",
    "OrreryError",
    "Scheduler",
    "TrapError",
    "load",
    "library_path",
    "module_path",
]

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO_OUT = os.path.normpath(os.path.join(_HERE, "..", "..", "..", "out"))


def _lib_name():
    import sys

    if sys.platform == "darwin":
        return "liborrery.dylib"
    if sys.platform.startswith("win"):
        return "orrery.dll"
    return "liborrery.so"


def library_path(lib=None):
    """The shared library load() would use, or None."""
    for p in (lib, os.environ.get("ORRERY_LIB"), os.path.join(_HERE, _lib_name()), os.path.join(_REPO_OUT, _lib_name())):
        if p and os.path.isfile(p):
            return p
    return None


def module_path(wasm=None):
    """The WebAssembly module load() would use, or None."""
    for p in (wasm, os.environ.get("ORRERY_WASM"), os.path.join(_HERE, "orrery.wasm"), os.path.join(_REPO_OUT, "orrery.wasm")):
        if p and os.path.isfile(p):
            return p
    return None


_MISSING = (
    "orrery: no shared library in the package (%s) and none named by ORRERY_LIB. "
    "Install the package with its library built in: pip install ./bindings/python "
    "(from a checkout of the repository; needs Go and a C compiler), or build one with "
    "make cshared and pass load(lib=...) or set ORRERY_LIB." % os.path.join(_HERE, _lib_name())
)


def load(lib=None, wasm=None, backend="auto"):
    """Return an Engine.

    backend is "native" (the C shared library through ctypes), "wasmtime"
    (the WebAssembly module) or "auto" (native if a library is found, else
    wasmtime). lib and wasm name the files; see the package doc for where
    they are looked for otherwise.
    """
    if backend not in ("auto", "native", "wasmtime"):
        raise ValueError("backend must be 'auto', 'native' or 'wasmtime', not %r" % (backend,))
    if backend in ("auto", "native"):
        path = library_path(lib)
        if path:
            from ._native import NativeEngine

            return NativeEngine(path)
        if backend == "native":
            raise FileNotFoundError(_MISSING)
    path = module_path(wasm)
    if path is None:
        raise FileNotFoundError(_MISSING)
    from ._wasmtime import WasmtimeEngine  # raises ImportError without wasmtime

    return WasmtimeEngine(path)
