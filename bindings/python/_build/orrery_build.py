"""orrery's PEP 517 build backend, written with the standard library only,
so that ``pip install ./bindings/python`` works with no package index and no
setuptools or wheel installed.

build_wheel compiles orrery's C shared library from the Go sources of the
repository this directory belongs to:

    go build -buildmode=c-shared -trimpath -o orrery/liborrery.so ./bindings/c

(the Go toolchain and a C compiler for cgo are needed; the module's
dependencies come from Go's module cache, as for any build of the
repository) and writes a wheel holding the Python package and the library,
tagged for this platform (py3-none-linux_x86_64, for example): the library
is a native file but no Python extension, so any Python 3 of the platform
loads it.

Environment: ORRERY_GO names the go command (default: go on PATH, then
/usr/local/go/bin/go); ORRERY_LIB names a prebuilt library to package
instead of building one.
"""

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

NAME = "orrery"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # bindings/python


def _version():
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as fh:
        m = re.search(r'^version\s*=\s*"([^"]+)"', fh.read(), re.M)
    if not m:
        raise RuntimeError("orrery_build: no version in pyproject.toml")
    return m.group(1)


def _lib_name():
    if sys.platform == "darwin":
        return "liborrery.dylib"
    if sys.platform.startswith("win"):
        return "orrery.dll"
    return "liborrery.so"


def _platform_tag():
    return re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())


def _repo_root():
    d = HERE
    for _ in range(4):
        d = os.path.dirname(d)
        if os.path.isfile(os.path.join(d, "go.mod")) and os.path.isdir(os.path.join(d, "bindings", "c")):
            return d
    raise RuntimeError(
        "orrery_build: the Go sources are not here (no go.mod above %s): build the package from a "
        "checkout of the orrery repository (pip install ./bindings/python), or set ORRERY_LIB to a "
        "prebuilt library (make cshared)" % HERE)


def _go():
    for cand in (os.environ.get("ORRERY_GO"), shutil.which("go"), "/usr/local/go/bin/go"):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    raise RuntimeError("orrery_build: no Go toolchain (go is not on PATH; set ORRERY_GO to the go command)")


def _build_library(out):
    prebuilt = os.environ.get("ORRERY_LIB")
    if prebuilt:
        shutil.copyfile(prebuilt, out)
        return
    root = _repo_root()
    env = dict(os.environ, CGO_ENABLED="1")
    cmd = [_go(), "build", "-buildmode=c-shared", "-trimpath", "-o", out, "./bindings/c"]
    sys.stderr.write("orrery_build: %s (in %s)\n" % (" ".join(cmd), root))
    r = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        raise RuntimeError("orrery_build: building the shared library failed:\n%s" % r.stdout.decode(errors="replace"))
    header = os.path.splitext(out)[0] + ".h"
    if os.path.exists(header):  # cgo's generated header; orrery.h is the interface
        os.remove(header)


def _metadata(version):
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    return (
        "Metadata-Version: 2.1\n"
        "Name: %s\n"
        "Version: %s\n"
        "Summary: orrery's optimization engine (CASSINI placement, Shockwave rounds) for Python, no dependencies\n"
        "License: Apache-2.0\n"
        "Requires-Python: >=3.8\n"
        "Provides-Extra: wasmtime\n"
        "Requires-Dist: wasmtime; extra == \"wasmtime\"\n"
        "Description-Content-Type: text/markdown\n"
        "\n%s" % (NAME, version, readme)
    )


def _wheel_name(version):
    return "%s-%s-py3-none-%s.whl" % (NAME, version, _platform_tag())


def _sources():
    """The package's files: (path in the wheel, path on disk)."""
    pkg = os.path.join(HERE, NAME)
    for f in sorted(os.listdir(pkg)):
        if f.endswith(".py") or f.endswith(".pyi") or f == "py.typed":
            yield NAME + "/" + f, os.path.join(pkg, f)


class _Wheel:
    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records = []

    def add(self, name, data):
        info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.records.append("%s,sha256=%s,%d" % (name, digest, len(data)))

    def close(self, dist_info):
        self.records.append("%s/RECORD,," % dist_info)
        info = zipfile.ZipInfo(dist_info + "/RECORD", date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        self.zip.writestr(info, "\n".join(self.records) + "\n")
        self.zip.close()


def _dist_info_files(version):
    tag = "py3-none-" + _platform_tag()
    return {
        "METADATA": _metadata(version),
        "WHEEL": "Wheel-Version: 1.0\nGenerator: orrery_build\nRoot-Is-Purelib: false\nTag: %s\n" % tag,
        "top_level.txt": NAME + "\n",
    }


# ---- PEP 517 hooks

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version()
    dist_info = "%s-%s.dist-info" % (NAME, version)
    d = os.path.join(metadata_directory, dist_info)
    os.makedirs(d, exist_ok=True)
    for name, text in _dist_info_files(version).items():
        with open(os.path.join(d, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    return dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    dist_info = "%s-%s.dist-info" % (NAME, version)
    name = _wheel_name(version)
    with tempfile.TemporaryDirectory() as tmp:
        lib = os.path.join(tmp, _lib_name())
        _build_library(lib)
        w = _Wheel(os.path.join(wheel_directory, name))
        for arc, path in _sources():
            with open(path, "rb") as fh:
                w.add(arc, fh.read())
        with open(lib, "rb") as fh:
            w.add(NAME + "/" + _lib_name(), fh.read())
        for f, text in _dist_info_files(version).items():
            w.add(dist_info + "/" + f, text.encode())
        w.close(dist_info)
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The Python package's sources. Building a wheel from it needs the
    repository's Go sources beside it, or ORRERY_LIB."""
    version = _version()
    base = "%s-%s" % (NAME, version)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for rel in ["pyproject.toml", "README.md", "_build/orrery_build.py"] + [a for a, _ in _sources()]:
            tar.add(os.path.join(HERE, rel), arcname=base + "/" + rel)
        pkg_info = _metadata(version).encode()
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size = len(pkg_info)
        tar.addfile(ti, io.BytesIO(pkg_info))
    return name
