#!/bin/sh
# test_rust.sh -- the Rust binding (rust/): cargo test against the library
# just built.
#
# Runs `cargo test --offline --locked` on $top_srcdir/rust/Cargo.toml with
# the build in $top_builddir/rust/target (the source tree may be read-only,
# as in make distcheck) and the library from $top_builddir/.libs; the
# crate's tests find tests/jsonlint and tools/tracewriter through
# top_builddir.  First checks that src/ffi.rs declares every function of
# the header, so the binding cannot silently fall behind the C API.
#
# Environment (set by make check): top_builddir, top_srcdir; CARGO (default
# cargo, as found on PATH) and CARGO_TEST_ARGS (extra arguments, e.g.
# "-- --nocapture").  Exit status: 0 passed, 1 failed, 77 skipped (no
# cargo, no shared library, or a ThreadSanitizer build), 99 could not run.

top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
CARGO=${CARGO:-cargo}
crate=$top_srcdir/rust
libdir=$top_builddir/.libs
header=$top_srcdir/include/tracewriter.h

if ! command -v "$CARGO" >/dev/null 2>&1; then
  echo "SKIP: $CARGO not found (Debian: apt-get install cargo)"
  exit 77
fi
if [ ! -f "$libdir/libtracewriter.so" ]; then
  echo "SKIP: no shared library ($libdir/libtracewriter.so): configured with --disable-shared?"
  exit 77
fi
if [ ! -f "$crate/Cargo.toml" ]; then
  echo "ERROR: $crate/Cargo.toml not found" >&2
  exit 99
fi

# Every function the header exports is declared in src/ffi.rs, but for
# those that have no use in Rust: tw_open_stream takes a FILE *, and
# tw_span_begin/tw_span_end serve TW_SCOPE (Span does the same in Rust).
not_bound='tw_open_stream tw_span_begin tw_span_end'
declared=$(awk '/^TW_EXTERN/ { decl = $0; while (decl !~ /\(/ && (getline line) > 0) decl = decl " " line;
                if (match(decl, /tw_[a-z0-9_]+[ \t]*\(/)) print substr(decl, RSTART, RLENGTH) }' "$header" |
           sed 's/[[:space:](]//g' | sort -u)
missing=
for f in $declared; do
  case " $not_bound " in *" $f "*) continue;; esac
  grep -q "pub fn $f(" "$crate/src/ffi.rs" || missing="$missing $f"
done
if [ -n "$missing" ]; then
  echo "FAIL: rust/src/ffi.rs lacks functions of tracewriter.h:$missing"
  exit 1
fi
echo "PASS: rust/src/ffi.rs declares every function of tracewriter.h"

# A library built with sanitizers needs their runtime loaded first; the
# Rust standard library is not instrumented, and ThreadSanitizer would
# report the synchronisation it cannot see (scoped threads join on a
# futex), so that build skips.
preload=
needed=$(LC_ALL=C readelf -d "$libdir/libtracewriter.so" 2>/dev/null)
case $needed in
  *libtsan*)
    echo "SKIP: libtracewriter is built with ThreadSanitizer"
    exit 77;;
esac
for rt in asan ubsan; do
  case $needed in
    *"lib$rt.so"*)
      path=$(${CC:-cc} -print-file-name="lib$rt.so" 2>/dev/null)
      case $path in
        /*) preload="$preload${preload:+:}$path";;
        *) echo "SKIP: lib$rt.so, which libtracewriter needs, not found"; exit 77;;
      esac;;
  esac
done

abs_builddir=$(cd "$top_builddir" && pwd) || exit 99
CARGO_TARGET_DIR=$abs_builddir/rust/target
TRACEWRITER_LIB_DIR=$(cd "$libdir" && pwd) || exit 99
# The rpath build.rs writes covers the tests; rustdoc's doctests get it
# from newer cargo only.
LD_LIBRARY_PATH=$TRACEWRITER_LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CARGO_TARGET_DIR TRACEWRITER_LIB_DIR LD_LIBRARY_PATH
# cargo and rustc themselves must not run with the sanitizer runtime:
# preload it for the test programs only, through cargo's runner, which
# rustdoc does not use: the doctests are left out of such a build.
targets=
if [ -n "$preload" ]; then
  targets="--lib --tests"
  runner="env LD_PRELOAD=$preload"
  CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=$runner
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=$runner
  export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER
fi

# make's jobserver descriptors are not passed to this script: keep cargo
# from looking for them.
unset MAKEFLAGS MFLAGS CARGO_MAKEFLAGS
"$CARGO" --version
# A deadline for the whole run, as every test program has one.
deadline=
if command -v timeout >/dev/null 2>&1; then
  deadline="timeout 900"
fi
# shellcheck disable=SC2086 # deadline, targets, CARGO_TEST_ARGS: word lists
$deadline "$CARGO" test --offline --locked --manifest-path "$crate/Cargo.toml" \
  $targets $CARGO_TEST_ARGS
status=$?
case $status in
  0) exit 0;;
  124) echo "FAIL: cargo test did not finish in 900 s"; exit 1;;
  *) exit 1;;
esac
