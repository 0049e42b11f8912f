"""Build the tracewriter package: a PEP 517 backend, the C library and the
compiled fast path, with the standard library alone.

    pip install ./python                      # this backend, offline
    pip wheel ./python                        # a wheel to install elsewhere
    python3 tracewriter_build.py lib DIR      # DIR/libtracewriter.so
    python3 tracewriter_build.py ext DIR      # DIR/_speedups*.so, if it can

pip runs the backend in an isolated environment with what pyproject.toml
requires, which is nothing: so `pip install ./python` works in a plain
virtual environment with no network (no setuptools, no wheel).  The wheel
is self-contained: it holds the package, the C library built from the
sources of the source tree (../src, ../include; csrc/ in an sdist) as
tracewriter/libtracewriter.so, which the package loads by its own path,
and, when Python's headers are there, the extension
tracewriter/_speedups.c (the fast path for spans; without it the package
goes through ctypes alone).  Building the library needs a C compiler and
zlib's header (Debian: gcc, zlib1g-dev); without them the build fails and
says so, rather than install a package that cannot work.  The compiler is
$CC, else Python's, else cc; $CFLAGS and $LDFLAGS are added to its
flags.  TRACEWRITER_SPEEDUPS=0 at build time leaves the extension out;
TRACEWRITER_BUILD_CACHE=DIR reuses a library built with the same
compiler, flags and sources (build_lib).
"""

import base64
import glob
import hashlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "tracewriter")
NAME = "tracewriter"
LIB_NAME = "libtracewriter.so"      # in the package, beside __init__.py
LIB_SONAME = "libtracewriter.so.0"  # the installed library's


class BuildError(Exception):
    """The C library could not be built here; the message says why."""


def _version():
    with open(os.path.join(PACKAGE, "__init__.py"), encoding="utf-8") as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)


def _sources():
    """The package's Python files, as names relative to PACKAGE."""
    return sorted(os.path.basename(p)
                  for p in glob.glob(os.path.join(PACKAGE, "*.py")))


def _c_top():
    """The directory that holds the C library's src/ and include/: csrc/
    beside this file in an sdist, else the source tree (python/..)."""
    for top in (os.path.join(HERE, "csrc"), os.path.dirname(HERE)):
        if (os.path.exists(os.path.join(top, "src", "open.c")) and
                os.path.exists(os.path.join(top, "include",
                                            "tracewriter.h"))):
            return top
    return None


def _include_dir():
    """The directory of tracewriter.h: TRACEWRITER_INCLUDE, else the C
    tree's include/."""
    env = os.environ.get("TRACEWRITER_INCLUDE")
    if env and os.path.exists(os.path.join(env, "tracewriter.h")):
        return env
    top = _c_top()
    return os.path.join(top, "include") if top else None


def _cc():
    return shlex.split(os.environ.get("CC") or
                       sysconfig.get_config_var("CC") or "cc")


def _jobs():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _cache_key(cc, cflags, ldflags, top):
    """What the library built depends on: the compiler (its command and
    its --version), the flags, and every source and header."""
    h = hashlib.sha256()
    h.update(repr((cc, cflags, ldflags, LIB_SONAME)).encode())
    try:
        h.update(subprocess.run(cc + ["--version"], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT).stdout)
    except OSError:
        pass
    for pattern in ("src/*.c", "src/*.h", "include/*.h"):
        for path in sorted(glob.glob(os.path.join(top, pattern))):
            with open(path, "rb") as f:
                data = f.read()
            h.update(("%s %d\n" % (os.path.relpath(path, top),
                                     len(data))).encode())
            h.update(data)
    return h.hexdigest()[:32]


def build_lib(out_dir):
    """Compile the C library (every src/*.c of the C tree) into
    out_dir/libtracewriter.so, the objects in parallel; returns its path.
    Raises BuildError with the compiler's output when it cannot.  With
    TRACEWRITER_BUILD_CACHE=DIR, a library built before with the same
    compiler, flags and sources is taken from DIR, and one built is kept
    there (the install tests build once for several installs)."""
    top = _c_top()
    if not top:
        raise BuildError("the C library's sources (src/, include/) are "
                         "neither in %s nor in %s"
                         % (os.path.join(HERE, "csrc"),
                            os.path.dirname(HERE)))
    # The longest first: the build takes as long as format.c.
    sources = sorted(glob.glob(os.path.join(top, "src", "*.c")),
                     key=lambda p: (-os.path.getsize(p), p))
    cc = _cc()
    # What configure and Makefile.am give the library: _GNU_SOURCE
    # (AC_USE_SYSTEM_EXTENSIONS), hidden internals (only tw_* exported),
    # threads, zlib.
    cflags = (["-O2", "-fPIC", "-D_GNU_SOURCE", "-fvisibility=hidden",
               "-pthread", "-I" + os.path.join(top, "include"),
               "-I" + os.path.join(top, "src")] +
              shlex.split(os.environ.get("CFLAGS", "")))
    ldflags = shlex.split(os.environ.get("LDFLAGS", ""))
    out = os.path.join(out_dir, LIB_NAME)
    cache = os.environ.get("TRACEWRITER_BUILD_CACHE")
    if cache:
        cached = os.path.join(cache, "libtracewriter-%s.so"
                              % _cache_key(cc, cflags, ldflags, top))
        if os.path.exists(cached):
            shutil.copyfile(cached, out + ".tmp")
            os.replace(out + ".tmp", out)
            return out
    with tempfile.TemporaryDirectory(prefix="tracewriter-build-") as tmp:
        objects, running, failed = [], [], []

        def reap(proc, cmd):
            output = proc.communicate()[0]
            if proc.returncode != 0:
                failed.append("%s\n%s" % (" ".join(cmd), output))

        try:
            for src in sources:
                obj = os.path.join(tmp, os.path.basename(src)[:-2] + ".o")
                cmd = cc + cflags + ["-c", src, "-o", obj]
                while len(running) >= _jobs():
                    reap(*running.pop(0))
                running.append((subprocess.Popen(
                    cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    text=True), cmd))
                objects.append(obj)
            while running:
                reap(*running.pop(0))
        except OSError as e:
            raise BuildError("cannot run the C compiler %s (%s): the "
                             "package needs one to build its library "
                             "(Debian: apt-get install gcc zlib1g-dev)"
                             % (" ".join(cc), e))
        if failed:
            raise BuildError("building libtracewriter failed (it needs a "
                             "C compiler and zlib's header; Debian: "
                             "apt-get install gcc zlib1g-dev):\n"
                             + "\n".join(failed))
        cmd = (cc + ["-shared", "-pthread", "-Wl,-soname," + LIB_SONAME,
                     "-Wl,-z,defs", "-o", out + ".tmp"] + objects +
               ldflags + ["-lz", "-lm"])
        r = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise BuildError("linking libtracewriter failed (it needs "
                             "zlib; Debian: apt-get install zlib1g-dev):"
                             "\n%s\n%s" % (" ".join(cmd), r.stdout))
    os.replace(out + ".tmp", out)
    if cache:
        os.makedirs(cache, exist_ok=True)
        shutil.copyfile(out, cached + ".%d.tmp" % os.getpid())
        os.replace(cached + ".%d.tmp" % os.getpid(), cached)
    return out


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
    cc = _cc()
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


def _tag(with_ext):
    """The wheel's tag: it holds a compiled library, so it is for this
    platform; with the extension, for this Python too."""
    plat = re.sub(r"[-.]", "_", sysconfig.get_platform())
    if not with_ext:
        return "py3-none-" + plat
    impl = "cp%d%d" % sys.version_info[:2]
    return "%s-%s-%s" % (impl, impl, plat)


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(
        hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    files = {}
    for name in _sources():
        with open(os.path.join(PACKAGE, name), "rb") as f:
            files["tracewriter/" + name] = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            lib = build_lib(tmp)
        except BuildError as e:
            sys.stderr.write("tracewriter: %s\n" % e)
            raise
        with open(lib, "rb") as f:
            files["tracewriter/" + LIB_NAME] = f.read()
        ext = build_ext(tmp)
        if ext:
            with open(ext, "rb") as f:
                files["tracewriter/" + os.path.basename(ext)] = f.read()
    tag = _tag(ext is not None)
    dist_info = "%s-%s.dist-info" % (NAME, _version())
    files[dist_info + "/METADATA"] = _metadata().encode()
    files[dist_info + "/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: tracewriter_build\n"
        "Root-Is-Purelib: false\nTag: %s\n" % tag).encode()
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


def sdist_files():
    """What an sdist holds, as (path on disk, name in the sdist): this
    directory's files, and the C library's sources under csrc/ so that a
    wheel builds from the sdist alone."""
    files = [(os.path.join(HERE, rel), rel) for rel in
             ("pyproject.toml", "README.md", "tracewriter_build.py",
              "tracewriter/_speedups.c")]
    files += [(os.path.join(PACKAGE, name), "tracewriter/" + name)
              for name in _sources()]
    top = _c_top()
    if top:
        for pattern in ("src/*.c", "src/*.h", "include/tracewriter.h"):
            for path in sorted(glob.glob(os.path.join(top, pattern))):
                files.append((path, "csrc/" + os.path.relpath(path, top)))
    return files


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for path, rel in sdist_files():
            t.add(path, arcname=base + "/" + rel)
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
    if len(sys.argv) == 3 and sys.argv[1] == "lib":
        try:
            print(build_lib(sys.argv[2]))
        except BuildError as e:
            sys.stderr.write("tracewriter: %s\n" % e)
            sys.exit(1)
        sys.exit(0)
    sys.stderr.write("usage: %s ext|lib OUTDIR\n" % sys.argv[0])
    sys.exit(2)
