"""Build the tracewriter package: a PEP 517 backend and the compiled fast
path, with the standard library alone.

    pip install ./python                      # this backend, offline
    python3 tracewriter_build.py ext DIR      # DIR/_speedups*.so, if it can

pip runs the backend in an isolated environment with what pyproject.toml
requires, which is nothing: so `pip install ./python` works in a plain
virtual environment with no network (no setuptools, no wheel).  The wheel
holds the package and, when a C compiler and Python's headers are there,
the extension tracewriter/_speedups.c built against the tracewriter.h of
the source tree; when they are not, a pure-Python wheel (the package then
works through ctypes alone, as fast as before).  TRACEWRITER_SPEEDUPS=0 at
build time leaves the extension out.
"""

import base64
import hashlib
import io
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "tracewriter")
SOURCES = ("__init__.py", "_lib.py")
NAME = "tracewriter"


def _version():
    with open(os.path.join(PACKAGE, "__init__.py"), encoding="utf-8") as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)


def _include_dir():
    """The directory of tracewriter.h: the source tree's include/, or
    TRACEWRITER_INCLUDE."""
    for d in (os.environ.get("TRACEWRITER_INCLUDE"),
              os.path.join(os.path.dirname(HERE), "include")):
        if d and os.path.exists(os.path.join(d, "tracewriter.h")):
            return d
    return None


def ext_filename():
    return "_speedups" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")


def build_ext(out_dir, log=sys.stderr):
    """Compile _speedups.c into out_dir; returns the path, or None (with a
    line on log saying why) when it cannot be built here."""
    if os.environ.get("TRACEWRITER_SPEEDUPS") == "0":
        log.write("tracewriter: TRACEWRITER_SPEEDUPS=0: no compiled fast "
                  "path\n")
        return None
    py_include = sysconfig.get_paths()["include"]
    tw_include = _include_dir()
    if not os.path.exists(os.path.join(py_include, "Python.h")):
        log.write("tracewriter: no Python.h in %s (Debian: python3-dev): "
                  "ctypes only\n" % py_include)
        return None
    if not tw_include:
        log.write("tracewriter: tracewriter.h not found (set "
                  "TRACEWRITER_INCLUDE): ctypes only\n")
        return None
    cc = shlex.split(os.environ.get("CC") or
                     sysconfig.get_config_var("CC") or "cc")
    out = os.path.join(out_dir, ext_filename())
    tmp = out + ".tmp"
    cmd = cc + ["-shared", "-fPIC", "-O2", "-std=c99", "-I" + py_include,
                "-I" + tw_include, os.path.join(PACKAGE, "_speedups.c"),
                "-o", tmp]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    except OSError as e:
        log.write("tracewriter: no C compiler (%s): ctypes only\n" % e)
        return None
    if r.returncode != 0:
        log.write("tracewriter: %s failed: ctypes only\n%s"
                  % (" ".join(cmd), r.stdout))
        return None
    os.replace(tmp, out)
    return out


# ------------------------------------------------------------ PEP 517

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def _metadata():
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: Chrome Trace Event Format JSON (Perfetto, "
            "chrome://tracing) written incrementally, valid after every "
            "commit: a binding of libtracewriter\n"
            "License: MIT\nRequires-Python: >=3.8\n"
            "Description-Content-Type: text/markdown\n\n%s"
            % (NAME, _version(), readme))


def _tag(compiled):
    if not compiled:
        return "py3-none-any"
    impl = "cp%d%d" % sys.version_info[:2]
    plat = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return "%s-%s-%s" % (impl, impl, plat)


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(
        hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    files = {}
    for name in SOURCES:
        with open(os.path.join(PACKAGE, name), "rb") as f:
            files["tracewriter/" + name] = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        ext = build_ext(tmp)
        if ext:
            with open(ext, "rb") as f:
                files["tracewriter/" + os.path.basename(ext)] = f.read()
    tag = _tag(ext is not None)
    dist_info = "%s-%s.dist-info" % (NAME, _version())
    files[dist_info + "/METADATA"] = _metadata().encode()
    files[dist_info + "/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: tracewriter_build\n"
        "Root-Is-Purelib: %s\nTag: %s\n"
        % ("false" if ext else "true", tag)).encode()
    record = [_record_line(k, v) for k, v in files.items()]
    record.append(dist_info + "/RECORD,,")
    files[dist_info + "/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = "%s-%s-%s.whl" % (NAME, _version(), tag)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for arcname, data in files.items():
            info = zipfile.ZipInfo(arcname, (2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if arcname.endswith(".so")
                                  else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ("pyproject.toml", "README.md", "tracewriter_build.py",
                    "tracewriter/__init__.py", "tracewriter/_lib.py",
                    "tracewriter/_speedups.c"):
            t.add(os.path.join(HERE, rel), arcname=base + "/" + rel)
        data = _metadata().encode()
        info = tarfile.TarInfo(base + "/PKG-INFO")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return name


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "ext":
        path = build_ext(sys.argv[2])
        if path:
            print(path)
        sys.exit(0 if path else 1)
    sys.stderr.write("usage: %s ext OUTDIR\n" % sys.argv[0])
    sys.exit(2)
