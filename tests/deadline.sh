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
# this deadline.  Exit status: the test's, or 124 (137 after SIGKILL) when
# the deadline passed, 99 for a bad TW_TEST_TIMEOUT.

limit=${TW_TEST_TIMEOUT:-900}
case $limit in
  ''|*[!0-9]*)
    echo "deadline.sh: TW_TEST_TIMEOUT=$limit is not a number of seconds" >&2
    exit 99
    ;;
esac
if [ "$limit" -eq 0 ] || ! timeout -k 1 10 true >/dev/null 2>&1; then
  exec "$@"
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
exit $status
