#!/bin/sh
# bench_tools.sh -- how fast tracewriter repair reads padding (make
# bench-tools; not part of make check).
#
# Two files: a trace's head and first record followed by 64 MiB of NUL
# bytes (a power loss, or a sparse tail) and by 64 MiB of spaces (the mmap
# sink's padding), no tail.  Each is repaired (-o to a file beside it) and
# read by cat (to /dev/null), the reference for "memory speed", in
# BENCH_REPS interleaved rounds; the medians are printed as MB/s (10^6
# bytes per second, wall time) with the ratio repair / cat.
#
# Usage: bench_tools.sh [PROGRAM] (default $top_builddir/tools/tracewriter)
# Environment: top_builddir (where tools/tracewriter is), BENCH_DIR (the
# directory of the files, default /dev/shm or $TMPDIR or /tmp: memory, so
# that the figures are the CPU's), BENCH_MIB (default 64), BENCH_REPS
# (default 7).  Exit status: 0, 1 a run failed, 99 cannot run.

top_builddir=${top_builddir:-.}
# The program: make bench-tools gives it through libtool --mode=execute,
# so that the libtool wrapper script (a shell and a sed per run) is not
# timed.
tool=${1:-$top_builddir/tools/tracewriter}
mib=${BENCH_MIB:-64}
reps=${BENCH_REPS:-7}
if [ -z "${BENCH_DIR:-}" ]; then
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    BENCH_DIR=/dev/shm
  else
    BENCH_DIR=${TMPDIR:-/tmp}
  fi
fi

if [ ! -x "$tool" ]; then
  echo "bench_tools: $tool is not built" >&2
  exit 99
fi
case $mib$reps in
  *[!0-9]*) echo "bench_tools: BENCH_MIB and BENCH_REPS are numbers" >&2
            exit 99 ;;
esac
if head -c 2 "$tool" | grep -q '#!'; then
  echo "bench_tools: note: $tool is a script; its start-up is timed too" >&2
fi
date +%s%N | grep -q '^[0-9]*$' || {
  echo "bench_tools: date +%s%N gives no nanoseconds" >&2
  exit 99
}

dir=$(mktemp -d "$BENCH_DIR/bench_tools.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' HUP INT TERM

head='[
{"ph":"M","name":"process_name","pid":1,"tid":1,"args":{"name":"bench"}},
{"ph":"X","name":"work","cat":"bench","ts":1.000,"dur":2.000,"pid":1,"tid":1}'
bytes=$((mib * 1048576))
printf '%s' "$head" > "$dir/nul.json"
head -c "$bytes" /dev/zero >> "$dir/nul.json"
printf '%s' "$head" > "$dir/spaces.json"
head -c "$bytes" /dev/zero | tr '\0' ' ' >> "$dir/spaces.json"
size=$(wc -c < "$dir/nul.json")

# ns COMMAND...: run it, print its wall time in nanoseconds.
ns() {
  t0=$(date +%s%N)
  "$@" || return 1
  t1=$(date +%s%N)
  echo $((t1 - t0))
}

# cat_null FILE: cat it to /dev/null (a function: no shell in between).
cat_null() {
  cat "$1" > /dev/null
}

# median: the median of the numbers on stdin.
median() {
  sort -n | awk '{ v[NR] = $1 } END {
    if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

for f in nul spaces; do
  : > "$dir/$f.cat"
  : > "$dir/$f.repair"
done
for r in $(seq "$reps"); do
  for f in nul spaces; do
    ns cat_null "$dir/$f.json" >> "$dir/$f.cat" || exit 1
    ns "$tool" repair -q -o "$dir/out.json" "$dir/$f.json" \
      >> "$dir/$f.repair" || exit 1
    rm -f "$dir/out.json"
  done
done

echo "tracewriter repair: a record, then $mib MiB of padding, no tail"
echo "($size bytes; $reps interleaved rounds, medians; in $BENCH_DIR)"
echo "program: $tool"
echo
printf '%-8s %12s %12s %12s %12s %8s\n' padding "cat ms" "cat MB/s" \
  "repair ms" "repair MB/s" "x cat"
for f in nul spaces; do
  c=$(median < "$dir/$f.cat")
  p=$(median < "$dir/$f.repair")
  awk -v name="$f" -v size="$size" -v c="$c" -v p="$p" 'BEGIN {
    printf "%-8s %12.1f %12.0f %12.1f %12.0f %8.2f\n", name, c / 1e6,
      size / (c / 1e9) / 1e6, p / 1e6, size / (p / 1e9) / 1e6, p / c }'
done
echo
echo "x cat: repair's time over cat's (1.00: as fast as reading the file)."
