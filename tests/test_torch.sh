#!/bin/sh
# test_torch.sh -- the PyTorch profiler's trace on our timeline, with the
# real torch: python/tests/torch_check.py (tracewriter.torch.profile, then
# tracewriter merge with no --offset; each of our spans must enclose its
# torch ops within 1 ms).
#
# The interpreter is the first of $TW_TORCH_PYTHON, $PYTHON3 and
# /usr/bin/python3 (where Debian's python3-torch installs) that imports
# torch; none: SKIP, with the reason (a user's set-up need not have
# PyTorch; CI installs python3-torch and allows no SKIP).  A sanitizer
# build is a SKIP too: torch is not instrumented, and its threads under
# TSan or its allocations under ASan are not this project's to check.
# Environment (set by make check): top_builddir, top_srcdir, PYTHON3.
# Exit status: 0 passed, 1 failed, 77 SKIP, 99 could not run.

top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}

lib=$top_builddir/.libs/libtracewriter.so
if [ ! -e "$lib" ] || [ ! -x "$top_builddir/tools/tracewriter" ]; then
  echo "test_torch: $lib or tools/tracewriter is not built" >&2
  exit 99
fi
if ldd "$lib" 2>/dev/null | grep -q 'lib[at]san'; then
  echo "SKIP: a sanitizer build (torch is not run under ASan or TSan)"
  exit 77
fi

python=
tried=
for py in "${TW_TORCH_PYTHON:-}" "${PYTHON3:-}" /usr/bin/python3; do
  [ -n "$py" ] || continue
  tried="$tried $py"
  if "$py" -c 'import sys, torch; sys.exit(sys.version_info < (3, 9))' \
       >/dev/null 2>&1; then
    python=$py
    break
  fi
done
if [ -z "$python" ]; then
  echo "SKIP: no python3 >= 3.9 with torch (tried:$tried)" \
       "(Debian: apt-get install python3-torch)"
  exit 77
fi

unset TRACEWRITER_LIB TRACEWRITER_OUT TRACEWRITER_OPTIONS PYTHONPATH
PYTHONDONTWRITEBYTECODE=1
# One thread for torch's ops and OpenMP: the shared CI machine.
OMP_NUM_THREADS=1
export PYTHONDONTWRITEBYTECODE OMP_NUM_THREADS top_builddir top_srcdir
echo "test_torch: $python"
cd "$top_srcdir/python/tests" || exit 99
exec "$python" -B torch_check.py -v
