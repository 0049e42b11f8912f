#!/bin/sh
# test_demo.sh -- tracewriter demo: where its output goes, and what it
# says when the name and the compression of the trace disagree.
#
#  - the trace only on stdout with -o - (a pipe, and a regular file), and
#    with -o /dev/stdout; the summary on stderr; no file named "-";
#  - gzip into a name without .gz, and plain JSON into a .gz name: a
#    warning on stderr, and the bytes the options asked for; no warning
#    when they agree;
#  - --rate: its values, and a SIGINT that stops a slow demo at once.
# Every trace is read back with tests/jsonlint --check-demo.  The jq
# checks (stdout piped into jq, the rate seen in the timestamps) are in
# tests/test_demo_jq.sh.  Environment (set by make check): top_builddir.
# Exit status: 0 all passed, 1 a check failed, 77 (SKIP) without gzip, 99
# the test could not run.

top_builddir=${top_builddir:-.}
tool=$top_builddir/tools/tracewriter
jsonlint=$top_builddir/tests/jsonlint

for program in "$tool" "$jsonlint"; do
  if [ ! -x "$program" ]; then
    echo "test_demo: $program is not built" >&2
    exit 99
  fi
done
if ! command -v gzip >/dev/null 2>&1; then
  echo "SKIP: gzip not found (it reads the demo's gzip traces back)"
  exit 77
fi
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool") || exit 99
jsonlint=$(cd "$(dirname "$jsonlint")" && pwd)/$(basename "$jsonlint") || exit 99

# shellcheck source=tests/testlib.sh
. "$(dirname "$0")/testlib.sh"
tl_setup test_demo
cd "$tmp" || exit 99

# demo ARGS...: run the demo (2 workers) with stdout in out, stderr in
# err, the exit status in $status.
demo() {
  "$tool" demo -t 2 "$@" >out 2>err
  status=$?
}

# lint FILE: the demo's structure, strictly; $events gets its count.
lint() {
  events=
  if "$jsonlint" --check-demo "$1" >lint.out 2>&1; then
    events=$(sed -n 's/^.*: ok, \([0-9][0-9]*\) events$/\1/p' lint.out)
    [ -n "$events" ]
  else
    sed 's/^/  /' lint.out
    return 1
  fi
}

# summary_says N WHERE: stderr is the one summary line, N events to WHERE.
summary_says() {
  [ "$(wc -l < err)" -eq 1 ] && grep -q "^wrote $1 events, .* to $2" err
}

is_gzip() {
  [ "$(od -An -tx1 -N2 "$1" | tr -d ' ')" = 1f8b ]
}

# ------------------------------------------------------ -o -, /dev/stdout
"$tool" demo -t 2 -n 40 -o - 2>err | cat >piped.json
check "demo -o - | cat: the trace is the whole of stdout" lint piped.json
check "... the summary alone on stderr, with the count of the trace" \
  summary_says "$events" "standard output"
check "... and no file named '-'" test ! -e ./-

demo -n 40 -o -
check "demo -o - >file (committed in place) exits 0" test "$status" -eq 0
check "... the file is the demo's trace" lint out
check "... the summary on stderr" summary_says "$events" "standard output"

"$tool" demo -t 2 -n 40 -o /dev/stdout 2>err | cat >devstdout.json
check "demo -o /dev/stdout | cat: nothing but the trace on stdout" \
  lint devstdout.json
check "... the summary on stderr" summary_says "$events" /dev/stdout

demo -n 40 -o plain.json
check "demo -o FILE: nothing on stdout" test ! -s out
check "... the summary on stderr" summary_says '[0-9]*' plain.json
check "... no warning" sh -c '! grep -q warning err'
check "... the file is the demo's trace" lint plain.json

# -------------------------------------------- the name and the compression
demo -n 40 -O sink=gzip -o gz.json
check "demo -O sink=gzip -o gz.json exits 0" test "$status" -eq 0
check "... warns that gz.json holds gzip without .gz" \
  grep -q "^tracewriter demo: warning: gz.json will hold gzip.*does not end in .gz" err
check "... and still writes gzip, as asked" is_gzip gz.json
gzip -dc <gz.json >gz-unzipped.json 2>/dev/null
check "... which decompresses to the demo's trace" lint gz-unzipped.json

demo -n 40 -O sink=file -o plain.json.gz
check "demo -O sink=file -o plain.json.gz exits 0" test "$status" -eq 0
check "... warns that plain.json.gz holds plain JSON" \
  grep -q "^tracewriter demo: warning: plain.json.gz will hold plain JSON" err
check "... and writes plain JSON, as asked" lint plain.json.gz

demo -n 40 -O mmap -o mapped.json.gz
check "demo -O mmap -o mapped.json.gz warns too" \
  grep -q "warning: mapped.json.gz will hold plain JSON (sink=mmap)" err

demo -n 40 -o both.json.gz
check "demo -o both.json.gz: gzip, no warning" sh -c \
  '[ "$0" -eq 0 ] && ! grep -q warning err' "$status"
check "... gzip" is_gzip both.json.gz
demo -n 40 -O sink=auto -o auto.json.gz
check "demo -O sink=auto -o auto.json.gz: no warning" \
  sh -c '! grep -q warning err'
check "... gzip (auto goes by the name)" is_gzip auto.json.gz

# ------------------------------------------------------------------ rate
for bad in 0 -1 x 1000001 1e3 ''; do
  demo --rate "$bad" -n 5 -o never.json
  check "demo --rate '$bad' is a usage error naming the rate" \
    sh -c '[ "$0" -eq 2 ] && grep -q "bad rate" err' "$status"
done
check "... and writes no file" test ! -e never.json
demo --rate max -n 300 -o max.json
check "demo --rate max exits 0" test "$status" -eq 0
check "... the demo's trace" lint max.json
demo -r 5000 -n 300 -o fast.json
check "demo -r 5000 exits 0 with the demo's trace" lint fast.json

# A slow demo (1 request a second, for a day) stops at once on SIGINT,
# in the middle of the wait for the next request, and closes its trace.
# The burst of requests at the start is committed by flush=10ms: once
# the file holds it, the signal handlers are in place.
"$tool" demo -t 2 -r 1 -s 86400 -O flush=10ms -o slow.json >out 2>err &
pid=$!
tries=0
until "$jsonlint" --check-demo slow.json 2>/dev/null |
      grep -q ': ok, [1-9][0-9][0-9] events$'; do
  tries=$((tries + 1))
  if [ $tries -gt 600 ] || ! kill -0 $pid 2>/dev/null; then
    echo "test_demo: the slow demo did not start (60 s)" >&2
    kill $pid 2>/dev/null
    exit 99
  fi
  sleep 0.1
done
kill -INT $pid
wait $pid
status=$?
check "SIGINT stops demo -r 1 -s 86400 with status 0" test "$status" -eq 0
check "... its trace is complete" lint slow.json

tl_done
