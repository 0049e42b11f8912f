#!/bin/sh
# installcheck.sh -- the installed library, as the README says to use it.
#
# Run by make installcheck (and so by make distcheck) after make install,
# without DESTDIR.  Checks that:
#  - pkg-config finds tracewriter.pc in $libdir/pkgconfig;
#  - the README's C example ("## In C"), built by each of the README's
#    "cc app.c ..." command lines exactly as written, starts and writes a
#    trace that tests/jsonlint reads, with the events the example emits:
#    the rpath line as it is, the plain line (which /usr/local serves
#    through ldconfig) with LD_LIBRARY_PATH;
#  - man finds the page of every public name of the header (man/links.sh
#    made the links), and of tracewriter(7) and tracewriter(1);
#  - the installed tool runs its demo.
# Environment (set by make installcheck): top_srcdir, top_builddir, libdir,
# bindir, mandir; JQ (optional: the example's events field by field);
# SANITIZE_FLAGS (a sanitizer build: the example, built with plain cc,
# cannot link, and is skipped).  Exit status: 0 passed, 1 a check failed,
# 99 the test could not run.

for v in top_srcdir top_builddir libdir bindir mandir; do
  eval "value=\${$v:-}"
  if [ -z "$value" ]; then
    echo "installcheck: $v is not set (run make installcheck)" >&2
    exit 99
  fi
done
readme=$top_srcdir/README.md
jsonlint=$top_builddir/tests/jsonlint

# shellcheck source=tests/testlib.sh
. "$(dirname "$0")/testlib.sh"
tl_setup installcheck
tl_show=$tmp/log

# ------------------------------------------------------------ pkg-config
PKG_CONFIG_PATH=$libdir/pkgconfig
export PKG_CONFIG_PATH
if [ "$(pkg-config --variable=libdir tracewriter 2>"$tmp/log")" = "$libdir" ]
then
  pass "pkg-config finds tracewriter in $libdir/pkgconfig"
else
  fail "pkg-config --variable=libdir tracewriter gives $libdir"
fi

# ---------------------------------------------- the README's C example
awk '/^## In C$/ { inside = 1 }
     inside && /^```c$/ { code = 1; next }
     code && /^```$/ { exit }
     code' "$readme" > "$tmp/app.c"
# Each "cc app.c ..." line of the README, with its continuation lines.
awk '/^cc app\.c / || more { line = line $0
       if (sub(/\\$/, "", line)) { more = 1; next }
       print line; line = ""; more = 0 }' "$readme" > "$tmp/commands"
if ! grep -q 'tw_open' "$tmp/app.c" || [ "$(wc -l < "$tmp/commands")" -lt 2 ]
then
  echo "installcheck: no C example or no 'cc app.c' lines in $readme" >&2
  exit 99
fi

# check_trace: app's trace.json, strict, with the example's 5 events after
# the library's process name and clock record.
check_trace() {
  "$jsonlint" --events "$tmp/trace.json" > "$tmp/log" 2>&1 &&
    grep -q ': ok, 7 events$' "$tmp/log" || return 1
  [ -z "${JQ:-}" ] && return 0
  [ "$("$JQ" -c '[.[] | [.ph, .name]]' "$tmp/trace.json")" = \
    '[["M","process_name"],["c","clock_sync"],["M","thread_name"],["X","step"],["I","ready"],["X","startup"],["C","queue"]]' ]
}

if grep -q -e '-Wl,-rpath,' "$tmp/commands"; then
  pass "the README links with an rpath for a prefix the loader does not search"
else
  fail "the README has a 'cc app.c' line with -Wl,-rpath"
fi
if [ -n "${SANITIZE_FLAGS:-}" ]; then
  echo "SKIP: the README's example (a sanitizer build: plain cc cannot link it)"
else
  n=0
  while IFS= read -r command; do
    n=$((n + 1))
    rm -f "$tmp/app" "$tmp/trace.json"
    if ! (cd "$tmp" && sh -c "$command") > "$tmp/log" 2>&1; then
      fail "README: $command"
      continue
    fi
    pass "README: $command"
    case $command in
      *rpath*) how="as built"; path= ;;
      *) how="with LD_LIBRARY_PATH=$libdir"; path=$libdir ;;
    esac
    if (cd "$tmp" && unset LD_LIBRARY_PATH &&
        if [ -n "$path" ]; then LD_LIBRARY_PATH=$path ./app; else ./app; fi
       ) > "$tmp/log" 2>&1 && check_trace; then
      pass "... ./app runs $how and writes the example's trace"
    else
      fail "... ./app runs $how and writes the example's trace"
    fi
  done < "$tmp/commands"
fi

# --------------------------------------------------------------- man NAME
# The header's public names, as tests/check_man.sh reads them.
names=$(sh "$top_srcdir/man/links.sh" list "$top_srcdir"/man/tw_*.3 |
        cut -d' ' -f1)
missing=
for name in $names; do
  [ -e "$mandir/man3/$name.3" ] || missing="$missing $name"
done
if [ -z "$missing" ] && [ -n "$names" ]; then
  pass "$mandir/man3 has a page or link for each of $(echo $names | wc -w) names"
else
  fail "$mandir/man3 lacks NAME.3 for:$missing"
fi
if command -v man >/dev/null 2>&1; then
  missing=
  for name in $names tracewriter.hpp; do
    man -M "$mandir" -w 3 "$name" >/dev/null 2>&1 || missing="$missing $name"
  done
  man -M "$mandir" -w 7 tracewriter >/dev/null 2>&1 || missing="$missing tracewriter(7)"
  man -M "$mandir" -w 1 tracewriter >/dev/null 2>&1 || missing="$missing tracewriter(1)"
  if [ -z "$missing" ]; then
    pass "man finds every page by name (man tw_close, man TW_SCOPE...)"
  else
    fail "man -M $mandir does not find:$missing"
  fi
  if MANPAGER=cat MANWIDTH=80 man -M "$mandir" 3 tw_close 2>/dev/null |
     grep -q 'tw_open_fd'; then
    pass "man tw_close shows tw_open(3)"
  else
    fail "man tw_close shows tw_open(3)"
  fi
else
  echo "SKIP: man not found (the links are checked as files above)"
fi

# ------------------------------------------------------------- the tool
if "$bindir/tracewriter" demo -n 20 -t 2 -o "$tmp/demo.json" > "$tmp/log" 2>&1 &&
   "$jsonlint" --check-demo "$tmp/demo.json" > "$tmp/log" 2>&1; then
  pass "$bindir/tracewriter demo writes the demo's trace"
else
  fail "$bindir/tracewriter demo writes the demo's trace"
fi

tl_done
