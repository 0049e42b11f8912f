#!/bin/sh
# Only the tw_* functions the header declares may be exported, and all of
# them must be.
set -eu
lib="${top_builddir:-.}/.libs/libtracewriter.so"
header="${top_srcdir:-.}/include/tracewriter.h"
if [ ! -f "$lib" ]; then
  echo "no shared library ($lib): skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sed 's/@.*//' | sort -u > "$tmp/exported"
# The first "tw_name(" of each TW_EXTERN declaration (which may span lines).
awk '/^TW_EXTERN/ { decl = $0; while (decl !~ /\(/ && (getline line) > 0) decl = decl " " line;
                    if (match(decl, /tw_[a-z0-9_]+[ \t]*\(/)) print substr(decl, RSTART, RLENGTH) }' "$header" |
  sed 's/[[:space:](]//g' | sort -u > "$tmp/declared"
if ! diff -u "$tmp/declared" "$tmp/exported"; then
  echo "FAIL: exported symbols differ from the header's TW_EXTERN functions (- declared, + exported)"
  exit 1
fi
echo "PASS: $(wc -l < "$tmp/exported") symbols, all tw_* and declared"
