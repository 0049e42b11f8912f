#!/bin/sh
# deadline.sh -- run one test under a deadline: make check's LOG_COMPILER.
#
#   deadline.sh PROGRAM [ARG...]
#
# Runs PROGRAM (a test program or script) and stops it if it runs longer
# than TW_TEST_TIMEOUT seconds (default 900; 0: no deadline) plus 30: the
# C tests stop themselves at TW_TEST_TIMEOUT with a message of their own
# (tests/testutil.c), this catches everything else.  timeout(1) sends
# SIGTERM to the test and to every process it started, SIGKILL 30 s
# later; an interrupt (^C) is passed on to the test.  Without a timeout(1)
# that takes -k (coreutils; busybox 1.30 or later), the test runs without
# this deadline.  Its last line of output is its wall and CPU
# time, which tests/slowest.sh collects.  Exit status: the test's, or 124 (137 after
# SIGKILL) when the deadline passed, 99 for a bad TW_TEST_TIMEOUT.

limit=${TW_TEST_TIMEOUT:-900}
case $limit in
  ''|*[!0-9]*)
    echo "deadline.sh: TW_TEST_TIMEOUT=$limit is not a number of seconds" >&2
    exit 99
    ;;
esac
# Each test writes under directories of its own, removed when it ends,
# passed or failed, so that a failed test leaves nothing behind: TMPDIR
# (in the TMPDIR of make check, else /tmp), and TW_TEST_FAST_DIR for large
# or fsync-heavy files (tests/tooltest.c), in /dev/shm when TMPDIR was not
# set and /dev/shm is writable.
name=$(basename "$1")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-$name.XXXXXX") || exit 99
fast=$scratch
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
  fast=$(mktemp -d "/dev/shm/tw-$name.XXXXXX") || fast=$scratch
fi
TMPDIR=$scratch TW_TEST_FAST_DIR=$fast
export TMPDIR TW_TEST_FAST_DIR
remove_scratch()
{
  rm -rf "$scratch" "$fast"
}

# The test's wall time, and the CPU time of it and of every process it
# waited for (times: the second line), go to the end of its log, where
# tests/slowest.sh reads them: on a busy machine the CPU time is the
# steadier figure of what a test costs.
start=$(date +%s%N 2>/dev/null)
wall_time()
{
  end=$(date +%s%N 2>/dev/null)
  case $start$end in
    *[!0-9]*|'') return;;
  esac
  ms=$(( (end - start) / 1000000 ))
  # times in the shell itself: a subshell would report its own.
  times >"$scratch/.times" 2>/dev/null
  cpu=$(awk 'NR == 2 { n = split($0, f, /[ ms]+/); t = 0
                      for (i = 1; i + 1 <= n; i += 2) t += f[i] * 60 + f[i + 1]
                      printf "%.1f", t }' "$scratch/.times")
  printf 'deadline.sh: wall time %d.%01d s, cpu %s s\n' \
    $((ms / 1000)) $((ms % 1000 / 100)) "${cpu:-?}"
}

if [ "$limit" -eq 0 ] || ! timeout -k 1 10 true >/dev/null 2>&1; then
  "$@"
  status=$?
  wall_time
  remove_scratch
  exit $status
fi

limit=$((limit + 30))
# timeout runs the test in a process group of its own, which a ^C at the
# terminal does not reach: pass it on.
timeout -k 30 "$limit" "$@" &
pid=$!
interrupted=
trap 'interrupted=1; kill -TERM "$pid" 2>/dev/null' HUP INT TERM
wait "$pid"
status=$?
if [ -n "$interrupted" ]; then   # wait was cut short: the test's status
  wait "$pid"
  rc=$?
  [ "$rc" -ne 127 ] && status=$rc
fi
case $status in
  124|137)
    echo "deadline.sh: $1 ran for more than $limit s (TW_TEST_TIMEOUT=${TW_TEST_TIMEOUT:-900}, plus 30): stopped" >&2
    ;;
esac
wall_time
remove_scratch
exit $status
