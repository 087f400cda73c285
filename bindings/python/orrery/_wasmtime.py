"""The wasmtime backend: orrery's WebAssembly module (ABI v1, see the Go
package wasm/abi) hosted by the wasmtime package. Used when wasmtime is
installed and no shared library is found, or when asked for.

The module imports its kernels as "orrery_kernels" (excess, rotations,
excess_slack, add_rotated, fold_delta, residues, windows, place, below; the Go package
kernels documents them). They are provided here by the
JavaScript binding's SIMD kernel module (kernels.wasm), instantiated on the
module's memory, as the JavaScript binding does. A module built with the
purego tag imports none and needs no kernel module."""

import ctypes
import os
import struct
import threading

import wasmtime  # type: ignore[import]

from ._common import (
    ABI_VERSION,
    CODES,
    MAX_REQUEST_BYTES,
    STATUSES,
    Engine,
    LinkSearchResult,
    OrreryError,
    TrapError,
    check_search_args,
    check_search_options,
    mode_number,
    too_large,
)

_MAX_BLOCK = 128 << 20
_OPTIONS_SIZE = 32
_RESULT_SIZE = 256
_RESULT = struct.Struct("<iiiiqqddd200s")

# What wasmtime raises when an instance traps or exits; the names vary a
# little across versions.
_TRAPS = tuple(c for c in (getattr(wasmtime, n, None) for n in ("Trap", "WasmtimeError", "ExitTrap")) if isinstance(c, type))


def _i32(v):
    """v (an address or length, 0..2^32) as the signed i32 wasmtime takes."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


_HERE = os.path.dirname(os.path.abspath(__file__))
_KERNELS = "orrery_kernels"


def kernels_path(module):
    """The SIMD kernel module for the module file at module, or None:
    ORRERY_KERNELS_WASM, kernels.wasm in this package, next to the module,
    or the repository's bindings/js/kernels.wasm (a checkout used in place)."""
    for p in (
        os.environ.get("ORRERY_KERNELS_WASM"),
        os.path.join(_HERE, "kernels.wasm"),
        os.path.join(os.path.dirname(os.path.abspath(module)), "kernels.wasm"),
        os.path.normpath(os.path.join(_HERE, "..", "..", "js", "kernels.wasm")),
    ):
        if p and os.path.isfile(p):
            return p
    return None


class WasmtimeEngine(Engine):
    """orrery's module in one wasmtime instance. Calls are serialized (an
    instance runs one call at a time); a trap replaces the instance."""

    backend = "wasmtime"

    def __init__(self, path):
        self.path = path
        self._engine = wasmtime.Engine()
        self._module = wasmtime.Module.from_file(self._engine, path)
        self._kernels = None
        if any(i.module == _KERNELS for i in self._module.imports):
            kp = kernels_path(path)
            if kp is None:
                raise FileNotFoundError(
                    "orrery: %s imports its kernels (%s) and no kernels.wasm was found: set "
                    "ORRERY_KERNELS_WASM to bindings/js/kernels.wasm, or build the module with "
                    "the purego tag, which imports none" % (path, _KERNELS)
                )
            self._kernels = wasmtime.Module.from_file(self._engine, kp)
        self._lock = threading.Lock()
        self._start()

    def _define_kernels(self, linker):
        """Defines the kernel imports as calls into the kernel instance,
        which exists only once the module's memory does: k gets its
        exports after instantiation."""
        k = {}
        i32, i64 = wasmtime.ValType.i32(), wasmtime.ValType.i64()
        linker.define_func(
            _KERNELS, "excess", wasmtime.FuncType([i32] * 4, [i64]),
            lambda caller, a, b, n, c: k["excess"](caller, a, b, n, c), access_caller=True,
        )
        for name, params in (("rotations", 7), ("excess_slack", 4), ("add_rotated", 4), ("fold_delta", 6), ("residues", 9), ("windows", 10), ("place", 7)):
            linker.define_func(
                _KERNELS, name, wasmtime.FuncType([i32] * params, []),
                lambda caller, *args, name=name: k[name](caller, *args), access_caller=True,
            )
        linker.define_func(
            _KERNELS, "below", wasmtime.FuncType([i32] * 4, [i32]),
            lambda caller, a, n, xlo, xhi: k["below"](caller, a, n, xlo, xhi), access_caller=True,
        )
        return k

    def _start(self):
        linker = wasmtime.Linker(self._engine)
        linker.define_wasi()
        k = self._define_kernels(linker) if self._kernels is not None else None
        store = wasmtime.Store(self._engine)
        store.set_wasi(wasmtime.WasiConfig())
        inst = linker.instantiate(store, self._module)
        x = inst.exports(store)
        if k is not None:
            kx = wasmtime.Instance(store, self._kernels, [x["memory"]]).exports(store)
            for name in ("excess", "rotations", "excess_slack", "add_rotated", "fold_delta", "residues", "windows", "place", "below"):
                k[name] = kx[name]
        x["_initialize"](store)
        self._store = store
        self._memory = x["memory"]
        self._fn = {name: x[name] for name in ("abi_version", "alloc", "free", "call", "link_search")}
        v = self._fn["abi_version"](store)
        if v != ABI_VERSION:
            raise OSError("%s speaks ABI %d, this package %d" % (self.path, v, ABI_VERSION))
        self._blocks = {"req": [0, 0], "fast": [0, 0]}

    def _x(self, name, *args):
        return self._fn[name](self._store, *(_i32(a) for a in args))

    def _base(self, ptr, n):
        """The host address of [ptr, ptr+n) in linear memory (looked up on
        every access: memory may have grown and moved)."""
        if ptr + n > self._memory.data_len(self._store):
            raise TrapError("orrery: the module returned a range outside its memory")
        return ctypes.addressof(self._memory.data_ptr(self._store).contents) + ptr

    def _read(self, ptr, n):
        return ctypes.string_at(self._base(ptr, n), n) if n else b""

    def _write(self, ptr, data):
        if data:
            ctypes.memmove(self._base(ptr, len(data)), data, len(data))

    def _ensure(self, which, n):
        b = self._blocks[which]
        if n <= b[1]:
            return b[0]
        if n > _MAX_BLOCK:
            return 0
        size = min(max(n, 2 * b[1], 4096), _MAX_BLOCK)
        if b[0]:
            self._x("free", b[0])
        b[0], b[1] = 0, 0
        p = self._x("alloc", size) & 0xFFFFFFFF
        if p:
            b[0], b[1] = p, size
        return p

    def _guard(self, fn):
        with self._lock:
            try:
                return fn()
            except _TRAPS as err:
                self._start()
                raise TrapError("orrery: the module instance trapped: %s" % err) from err

    @property
    def abi_version(self):
        return self._guard(lambda: self._x("abi_version"))

    def handle(self, envelope):
        if isinstance(envelope, str):
            envelope = envelope.encode()
        if len(envelope) > MAX_REQUEST_BYTES:
            return too_large(len(envelope))

        def run():
            ptr = 0
            if envelope:
                ptr = self._ensure("req", len(envelope))
                if not ptr:
                    raise OrreryError("limit_exceeded", "", "the module refused a %d-byte block" % len(envelope))
                self._write(ptr, envelope)
            r = self._x("call", ptr, len(envelope)) & 0xFFFFFFFFFFFFFFFF
            return self._read(r >> 32, r & 0xFFFFFFFF)

        return self._guard(run)

    def link_search(self, periods, demand, capacity, fixed=None, mode="exact", max_perimeter=0,
                    round_periods=False, restarts=0, budget=0, seed=0):
        k, total = check_search_args(periods, demand, fixed)
        check_search_options(max_perimeter, restarts, budget, seed)
        nf = k if fixed is not None else 0
        periods_at = _OPTIONS_SIZE + _RESULT_SIZE
        fixed_at = periods_at + 4 * k
        shifts_at = fixed_at + 4 * nf
        demand_at = shifts_at + 4 * k
        size = demand_at + 4 * total
        if size > _MAX_BLOCK:
            raise OrreryError("limit_exceeded", "", "%d jobs with periods summing to %d ticks do not fit in a %d-byte block" % (k, total, _MAX_BLOCK))
        opts = struct.pack("<iiiiqQ", mode_number(mode), max_perimeter, 1 if round_periods else 0, restarts, budget, seed & (2**64 - 1))
        ints = struct.pack("<%di" % k, *periods)
        if fixed is not None:
            ints += struct.pack("<%di" % k, *fixed)
        dem = struct.pack("<%di" % total, *demand)

        def run():
            base = self._ensure("fast", size)
            if not base:
                raise OrreryError("limit_exceeded", "", "the module refused a %d-byte block" % size)
            self._write(base, opts)
            self._write(base + periods_at, ints)
            self._write(base + demand_at, dem)
            code = self._x("link_search", k, base + periods_at, base + demand_at, capacity,
                           base + fixed_at if fixed is not None else 0, base, base + shifts_at, base + _OPTIONS_SIZE)
            res = _RESULT.unpack(self._read(base + _OPTIONS_SIZE, _RESULT_SIZE))
            if code != 0:
                name = CODES[code] if 0 <= code < len(CODES) else "code %d" % code
                raise OrreryError(name, "", res[9].split(b"\0", 1)[0].decode(errors="replace"))
            shifts = list(struct.unpack("<%di" % k, self._read(base + shifts_at, 4 * k)))
            return LinkSearchResult(
                shifts=shifts, status=STATUSES[res[0]], points=res[1], perimeter=res[2], grid=res[3],
                excess=res[4], evaluations=res[5], score=res[6], bound=res[7], unshifted=res[8])

        return self._guard(run)
