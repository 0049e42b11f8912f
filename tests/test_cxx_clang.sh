#!/bin/sh
# test_cxx_clang.sh -- the C++ binding's test built with clang++, and run.
#
# include/tracewriter.hpp must compile as cleanly with clang++ as with
# g++.  This builds tests/test_cxx.cc with clang++, -Werror and the flags
# of CXX_TEST_FLAGS in Makefile.am, once with exceptions and once with
# -fno-exceptions, links each against the freshly built libtracewriter and
# runs it.  Environment (set by make check): top_builddir, top_srcdir;
# CLANGXX names the compiler (default clang++).
# Exit status: 0 passed, 1 a build or a run failed, 77 skipped (no
# clang++; no shared library; a library built with sanitizers, whose
# runtime is the other compiler's), 99 the test could not run.

top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
clangxx=${CLANGXX:-clang++}
libdir=$top_builddir/.libs

if ! command -v "$clangxx" >/dev/null 2>&1; then
  echo "SKIP: $clangxx not found"
  exit 77
fi
if [ ! -f "$libdir/libtracewriter.so" ]; then
  echo "SKIP: no shared library in $libdir"
  exit 77
fi
if command -v readelf >/dev/null 2>&1 &&
   readelf -d "$libdir/libtracewriter.so" | grep -q 'NEEDED.*lib[a-z]*san\.'; then
  echo "SKIP: libtracewriter is built with sanitizers (the g++ builds run)"
  exit 77
fi
libdir=$(cd "$libdir" && pwd) || exit 99

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_cxx_clang.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# The same as CXX_TEST_FLAGS in Makefile.am.
flags="-std=c++17 -Wall -Wextra -pedantic -Werror -Wshadow -Wconversion
  -Wsign-conversion -Wold-style-cast -Wcast-qual -Wundef
  -Wzero-as-null-pointer-constant -Wnon-virtual-dtor -Wdouble-promotion"

# The strict JSON checker is C; it is not what is tested here.
if ! "$clangxx" -x c -std=gnu99 -w -c "$top_srcdir/tests/jsoncheck.c" \
     -o "$tmp/jsoncheck.o"; then
  echo "ERROR: cannot compile tests/jsoncheck.c with $clangxx -x c"
  exit 99
fi

"$clangxx" --version | sed -n 1p
status=0
for mode in exceptions no-exceptions; do
  extra=
  [ "$mode" = no-exceptions ] && extra=-fno-exceptions
  # shellcheck disable=SC2086 # $flags is a list of words
  if ! "$clangxx" $flags $extra -I"$top_srcdir/include" \
       -o "$tmp/test_cxx-$mode" "$top_srcdir/tests/test_cxx.cc" \
       "$tmp/jsoncheck.o" -L"$libdir" -Wl,-rpath,"$libdir" -ltracewriter; then
    echo "FAIL: clang++ build, $mode"
    status=1
    continue
  fi
  if "$tmp/test_cxx-$mode"; then
    echo "PASS: clang++ build and run, $mode"
  else
    echo "FAIL: clang++ run, $mode"
    status=1
  fi
done
exit $status
