#!/bin/sh
# test_demo_jq.sh -- tracewriter demo read by jq: the trace on stdout
# piped straight into jq, and the request rate seen in its timestamps.
#
#  - demo -o - | jq: jq parses the whole stream, with the same events as
#    the summary counts; the same with -o /dev/stdout and the object form;
#  - --rate R: the requests' arrivals ("b" events) span at least what R
#    allows (a burst of 25, then the others spread over blocks of 200).
# Environment (set by make check): top_builddir, JQ (empty when configure
# found none; else jq from PATH).  Exit status: 0 all passed, 1 a check
# failed, 77 (SKIP) without jq, 99 the test could not run.

top_builddir=${top_builddir:-.}
tool=$top_builddir/tools/tracewriter
jq=${JQ-jq}

if [ ! -x "$tool" ]; then
  echo "test_demo_jq: $tool is not built" >&2
  exit 99
fi
if [ -z "$jq" ] || ! command -v "$jq" >/dev/null 2>&1; then
  echo "SKIP: jq not found"
  exit 77
fi

# shellcheck source=tests/testlib.sh
. "$(dirname "$0")/testlib.sh"
tl_setup test_demo_jq

# counted WHERE: the summary on stderr counts as many events as jq did.
counted() {
  [ -n "$n" ] && grep -q "^wrote $n events, .* to $1" "$tmp/err"
}

n=$("$tool" demo -t 2 -n 60 -o - 2>"$tmp/err" | "$jq" length)
if [ -n "$n" ] && [ "$n" -gt 60 ] && counted "standard output"; then
  pass "demo -o - | jq length: $n events, as the summary says"
else
  fail "demo -o - | jq length (got '$n')"
fi

n=$("$tool" demo -t 2 -n 60 -o /dev/stdout 2>"$tmp/err" | "$jq" length)
if [ -n "$n" ] && [ "$n" -gt 60 ] && counted /dev/stdout; then
  pass "demo -o /dev/stdout | jq length: $n events"
else
  fail "demo -o /dev/stdout | jq length (got '$n')"
fi

n=$("$tool" demo -t 2 -n 60 -O format=object -o - 2>"$tmp/err" |
    "$jq" '.traceEvents | length')
if [ -n "$n" ] && [ "$n" -gt 60 ] && counted "standard output"; then
  pass "demo -O format=object -o - | jq: $n events"
else
  fail "demo -O format=object -o - | jq '.traceEvents | length' (got '$n')"
fi

names=$("$tool" demo -t 2 -n 60 -o - 2>"$tmp/err" |
        "$jq" -r '[.[] | select(.ph == "M" and .name == "thread_name")
                   | .args.name] | sort | join(",")')
if [ "$names" = "acceptor,worker-1,worker-2" ]; then
  pass "... its threads: $names"
else
  fail "the piped trace names the threads acceptor,worker-1,worker-2 (got '$names')"
fi

# span RATE N: the microseconds from the first request's arrival to the
# last one's, in a demo of N requests at RATE a second.
span() {
  "$tool" demo -t 4 -r "$1" -n "$2" -o - 2>"$tmp/err" |
    "$jq" '[.[] | select(.ph == "b") | .ts] | (max - min) | floor'
}
# Each bound is 90% of the schedule's span, as the first arrival can be
# late (the threads starting); flat out, the spans would be a tenth.
# 400 requests at 1000/s: two blocks of 200 (0.2 s each); the last
# arrival of the second is 175/176 of the way through it: 0.399 s.
us=$(span 1000 400)
if [ -n "$us" ] && [ "$us" -ge 359000 ]; then
  pass "-r 1000 -n 400: arrivals span $us us (at least 359000)"
else
  fail "-r 1000 -n 400: arrivals span at least 359000 us (got '$us')"
fi
# The default rate, 400/s: 100 requests, the last 75 spread over a 0.5 s
# block: 75/176 * 0.5 s = 0.213 s.
us=$("$tool" demo -t 4 -n 100 -o - 2>"$tmp/err" |
     "$jq" '[.[] | select(.ph == "b") | .ts] | (max - min) | floor')
if [ -n "$us" ] && [ "$us" -ge 191000 ]; then
  pass "the default rate: 100 arrivals span $us us (at least 191000)"
else
  fail "the default rate: 100 arrivals span at least 191000 us (got '$us')"
fi

tl_done
