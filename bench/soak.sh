#!/bin/sh
# soak.sh -- make soak: the demo for minutes with rotation, checked.
#
# Not part of make check or CI.  Runs two `tracewriter demo --threads 4`
# at the same time, each for SOAK_SECONDS:
#
#   gzip  -o DIR/gzip/trace.json.gz  -O rotate=16MiB,keep=4,sink=gzip
#   file  -o DIR/file/trace.json     -O sink=file,rotate=16MiB,rotate_every=30s,keep=4
#
# and every SOAK_INTERVAL seconds records each demo's resident set (VmRSS
# in /proc/PID/status), its open file descriptors (/proc/PID/fd) and the
# trace files in its directory.  At the end, for each run:
#
#   * the demo exited 0;
#   * RSS grew by at most SOAK_RSS_KIB from the first sample taken 10 s
#     or more after the start to the last sample;
#   * the number of open file descriptors was the same in every sample;
#   * at most keep + 1 = 5 files are left: the path and its rotated files
#     (trace.json -> trace.000001.json, trace.json.gz ->
#     trace.000001.json.gz);
#   * every one of them passes gzip -t (.gz) and the strict checker
#     (tests/jsonlint, the .gz inflated first) as a trace with the 5 thread
#     names (acceptor, worker-1..4): each file is a complete trace.
#
# If the demo refuses the options (a library without rotation), the soak
# says so and fails before it starts.
#
# Environment: top_builddir (default .), SOAK_SECONDS (default 300, at
# least 20), SOAK_INTERVAL (default 5), SOAK_RSS_KIB (default 1024),
# SOAK_DIR (default $TMPDIR or /tmp: the run's directory is made there;
# removed if every check passed, kept otherwise).
# Exit status: 0 every check passed, 1 a check failed, 2 a bad setting,
# 99 the soak could not run.

# The per-run settings are variables NAME_RUN (opts_gzip...), read by eval.
# shellcheck disable=SC2034,SC2154
top_builddir=${top_builddir:-.}
SOAK_SECONDS=${SOAK_SECONDS:-300}
SOAK_INTERVAL=${SOAK_INTERVAL:-5}
SOAK_RSS_KIB=${SOAK_RSS_KIB:-1024}
SOAK_DIR=${SOAK_DIR:-${TMPDIR:-/tmp}}
tool=$top_builddir/tools/tracewriter
jsonlint=$top_builddir/tests/jsonlint
threads=4
keep=4
names=$((threads + 1))

RUNS="gzip file"
opts_gzip="rotate=16MiB,keep=$keep,sink=gzip"
path_gzip=trace.json.gz
opts_file="sink=file,rotate=16MiB,rotate_every=30s,keep=$keep"
path_file=trace.json

for v in SOAK_SECONDS SOAK_INTERVAL SOAK_RSS_KIB; do
  eval "value=\$$v"
  case $value in
    ''|*[!0-9]*) echo "soak: $v=$value: expected a whole number" >&2; exit 2;;
  esac
done
if [ "$SOAK_SECONDS" -lt 20 ] || [ "$SOAK_INTERVAL" -lt 1 ]; then
  echo "soak: SOAK_SECONDS must be at least 20, SOAK_INTERVAL at least 1" >&2
  exit 2
fi
for program in "$tool" "$jsonlint"; do
  if [ ! -x "$program" ]; then
    echo "soak: $program is not built" >&2
    exit 99
  fi
done
if [ ! -r /proc/self/status ]; then
  echo "soak: no /proc: cannot sample RSS and file descriptors" >&2
  exit 99
fi
command -v gzip >/dev/null 2>&1 || { echo "soak: gzip not found" >&2; exit 99; }

dir=$(mktemp -d "$SOAK_DIR/tw-soak.XXXXXX") || exit 99
pids=
cleanup() {
  for p in $pids; do
    kill "$p" 2>/dev/null
  done
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# The demo must accept the options: a short run of each.
for run in $RUNS; do
  eval "opts=\$opts_$run path=\$path_$run"
  mkdir "$dir/pre-$run" || exit 99
  if ! "$tool" demo --requests 5 --threads 1 -o "$dir/pre-$run/$path" \
       -O "$opts" >"$dir/pre-$run.out" 2>&1; then
    echo "soak: FAIL: the demo refuses -O '$opts':" >&2
    sed 's/^/  /' "$dir/pre-$run.out" >&2
    echo "soak: rotation (rotate=, rotate_every=, keep=) not available in" \
      "this build?" >&2
    rm -rf "$dir"
    exit 1
  fi
  rm -rf "$dir/pre-$run" "$dir/pre-$run.out"
done

# files RUN: the trace files of run RUN, one a line (the path itself
# and its rotated files).
files() {
  eval "path=\$path_$1"
  stem=${path%%.*}
  ext=${path#"$stem"}
  for f in "$dir/$1/$path" "$dir/$1/$stem".[0-9][0-9][0-9][0-9][0-9][0-9]*"$ext"; do
    [ -e "$f" ] && echo "$f"
  done
}

# sample RUN PID T: append "T RSS_KIB FDS FILES" to DIR/RUN.samples;
# returns 1 once the process is gone (or a zombie, which has no VmRSS).
sample() {
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$2/status" 2>/dev/null)
  [ -n "$rss" ] || return 1
  fds=$(ls "/proc/$2/fd" 2>/dev/null | wc -l)
  # A sample that falls inside a rotation may see the new file open
  # before the old one is closed: look again before believing a change.
  if [ -s "$dir/$1.samples" ]; then
    fd0=$(awk 'NR == 1 { print $3 }' "$dir/$1.samples")
    if [ "$fds" -ne "$fd0" ]; then
      sleep 1
      fds=$(ls "/proc/$2/fd" 2>/dev/null | wc -l)
      rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$2/status" 2>/dev/null)
      [ -n "$rss" ] || return 1
    fi
  fi
  echo "$3 $rss $fds $(files "$1" | wc -l)" >>"$dir/$1.samples"
}

echo "soak: $SOAK_SECONDS s of 'tracewriter demo --threads $threads'," \
  "sampled every $SOAK_INTERVAL s, in $dir"
start=$(date +%s)
for run in $RUNS; do
  eval "opts=\$opts_$run path=\$path_$run"
  mkdir "$dir/$run" || exit 99
  : >"$dir/$run.samples"
  echo "soak: $run: -o $path -O $opts"
  "$tool" demo --threads "$threads" --rate max --seconds "$SOAK_SECONDS" \
    -o "$dir/$run/$path" -O "$opts" >"$dir/$run.out" 2>&1 &
  eval "pid_$run=\$!"
  pids="$pids $!"
done

while :; do
  sleep "$SOAK_INTERVAL"
  t=$(($(date +%s) - start))
  alive=0
  for run in $RUNS; do
    eval "pid=\$pid_$run"
    sample "$run" "$pid" "$t" && alive=1
  done
  [ "$alive" = 1 ] || break
  if [ $((t % 60)) -lt "$SOAK_INTERVAL" ]; then
    for run in $RUNS; do
      tail -n 1 "$dir/$run.samples" | awk -v r="$run" '{ printf "soak: %4d s  %-4s RSS %6d KiB  fds %3d  files %d\n", $1, r, $2, $3, $4 }'
    done
  fi
done
for run in $RUNS; do
  eval "pid=\$pid_$run"
  wait "$pid"
  eval "status_$run=\$?"
done
pids=

failed=0
fail() {
  failed=$((failed + 1))
  echo "  FAIL: $*"
}
ok() {
  echo "  ok:   $*"
}

echo
echo "soak report ($SOAK_SECONDS s, samples every $SOAK_INTERVAL s)"
for run in $RUNS; do
  eval "opts=\$opts_$run path=\$path_$run status=\$status_$run"
  echo "$run: -O $opts"
  if [ "$status" -eq 0 ]; then
    ok "demo exited 0: $(tail -n 1 "$dir/$run.out")"
  else
    fail "demo exited $status:"
    sed 's/^/        /' "$dir/$run.out"
  fi

  # RSS and file descriptors.
  n=$(wc -l <"$dir/$run.samples")
  if [ "$n" -lt 2 ]; then
    fail "only $n sample(s) of RSS and fds"
  else
    awk -v limit="$SOAK_RSS_KIB" '
      $1 >= 10 && !have { have = 1; t0 = $1; r0 = $2 }
      { t1 = $1; r1 = $2
        if ($3 < fdmin || NR == 1) fdmin = $3
        if ($3 > fdmax || NR == 1) fdmax = $3
        if ($2 > rmax) rmax = $2
        if ($4 > files) files = $4 }
      END {
        if (!have) { print "FAIL no sample 10 s or more after the start"; exit }
        printf "%s RSS %d KiB at %d s -> %d KiB at %d s: %+d KiB (limit %d, peak %d)\n",
          (r1 - r0 <= limit ? "ok" : "FAIL"), r0, t0, r1, t1, r1 - r0, limit, rmax
        printf "%s open fds %d..%d over %d samples\n",
          (fdmin == fdmax ? "ok" : "FAIL"), fdmin, fdmax, NR
        printf "info most trace files seen in a sample: %d\n", files
      }' "$dir/$run.samples" >"$dir/$run.verdict"
    while read -r verdict text; do
      case $verdict in
        ok) ok "$text";;
        FAIL) fail "$text";;
        *) echo "        $text";;
      esac
    done <"$dir/$run.verdict"
  fi

  # The files: how many, and each one complete.
  files "$run" >"$dir/$run.files"
  count=$(wc -l <"$dir/$run.files")
  last=$(sed -n 's/.*\.\([0-9][0-9]*\)\.json.*$/\1/p' "$dir/$run.files" |
         sort -n | tail -n 1)
  rotations=$(echo "${last:-0}" | sed 's/^0*//')
  if [ "$count" -le $((keep + 1)) ] && [ "$count" -ge 1 ]; then
    ok "$count file(s) left (at most keep+1 = $((keep + 1))); ${rotations:-0} rotation(s)"
  else
    fail "$count file(s) left, expected 1 to $((keep + 1)) (keep=$keep)"
  fi
  if [ -z "$rotations" ]; then
    echo "        note: no rotation happened in $SOAK_SECONDS s: the" \
      "rotation checks covered nothing"
  fi
  bad=0
  while read -r f; do
    name=${f#"$dir/"}
    case $f in
      *.gz)
        if ! gzip -t "$f" 2>"$dir/check.err"; then
          fail "$name: gzip -t: $(cat "$dir/check.err")"
          bad=1
          continue
        fi
        gzip -dc "$f" >"$dir/check.json"
        json=$dir/check.json;;
      *) json=$f;;
    esac
    if ! "$jsonlint" --require-thread-names "$names" "$json" \
         >"$dir/check.out" 2>&1; then
      fail "$name: $(sed "s|^$json: ||" "$dir/check.out")"
      bad=1
    fi
    rm -f "$dir/check.json"
  done <"$dir/$run.files"
  [ "$bad" = 0 ] && ok "every file is strict JSON, a trace with $names" \
    "thread names$(case $path in *.gz) echo ", and passes gzip -t";; esac)"
done

echo
if [ "$failed" -eq 0 ]; then
  echo "soak: PASS"
  rm -rf "$dir"
  exit 0
fi
echo "soak: FAIL ($failed check(s)); files kept in $dir"
exit 1
