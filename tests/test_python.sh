#!/bin/sh
# test_python.sh -- the Python binding's tests (python/tests, unittest).
#
# Runs the tests in python/tests with $PYTHON3 against the library just
# built, through ctypes and then with the compiled fast path: the package, imported from the source tree, finds it through
# $top_builddir (.libs/libtracewriter.so); the tests use tests/jsonlint,
# tests/python_layout and tools/tracewriter from there too.  A library
# built with sanitizers needs their runtime loaded before the interpreter
# starts: it is preloaded (leak detection off: CPython frees little at
# exit) for the interpreter and its Python children only; the tests run
# the project's tools without it.  Environment (set by make check):
# top_builddir, top_srcdir, PYTHON3 (empty when configure found none);
# TW_TEST_SEED replays the random tests.  Exit status: 0 all passed, 1 a test
# failed, 77 (SKIP) without python3 >= 3.9 or its ctypes module, 99 the
# test could not run.

top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
PYTHON3=${PYTHON3:-}

if [ -z "$PYTHON3" ]; then
  echo "SKIP: python3 not found by configure"
  exit 77
fi
if ! "$PYTHON3" -c 'import sys, ctypes, gzip, json, unittest
sys.exit(sys.version_info < (3, 9))' >/dev/null 2>&1; then
  echo "SKIP: $PYTHON3 is older than 3.9 or lacks ctypes"
  exit 77
fi
lib=$top_builddir/.libs/libtracewriter.so
if [ ! -e "$lib" ]; then
  echo "test_python: $lib is not built" >&2
  exit 99
fi

# The interpreter itself, not a wrapper script (pyenv's shim is one): no
# shell survives a preloaded TSan runtime.
PYTHON3=$("$PYTHON3" -c 'import sys; print(sys.executable)') || exit 99

# The sanitizer runtimes the library needs, ASan first.
preload=
for runtime in asan tsan ubsan; do
  path=$(ldd "$lib" 2>/dev/null |
         sed -n "s/^[[:space:]]*lib$runtime\.so[^ ]* => \([^ ]*\) .*/\1/p")
  if [ -n "$path" ]; then
    preload="$preload $path"
  fi
done
if [ -n "$preload" ]; then
  echo "test_python: preloading$preload"
  LD_PRELOAD="${preload# }${LD_PRELOAD:+ $LD_PRELOAD}"
  ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export LD_PRELOAD ASAN_OPTIONS
fi

# Hermetic: the library from the build tree, no tracing asked of it.
unset TRACEWRITER_LIB TRACEWRITER_OUT TRACEWRITER_OPTIONS PYTHONPATH
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE top_builddir top_srcdir

# Twice: through ctypes alone (TRACEWRITER_SPEEDUPS=0), then with the
# compiled fast path (python/tracewriter/_speedups.c) built into a copy of
# the package in the build tree (the source tree may be read-only).  The
# second run is left out, with a note, only where Python's headers are
# missing (Debian: python3-dev); a compiler error fails.
status=0
echo "== python tests through ctypes (TRACEWRITER_SPEEDUPS=0)"
TRACEWRITER_SPEEDUPS=0 TW_PY_EXPECT_SPEEDUPS=0 \
  "$PYTHON3" -B -m unittest discover -s "$top_srcdir/python/tests" -v || status=1

fast=$top_builddir/python-fast
rm -rf "$fast" && mkdir -p "$fast/tracewriter" || exit 99
cp "$top_srcdir"/python/tracewriter/*.py "$fast/tracewriter/" || exit 99
headers=$("$PYTHON3" -c 'import os, sysconfig
print(os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))')
if [ "$headers" != True ]; then
  echo "NOTE: no Python.h for $PYTHON3 (Debian: apt-get install python3-dev):" \
       "the compiled fast path is not tested"
  exit $status
fi
# The compiler runs without the sanitizer runtime.
if ! env -u LD_PRELOAD "$PYTHON3" -B "$top_srcdir/python/tracewriter_build.py" \
     ext "$fast/tracewriter"; then
  echo "FAIL: python/tracewriter/_speedups.c does not build"
  exit 1
fi
echo "== python tests with the compiled fast path"
TW_PY_PACKAGE_PARENT=$fast TW_PY_EXPECT_SPEEDUPS=1 \
  "$PYTHON3" -B -m unittest discover -s "$top_srcdir/python/tests" -v || status=1
exit $status
