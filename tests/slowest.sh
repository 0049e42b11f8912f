#!/bin/sh
# slowest.sh -- the last test of make check: the ten slowest tests of the
# run, one line each, so that whoever adds a test sees what it costs.
#
# Makefile.am makes its log depend on every other test's log, so it runs
# after them.  It reads the wall and CPU time that tests/deadline.sh writes at the
# end of each log named in TW_TEST_LOGS (make check's TEST_LOGS) and
# prints the table on descriptor 9, which make check points at the
# terminal (AM_TESTS_FD_REDIRECT), as well as into its own log.  A log
# without a wall time (a test that was not run under deadline.sh) is left
# out.  Exit status: 0, or 77 (SKIP) when no log had a wall time.

top_builddir=${top_builddir:-.}
cd "$top_builddir" || exit 99

table=$(
  for log in ${TW_TEST_LOGS:-}; do
    case $log in */slowest.sh.log) continue;; esac
    [ -f "$log" ] || continue
    sed -n 's/^deadline\.sh: wall time \([0-9][0-9]*\.[0-9]\) s, cpu \([0-9.?]*\) s$/\1 \2/p' "$log" |
      tail -n 1 | sed "s|\$| ${log%.log}|"
  done | sort -k1,1nr | head -n 10
)
if [ -z "$table" ]; then
  echo "SKIP: no log of this run holds a wall time"
  exit 77
fi

report()
{
  echo "The ten slowest tests of this run (seconds of wall and of CPU time):"
  printf '%s\n' "$table" | awk '{ printf "  %7.1f wall %7s cpu  %s\n", $1, $2, $3 }'
}
report
# Descriptor 9 is the terminal under make check; elsewhere it may not be
# open, and the log alone has the table.
if { true >&9; } 2>/dev/null; then
  report >&9
fi
exit 0
