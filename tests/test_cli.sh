#!/bin/sh
# test_cli.sh -- the tracewriter command-line tool, end to end.
#
# Runs the built tool (a libtool wrapper script before installation) and
# checks its exit statuses and messages, then reads the demo's traces back
# with the strict checker (tests/jsonlint) and, when configure found them,
# with Python's json module and jq.  Environment (set by make check):
# top_builddir, top_srcdir, PYTHON3 and JQ (empty when not found).
# Exit status: 0 all passed, 1 a check failed, 99 the test could not run.

top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
PYTHON3=${PYTHON3:-}
JQ=${JQ:-}
tool=$top_builddir/tools/tracewriter
jsonlint=$top_builddir/tests/jsonlint
header=$top_srcdir/include/tracewriter.h

for program in "$tool" "$jsonlint"; do
  if [ ! -x "$program" ]; then
    echo "test_cli: $program is not built" >&2
    exit 99
  fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

passed=0
failed=0
skipped=0

pass() {
  passed=$((passed + 1))
  echo "PASS: $1"
}

# fail DESCRIPTION: count a failure and show what the last command said.
fail() {
  failed=$((failed + 1))
  echo "FAIL: $1"
  for stream in out err; do
    if [ -s "$tmp/$stream" ]; then
      sed -n "1,10s/^/  std$stream: /p" "$tmp/$stream"
    fi
  done
}

# skip WHY: a check that could not run (a tool missing); counted apart, so
# the summary never shows it as passed.
skip() {
  skipped=$((skipped + 1))
  echo "SKIP: $1"
}

# run COMMAND...: run it with its output in $tmp/out and $tmp/err and its
# exit status in $status.
run() {
  "$@" >"$tmp/out" 2>"$tmp/err"
  status=$?
}

# expect_status N DESCRIPTION COMMAND...: run COMMAND, pass if it exits N.
expect_status() {
  want=$1
  description=$2
  shift 2
  run "$@"
  if [ "$status" -eq "$want" ]; then
    pass "$description"
  else
    fail "$description (exit status $status, expected $want)"
  fi
}

# check DESCRIPTION COMMAND...: pass if COMMAND succeeds.
check() {
  description=$1
  shift
  if "$@"; then
    pass "$description"
  else
    fail "$description"
  fi
}

# ------------------------------------------------------------ help, version
expect_status 0 "--help exits 0" "$tool" --help
usage_on_stdout_only() {
  grep -q "^Usage: tracewriter" "$tmp/out" && [ ! -s "$tmp/err" ]
}
check "--help prints the usage on stdout, nothing on stderr" \
  usage_on_stdout_only
check "--help lists the demo command" grep -q '^ *demo ' "$tmp/out"
check "--help lists the snapshot command" grep -q '^ *snapshot ' "$tmp/out"

version=$(sed -n 's/^#define TW_VERSION_STRING "\(.*\)"$/\1/p' "$header")
expect_status 0 "--version exits 0" "$tool" --version
printed_version() {
  [ "$(cat "$tmp/out")" = "tracewriter $version" ]
}
check "--version prints 'tracewriter $version'" printed_version

expect_status 0 "demo --help exits 0" "$tool" demo --help
check "demo --help shows the demo's options" \
  grep -q -e '--requests' "$tmp/out"

# ------------------------------------------------------------- usage errors
# usage_error DESCRIPTION ARGS...: exit 2, usage on stderr, nothing on stdout.
usage_error() {
  description=$1
  shift
  run "$tool" "$@"
  if [ "$status" -eq 2 ] && grep -q 'Usage:' "$tmp/err" && [ ! -s "$tmp/out" ]
  then
    pass "$description exits 2 with the usage on stderr"
  else
    fail "$description exits 2 with the usage on stderr (exit status $status)"
  fi
}
usage_error "no arguments"
usage_error "an unknown command" frobnicate
usage_error "an unknown option" --bogus
usage_error "demo --threads x" demo --threads x
usage_error "demo --threads 0" demo --threads 0
usage_error "demo --requests -5" demo --requests -5
usage_error "demo --seconds soon" demo --seconds soon
usage_error "demo --bogus" demo --bogus
usage_error "demo with both --seconds and --requests" \
  demo --seconds 1 --requests 10

expect_status 2 "demo -O 'bogus=1' exits 2" \
  "$tool" demo -O 'bogus=1' -o "$tmp/never.json"
check "... with 'tracewriter: bad options:' naming bogus" \
  grep -q "^tracewriter: bad options: .*bogus" "$tmp/err"
check "... and writes no file" test ! -e "$tmp/never.json"

# --------------------------------------------------------------- the demo
trace=$tmp/t.json
expect_status 0 "demo --requests 300 --threads 3 exits 0" \
  "$tool" demo --requests 300 --threads 3 -o "$trace"
one_summary_line() {
  [ "$(wc -l < "$tmp/err")" -eq 1 ] &&
    grep -q "^wrote [0-9][0-9]* events, .* to $1" "$tmp/err"
}
check "... prints one line on stderr naming the file and its events" \
  one_summary_line "$trace"
check "... prints nothing on stdout (no progress when not a terminal)" \
  test ! -s "$tmp/out"
run "$jsonlint" --check-demo --require-thread-names 4 "$trace"
if [ "$status" -eq 0 ]; then
  pass "jsonlint --check-demo: $(cat "$tmp/out")"
else
  fail "jsonlint --check-demo accepts the trace"
fi
# ends_exactly FILE LAST: FILE's last bytes are LAST, no newline after.
ends_exactly() {
  [ "$(tail -c ${#2} "$1" | od -An -c | tr -d ' ')" = \
    "$(printf '%s' "$2" | od -An -c | tr -d ' ')" ]
}
# starts_ends FILE FIRST LAST: FILE's first bytes are FIRST and its last
# LAST, with nothing after them (the library's tail has no newline).
starts_ends() {
  [ "$(head -c ${#2} "$1" 2>/dev/null)" = "$2" ] && ends_exactly "$1" "$3"
}
check "the trace is an array: '[' ... ']', nothing after" \
  starts_ends "$trace" '[' "
]"

if [ -n "$PYTHON3" ]; then
  run "$PYTHON3" -c '
import json, sys
events = json.load(open(sys.argv[1]))
names = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
assert names == {"acceptor", "worker-1", "worker-2", "worker-3"}, names
assert sum(e["ph"] == "b" for e in events) == 300
assert sum(e["ph"] == "e" for e in events) == 300
' "$trace"
  if [ "$status" -eq 0 ]; then
    pass "python3 json.load reads it: 300 requests, 4 named threads"
  else
    fail "python3 json.load reads it: 300 requests, 4 named threads"
  fi
else
  skip "python3 not found"
fi

if [ -n "$JQ" ]; then
  run "$JQ" length "$trace"
  if [ "$status" -eq 0 ] && [ "$(cat "$tmp/out")" -gt 300 ]; then
    pass "jq length reads it: $(cat "$tmp/out") events"
  else
    fail "jq length reads it"
  fi
else
  skip "jq not found"
fi

# A path ending in .gz: the gzip sink, one member that gzip -t accepts
# and that decompresses to a trace the strict checker accepts.
gz=$tmp/trace.json.gz
expect_status 0 "demo -o trace.json.gz exits 0" \
  "$tool" demo --requests 200 --threads 2 -o "$gz"
if command -v gzip >/dev/null 2>&1; then
  check "... gzip -t accepts it" gzip -t "$gz"
  gzip -dc "$gz" > "$tmp/unzipped.json"
  run "$jsonlint" --check-demo --require-thread-names 3 "$tmp/unzipped.json"
  if [ "$status" -eq 0 ]; then
    pass "... it decompresses to a demo trace: $(cat "$tmp/out")"
  else
    fail "... it decompresses to a demo trace"
  fi
else
  skip "gzip not found"
fi

# repair: a trace cut inside its last record is made strict JSON again.
cut=$tmp/cut.json
head -c $(($(wc -c < "$trace") - 40)) "$trace" > "$cut"
run "$jsonlint" "$cut"
check "a trace cut 40 bytes before its end is not valid JSON" \
  test "$status" -ne 0
expect_status 0 "repair FILE exits 0" "$tool" repair "$cut"
check "... and says what it kept and dropped" grep -q "kept .* records" "$tmp/out"
run "$jsonlint" --events "$cut"
if [ "$status" -eq 0 ]; then
  pass "... the repaired trace is strict JSON: $(cat "$tmp/out")"
else
  fail "... the repaired trace is strict JSON"
fi
expect_status 0 "repair of a valid trace exits 0" "$tool" repair "$cut"
check "... and says it is already valid" grep -q "already valid" "$tmp/out"
check "... and ends exactly at the bracket" ends_exactly "$cut" "
]"
expect_status 1 "repair of a file that is not a trace exits 1" \
  "$tool" repair "$tmp/out"
expect_status 2 "repair without a FILE exits 2" "$tool" repair

# snapshot: a copy of a closed trace, of a cut one, compressed.
head -c $(($(wc -c < "$trace") - 40)) "$trace" > "$cut"
expect_status 0 "snapshot FILE -o COPY exits 0" \
  "$tool" snapshot "$trace" -o "$tmp/copy.json"
check "... with the summary on stderr and nothing on stdout" \
  sh -c 'grep -q "copied .* records to" "$1" && [ ! -s "$2" ]' sh \
  "$tmp/err" "$tmp/out"
run "$jsonlint" --check-demo "$tmp/copy.json"
if [ "$status" -eq 0 ]; then
  pass "... the copy is a demo trace: $(cat "$tmp/out")"
else
  fail "... the copy is a demo trace"
fi
check "... ending exactly at the bracket" ends_exactly "$tmp/copy.json" "
]"
expect_status 3 "snapshot of a trace cut in a record exits 3" \
  "$tool" snapshot "$cut" -o "$tmp/copy.json"
check "... and says it dropped the cut record" \
  grep -q "dropped 1 cut record" "$tmp/err"
run "$jsonlint" --events "$tmp/copy.json"
if [ "$status" -eq 0 ]; then
  pass "... the copy is strict JSON: $(cat "$tmp/out")"
else
  fail "... the copy is strict JSON"
fi
check "... and the cut file is unchanged" \
  test "$(wc -c < "$cut")" -eq $(($(wc -c < "$trace") - 40))
if command -v gzip >/dev/null 2>&1; then
  expect_status 0 "snapshot of a .json.gz to stdout exits 0" \
    "$tool" snapshot "$gz"
  check "... and writes a gzip member that gzip -t accepts" gzip -t "$tmp/out"
  expect_status 0 "snapshot -o copy.json.gz exits 0" \
    "$tool" snapshot "$trace" -o "$tmp/copy.json.gz"
  gzip -dc "$tmp/copy.json.gz" > "$tmp/unzipped.json"
  run "$jsonlint" --check-demo "$tmp/unzipped.json"
  if [ "$status" -eq 0 ]; then
    pass "... it decompresses to a demo trace: $(cat "$tmp/out")"
  else
    fail "... it decompresses to a demo trace"
  fi
else
  skip "gzip not found"
fi
expect_status 1 "snapshot of a file that is not a trace exits 1" \
  "$tool" snapshot "$tmp/err" -o "$tmp/never.json"
check "... and makes no copy" test ! -e "$tmp/never.json"
expect_status 1 "snapshot -o naming FILE itself exits 1" \
  "$tool" snapshot "$trace" -o "$trace"
expect_status 2 "snapshot without a FILE exits 2" "$tool" snapshot
expect_status 2 "snapshot -n (not an option of snapshot) exits 2" \
  "$tool" snapshot -n "$trace"

# A FIFO is refused at once by repair and snapshot.
if command -v timeout >/dev/null 2>&1 && mkfifo "$tmp/fifo" 2>/dev/null; then
  expect_status 1 "repair FIFO exits 1 at once" \
    timeout 10 "$tool" repair "$tmp/fifo"
  check "... saying it is not a regular file" \
    grep -q "not a regular file" "$tmp/err"
  expect_status 1 "snapshot FIFO exits 1 at once" \
    timeout 10 "$tool" snapshot "$tmp/fifo"
  rm -f "$tmp/fifo"
else
  skip "no timeout or mkfifo"
fi

# Snapshots of a trace while the demo writes it, in each sink: every copy
# strict JSON (exit 0, or 3 when a record being written was dropped).
# live_snapshots NAME FILE OPTIONS
live_snapshots() {
  name=$1
  live=$2
  rm -f "$live"
  "$tool" demo --seconds 2 --threads 2 -O "$3" -o "$live" \
    >/dev/null 2>"$tmp/demo.err" &
  demo=$!
  tries=0
  while [ ! -e "$live" ] && [ "$tries" -lt 1000 ] &&
        kill -0 "$demo" 2>/dev/null; do
    tries=$((tries + 1))
    sleep 0.01                      # the demo creates its file complete
  done
  taken=0 while_live=0 cut_copies=0 bad=0
  while [ "$taken" -lt 40 ]; do
    alive=0
    kill -0 "$demo" 2>/dev/null && alive=1
    "$tool" snapshot -q "$live" -o "$tmp/live-copy.json" 2>"$tmp/snap.err"
    st=$?
    taken=$((taken + 1))
    while_live=$((while_live + alive))
    if [ "$st" -eq 3 ]; then
      cut_copies=$((cut_copies + 1))
    elif [ "$st" -ne 0 ]; then
      bad=$((bad + 1))
      cp "$tmp/snap.err" "$tmp/err"
      continue
    fi
    if ! "$jsonlint" --events "$tmp/live-copy.json" >"$tmp/out" 2>&1; then
      bad=$((bad + 1))
    fi
  done
  wait "$demo"
  demo_status=$?
  if [ "$bad" -eq 0 ] && [ "$demo_status" -eq 0 ]; then
    pass "$name: $taken snapshots ($while_live while the demo wrote, $cut_copies with a record dropped), all strict JSON"
  else
    fail "$name: $bad of $taken snapshots failed (demo exit $demo_status)"
  fi
}
live_snapshots "live file sink" "$tmp/live.json" "buffer=4KiB"
live_snapshots "live mmap sink" "$tmp/live.json" "mmap"
live_snapshots "live gzip sink" "$tmp/live.json.gz" "buffer=4KiB"

object=$tmp/object.json
expect_status 0 "demo -O format=object exits 0" \
  "$tool" demo -O format=object --requests 50 --threads 2 -o "$object"
check "... writes the object form {\"traceEvents\":[ ... ]}, nothing after" \
  starts_ends "$object" '{"traceEvents":[' "
]}"
run "$jsonlint" --check-demo --require-thread-names 3 "$object"
if [ "$status" -eq 0 ]; then
  pass "jsonlint --check-demo: $(cat "$tmp/out")"
else
  fail "jsonlint --check-demo accepts the object form"
fi

expect_status 0 "demo --seconds 0.2 exits 0" \
  "$tool" demo --seconds 0.2 --threads 2 -o "$tmp/timed.json"
run "$jsonlint" --check-demo "$tmp/timed.json"
if [ "$status" -eq 0 ]; then
  pass "jsonlint --check-demo: $(cat "$tmp/out")"
else
  fail "jsonlint --check-demo accepts the timed trace"
fi

# ------------------------------------------------------------- I/O errors
expect_status 1 "demo -o /nonexistent-dir/x.json exits 1" \
  "$tool" demo --requests 5 -o /nonexistent-dir/x.json
check "... with 'tracewriter: FILE: reason' on stderr" \
  grep -q '^tracewriter: /nonexistent-dir/x.json: .' "$tmp/err"

if [ -w /dev/full ]; then
  run sh -c '"$1" --help >/dev/full' sh "$tool"
  if [ "$status" -eq 1 ]; then
    pass "--help > /dev/full exits 1"
  else
    fail "--help > /dev/full exits 1 (exit status $status)"
  fi
else
  skip "no /dev/full"
fi

echo "test_cli: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
