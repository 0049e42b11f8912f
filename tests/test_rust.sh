#!/bin/sh
# test_rust.sh -- the Rust binding (rust/): cargo test against the library
# just built, without and with every feature.
#
# Runs `cargo test --offline --locked` on $top_srcdir/rust/Cargo.toml with
# the build in $top_builddir/rust/target (the source tree may be read-only,
# as in make distcheck) and the library from $top_builddir/.libs; the
# crate's tests find tests/jsonlint and tools/tracewriter through
# top_builddir.  First checks that src/ffi.rs declares every function of
# the header, so the binding cannot silently fall behind the C API.
# Then: once with no feature (the library's and the integration tests,
# rust/tests/integration, one program), once with serde, tracing and
# static (those, the doctests and the example); that
# build.rs warns, naming TRACEWRITER_LIB_DIR, when it falls back to a bare
# -ltracewriter; and that a crate depending on this one with the static
# feature runs with no LD_LIBRARY_PATH.
#
# The crates the features need are Debian's (librust-serde-dev...,
# installed by ./bootstrap) in /usr/share/cargo/registry: cargo is pointed
# at that directory through a CARGO_HOME of its own in the build tree,
# offline, so no network is ever needed.
#
# Environment (set by make check): top_builddir, top_srcdir; CARGO
# (default: Debian's /usr/bin/cargo when it exists, with RUSTC the rustc
# beside it, else cargo on PATH), CARGO_REGISTRY (default
# /usr/share/cargo/registry) and CARGO_TEST_ARGS (extra arguments, e.g.
# "-- --nocapture").  Exit status: 0 passed, 1 failed, 77 skipped (no
# cargo, no shared library, or a ThreadSanitizer build), 99 could not run.

top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
# Debian's cargo and rustc are what the packaged crates are built for
# (and what ./bootstrap installs); a rustup cargo earlier on PATH would
# also call rustup's rustc.
if [ -z "${CARGO:-}" ] && [ -x /usr/bin/cargo ]; then
  CARGO=/usr/bin/cargo
  if [ -z "${RUSTC:-}" ] && [ -x /usr/bin/rustc ]; then
    RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
    export RUSTC RUSTDOC
  fi
fi
CARGO=${CARGO:-cargo}
CARGO_REGISTRY=${CARGO_REGISTRY:-/usr/share/cargo/registry}
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
# Every crate of Cargo.lock must be in the registry directory.
missing=
for c in $(awk '/^name = / { n = $3 } /^version = / && n { gsub(/"/, "", n); v = $3; gsub(/"/, "", v);
                if (n != "tracewriter") print n "-" v; n = "" }' "$crate/Cargo.lock"); do
  [ -d "$CARGO_REGISTRY/$c" ] || missing="$missing $c"
done
if [ -n "$missing" ]; then
  echo "SKIP: crates missing from $CARGO_REGISTRY:$missing"
  echo "SKIP: (Debian: apt-get install librust-serde-dev" \
       "librust-serde-json-dev librust-tracing-dev librust-tracing-subscriber-dev, or ./bootstrap)"
  exit 77
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
# A cargo home of our own: the crates come from the registry directory,
# never from the network.
CARGO_HOME=$abs_builddir/rust/target/cargo-home
mkdir -p "$CARGO_HOME" || exit 99
cat >"$CARGO_HOME/config.toml" <<EOF || exit 99
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "$CARGO_REGISTRY"
[net]
offline = true
EOF
export CARGO_HOME
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
# Builds that are thrown away: no debug information and no incremental
# state, a third less CPU time for the two builds (a failing test still
# names its function); set these variables to choose otherwise.
CARGO_PROFILE_DEV_DEBUG=${CARGO_PROFILE_DEV_DEBUG-0}
CARGO_PROFILE_TEST_DEBUG=${CARGO_PROFILE_TEST_DEBUG-0}
CARGO_INCREMENTAL=${CARGO_INCREMENTAL-0}
export CARGO_PROFILE_DEV_DEBUG CARGO_PROFILE_TEST_DEBUG CARGO_INCREMENTAL
"$CARGO" --version
# A deadline for the whole run, as every test program has one.
deadline=
if command -v timeout >/dev/null 2>&1; then
  deadline="timeout 900"
fi
fail=0
# One cargo command under the deadline; a timeout is a failure that says so.
run()
{
  # shellcheck disable=SC2086 # deadline: a word list
  $deadline "$@"
  status=$?
  [ $status = 124 ] && echo "FAIL: $* did not finish in 900 s"
  return $status
}

# Every feature, but static where the library is built with a sanitizer
# (its runtime is preloaded, not linked).
features=serde,tracing,static
[ -n "$preload" ] && features=serde,tracing
# The doctests and the example are built once, with every feature: the
# pass without features adds nothing to them but its CPU time.
for f in "" "$features"; do
  pass_targets=$targets
  if [ -z "$f" ] && [ -z "$targets" ]; then
    pass_targets="--lib --tests"
  fi
  echo "== cargo test${f:+ --features $f}${pass_targets:+ $pass_targets}"
  # shellcheck disable=SC2086 # pass_targets, CARGO_TEST_ARGS: word lists
  run "$CARGO" test --offline --locked --manifest-path "$crate/Cargo.toml" \
    ${f:+--features "$f"} $pass_targets $CARGO_TEST_ARGS || fail=1
done

# The fallback to a bare -ltracewriter says what to set.
echo "== build.rs without TRACEWRITER_LIB_DIR or pkg-config"
log=$CARGO_TARGET_DIR/fallback.log
if run env -u TRACEWRITER_LIB_DIR PKG_CONFIG=false "$CARGO" build --offline --locked \
      --manifest-path "$crate/Cargo.toml" --lib >"$log" 2>&1 &&
   grep -q '^warning: .*TRACEWRITER_LIB_DIR' "$log"; then
  echo "PASS: build.rs warns, naming TRACEWRITER_LIB_DIR"
else
  cat "$log"
  echo "FAIL: no cargo:warning naming TRACEWRITER_LIB_DIR"
  fail=1
fi

# A crate of its own depending on this one with the static feature: its
# program starts with no LD_LIBRARY_PATH and needs no libtracewriter.so.
if [ -z "$preload" ]; then
  echo "== a dependent crate with the static feature"
  dep=$CARGO_TARGET_DIR/dependent
  mkdir -p "$dep/src" || exit 99
  abs_crate=$(cd "$crate" && pwd) || exit 99
  cat >"$dep/Cargo.toml" <<EOF || exit 99
[package]
name = "tw-dependent"
version = "0.0.0"
edition = "2021"
[dependencies]
tracewriter = { path = "$abs_crate", features = ["static"] }
[workspace]
EOF
  cat >"$dep/src/main.rs" <<'EOF' || exit 99
fn main() {
    let path = std::env::args().nth(1).expect("a path");
    let w = tracewriter::compat::TraceWriter::enabled(path.into());
    assert!(w.is_enabled());
    w.push("dependent", "static", 1.0, 7);
    w.flush().expect("flush");
}
EOF
  out=$CARGO_TARGET_DIR/dependent.json
  rm -f "$out"
  if run "$CARGO" build --offline --manifest-path "$dep/Cargo.toml" &&
     bin=$CARGO_TARGET_DIR/debug/tw-dependent &&
     ! LC_ALL=C readelf -d "$bin" | grep -q 'libtracewriter' &&
     env -u LD_LIBRARY_PATH "$bin" "$out" &&
     grep -q '"name":"dependent","cat":"static"' "$out"; then
    echo "PASS: a static dependent runs without LD_LIBRARY_PATH"
  else
    echo "FAIL: the static dependent did not link, run or write its event"
    fail=1
  fi
  if [ -x "$top_builddir/tests/jsonlint" ] && [ -f "$out" ]; then
    "$top_builddir/tests/jsonlint" "$out" || fail=1
  fi
fi
exit $fail
