"""The native backend: ctypes over orrery's C shared library (orrery.h)."""

import array
import ctypes

from ._common import (
    ABI_VERSION,
    CODES,
    STATUSES,
    Engine,
    LinkSearchResult,
    OrreryError,
    check_search_args,
    check_search_options,
    mode_number,
)


class _Options(ctypes.Structure):
    _fields_ = [
        ("mode", ctypes.c_int32),
        ("max_perimeter", ctypes.c_int32),
        ("round_periods", ctypes.c_int32),
        ("restarts", ctypes.c_int32),
        ("budget", ctypes.c_int64),
        ("seed", ctypes.c_uint64),
    ]


class _Result(ctypes.Structure):
    _fields_ = [
        ("status", ctypes.c_int32),
        ("points", ctypes.c_int32),
        ("perimeter", ctypes.c_int32),
        ("grid", ctypes.c_int32),
        ("excess", ctypes.c_int64),
        ("evaluations", ctypes.c_int64),
        ("score", ctypes.c_double),
        ("bound", ctypes.c_double),
        ("unshifted", ctypes.c_double),
        ("message", ctypes.c_char * 200),
    ]


assert ctypes.sizeof(_Options) == 32 and ctypes.sizeof(_Result) == 256

_I32P = ctypes.POINTER(ctypes.c_int32)


def _int32s(seq):
    """A ctypes int32 array over seq: no copy for a writable buffer of int32
    (array('i'), a C-contiguous numpy int32 array), else a copy."""
    n = len(seq)
    try:
        m = memoryview(seq)
        if m.itemsize == 4 and m.format.lstrip("<=@") in ("i", "l") and m.c_contiguous and not m.readonly:
            return (ctypes.c_int32 * n).from_buffer(seq)
    except TypeError:
        pass
    a = array.array("i", seq)
    return (ctypes.c_int32 * n).from_buffer(a)


class NativeEngine(Engine):
    """orrery through its C shared library, in a session of its own (the
    handles of its schedulers). Safe for concurrent use."""

    backend = "native"

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        lib.orrery_abi_version.restype = ctypes.c_int32
        lib.orrery_abi_version.argtypes = []
        lib.orrery_call.restype = ctypes.c_void_p
        lib.orrery_call.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
        lib.orrery_free.restype = None
        lib.orrery_free.argtypes = [ctypes.c_void_p]
        lib.orrery_session_new.restype = ctypes.c_uint64
        lib.orrery_session_new.argtypes = []
        lib.orrery_session_call.restype = ctypes.c_void_p
        lib.orrery_session_call.argtypes = [ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
        lib.orrery_session_free.restype = None
        lib.orrery_session_free.argtypes = [ctypes.c_uint64]
        lib.orrery_link_search.restype = ctypes.c_int32
        lib.orrery_link_search.argtypes = [
            ctypes.c_int32, _I32P, _I32P, ctypes.c_int32, _I32P,
            ctypes.POINTER(_Options), _I32P, ctypes.POINTER(_Result),
        ]
        v = lib.orrery_abi_version()
        if v != ABI_VERSION:
            raise OSError("%s speaks ABI %d, this package %d" % (path, v, ABI_VERSION))
        self._lib = lib
        self.path = path
        # The engine's own session: its scheduler handles are apart from
        # every other engine's, as a WebAssembly instance's are.
        self._session = lib.orrery_session_new()
        if not self._session:
            raise MemoryError("orrery_session_new: too many sessions open")

    @property
    def abi_version(self):
        return self._lib.orrery_abi_version()

    def handle(self, envelope):
        if isinstance(envelope, str):
            envelope = envelope.encode()
        n = ctypes.c_size_t()
        p = self._lib.orrery_session_call(self._session, bytes(envelope), len(envelope), ctypes.byref(n))
        if not p:
            raise MemoryError("orrery_call could not allocate its response")
        try:
            return ctypes.string_at(p, n.value)
        finally:
            self._lib.orrery_free(p)

    def close(self):
        """Close the engine's session and its schedulers."""
        if self._session:
            self._lib.orrery_session_free(self._session)
            self._session = 0

    def __del__(self):
        lib = getattr(self, "_lib", None)
        if lib is not None and getattr(self, "_session", 0):
            lib.orrery_session_free(self._session)

    def link_search(self, periods, demand, capacity, fixed=None, mode="exact", max_perimeter=0,
                    round_periods=False, restarts=0, budget=0, seed=0):
        k, _ = check_search_args(periods, demand, fixed)
        check_search_options(max_perimeter, restarts, budget, seed)
        opt = _Options(mode_number(mode), max_perimeter, 1 if round_periods else 0, restarts, budget, seed & (2**64 - 1))
        res = _Result()
        shifts = (ctypes.c_int32 * k)()
        fx = _int32s(fixed) if fixed is not None else None
        code = self._lib.orrery_link_search(
            k, _int32s(periods), _int32s(demand), capacity, fx, ctypes.byref(opt), shifts, ctypes.byref(res))
        if code != 0:
            name = CODES[code] if 0 <= code < len(CODES) else "code %d" % code
            raise OrreryError(name, "", res.message.decode(errors="replace"))
        return LinkSearchResult(
            shifts=list(shifts), status=STATUSES[res.status], points=res.points, perimeter=res.perimeter,
            grid=res.grid, excess=res.excess, evaluations=res.evaluations, score=res.score, bound=res.bound,
            unshifted=res.unshifted)
