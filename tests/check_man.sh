#!/bin/sh
# check_man.sh -- every public name of the header has a manual page.
#
# The public names of include/tracewriter.h are its TW_EXTERN functions,
# its static inline functions (the tw_arg_* constructors) and its
# function-like macros (tw_options_init, tw_get_stats, TW_SCOPE...), less
# the internal tw__/TW__ ones.  Checks that:
#  - each is named (.Nm) in the NAME section of exactly one man/*.3 page,
#    so that make install links NAME.3 to that page (man/links.sh) and
#    "man NAME" works;
#  - every name of those sections is such a public name (none stale);
#  - the FUNCTIONS section of tracewriter(7) lists each under the page
#    that names it, and nothing else.
# Environment (set by make check): top_srcdir.  Exit status: 0 passed, 1 a
# check failed, 99 the test could not run.

top_srcdir=${top_srcdir:-.}
header=$top_srcdir/include/tracewriter.h
man=$top_srcdir/man

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_man.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# The header's public names: a declaration is joined up to its "(".
awk '
  /^TW_EXTERN/ || /^static inline/ {
    decl = $0
    while (decl !~ /\(/ && (getline line) > 0) decl = decl " " line
    if (match(decl, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/))
      print substr(decl, RSTART, RLENGTH)
    next
  }
  /^#[ \t]*define[ \t]+[A-Za-z_][A-Za-z0-9_]*\(/ {
    sub(/^#[ \t]*define[ \t]+/, "")
    print substr($0, 1, index($0, "(") - 1)
  }' "$header" |
  sed 's/[[:space:](]//g' | grep -v '^tw__\|^TW__' | sort -u > "$tmp/header" ||
  exit 99
if [ "$(wc -l < "$tmp/header")" -lt 40 ]; then
  echo "ERROR: only $(wc -l < "$tmp/header") names read from $header"
  exit 99
fi

# "NAME PAGE" of every .Nm of the section-3 pages of the C library (the
# C++ binding's page documents a header of its own).
pages=
for page in "$man"/*.3; do
  case ${page##*/} in tracewriter.hpp.3) continue;; esac
  pages="$pages $page"
done
# shellcheck disable=SC2086 # $pages is a list of paths without blanks
sh "$man/links.sh" list $pages | sort > "$tmp/named" || exit 99

status=0
cut -d' ' -f1 "$tmp/named" | sort > "$tmp/names"
missing=$(comm -23 "$tmp/header" "$tmp/names" | sort -u)
if [ -n "$missing" ]; then
  echo "FAIL: public names of tracewriter.h that no man/*.3 page names (.Nm in NAME):"
  echo "$missing" | sed 's/^/  /'
  status=1
fi
stale=$(comm -13 "$tmp/header" "$tmp/names" | sort -u)
if [ -n "$stale" ]; then
  echo "FAIL: names in man/*.3 NAME sections that tracewriter.h does not declare:"
  echo "$stale" | sed 's/^/  /'
  status=1
fi
twice=$(uniq -d "$tmp/names")
if [ -n "$twice" ]; then
  echo "FAIL: names in the NAME sections of two pages (their links would clash):"
  echo "$twice" | sed 's/^/  /'
  status=1
fi

# tracewriter(7), FUNCTIONS: ".Ss Title: Xr PAGE 3" then ".It Fn NAME Ta ...".
awk '
  /^\.Sh / { inside = ($0 == ".Sh FUNCTIONS"); next }
  !inside { next }
  /^\.Ss / { page = ""; if (match($0, /Xr [A-Za-z0-9_.]+ 3/))
               page = substr($0, RSTART + 3, RLENGTH - 5) ".3"; next }
  /^\.It Fn / { print $3, (page == "" ? "NO-PAGE" : page) }
' "$man/tracewriter.7" | sort > "$tmp/listed"
if ! diff -u "$tmp/named" "$tmp/listed" > "$tmp/diff"; then
  echo "FAIL: tracewriter(7) FUNCTIONS differs from the pages' NAME sections (- pages, + tracewriter.7):"
  sed -n '/^[-+][^-+]/p' "$tmp/diff" | sed 's/^/  /'
  status=1
fi

[ $status = 0 ] &&
  echo "PASS: $(wc -l < "$tmp/header") public names, each in one page's NAME section and in tracewriter(7)"
exit $status
