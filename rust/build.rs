//! Link libtracewriter.
//!
//! Where the library is found, first match wins:
//!
//! 1. `TRACEWRITER_LIB_DIR`: a directory holding `libtracewriter.so` (or,
//!    with the `static` feature, `libtracewriter.a`): the project's own
//!    tests point it at `$top_builddir/.libs`;
//! 2. the output of `pkg-config --libs tracewriter` (`--static` with the
//!    `static` feature; `$PKG_CONFIG` names another pkg-config;
//!    `PKG_CONFIG_PATH` is honoured as usual);
//! 3. the linker's default search path (`-ltracewriter` alone), with a
//!    `cargo:warning` naming `TRACEWRITER_LIB_DIR`: if the link then
//!    fails, the warning above the linker's error says what to set.
//!
//! Shared (the default): in the first two cases the directory is also
//! written as an rpath into this crate's own tests and examples, so that
//! `cargo test` runs without `LD_LIBRARY_PATH`.  Programs of other crates
//! that depend on this one get the search path but not the rpath (cargo
//! passes link arguments only to the package that prints them): install
//! the library where the dynamic loader looks (`ldconfig`), set
//! `LD_LIBRARY_PATH`, add `-C link-arg=-Wl,-rpath,DIR` to their
//! `RUSTFLAGS`, or use the `static` feature.
//!
//! Static (the `static` feature): `libtracewriter.a` is bundled into this
//! crate's rlib, with zlib (`-lz`) and the C library's other needs linked
//! as the system's shared libraries, so every program that depends on the
//! crate starts with no `LD_LIBRARY_PATH` and no rpath.
//!
//! Nothing but the standard library: pkg-config is run as a command.

use std::env;
use std::path::Path;
use std::process::Command;

/// The libraries libtracewriter.a itself needs (Libs.private and
/// Requires.private of tracewriter.pc).
const STATIC_NEEDS: [&str; 3] = ["z", "pthread", "m"];

fn link_dir(dir: &str, rpath: bool) {
    println!("cargo:rustc-link-search=native={}", dir);
    if !rpath {
        return;
    }
    // -Xlinker, not -Wl,-rpath,DIR: -Wl splits at commas, which a
    // directory name may hold (a build directory such as
    // _build-address,undefined).
    for arg in ["-Xlinker", "-rpath", "-Xlinker", dir] {
        println!("cargo:rustc-link-arg={}", arg);
    }
}

/// Link libtracewriter itself, and in a static build what it needs.
fn link_tracewriter(statik: bool) {
    if statik {
        println!("cargo:rustc-link-lib=static=tracewriter");
        for lib in STATIC_NEEDS {
            println!("cargo:rustc-link-lib={}", lib);
        }
    } else {
        println!("cargo:rustc-link-lib=tracewriter");
    }
}

/// Apply the output of `pkg-config --libs tracewriter`; false if
/// pkg-config is missing or does not know the library.
fn from_pkg_config(statik: bool) -> bool {
    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let mut cmd = Command::new(&pkg_config);
    cmd.arg("--libs");
    if statik {
        cmd.arg("--static");
    }
    let out = match cmd.arg("tracewriter").output() {
        Ok(out) if out.status.success() => out,
        _ => return false,
    };
    let text = String::from_utf8_lossy(&out.stdout);
    for word in text.split_whitespace() {
        if let Some(dir) = word.strip_prefix("-L") {
            link_dir(dir, !statik);
        } else if let Some(lib) = word.strip_prefix("-l") {
            if lib != "tracewriter" && !(statik && STATIC_NEEDS.contains(&lib)) {
                println!("cargo:rustc-link-lib={}", lib);
            }
        }
    }
    link_tracewriter(statik);
    true
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in [
        "TRACEWRITER_LIB_DIR",
        "PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
    ] {
        println!("cargo:rerun-if-env-changed={}", var);
    }
    let statik = env::var_os("CARGO_FEATURE_STATIC").is_some();
    let file = if statik {
        "libtracewriter.a"
    } else {
        "libtracewriter.so"
    };
    match env::var("TRACEWRITER_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => {
            if !Path::new(&dir).join(file).exists() {
                println!(
                    "cargo:warning=TRACEWRITER_LIB_DIR={} holds no {}: the link will fail \
                     (after ./configure && make it is the build tree's .libs directory)",
                    dir, file
                );
            }
            // A rebuilt library is linked again (a static one is bundled
            // into this crate's rlib, which cargo would otherwise keep).
            println!(
                "cargo:rerun-if-changed={}",
                Path::new(&dir).join(file).display()
            );
            link_dir(&dir, !statik);
            link_tracewriter(statik);
        }
        _ => {
            if !from_pkg_config(statik) {
                println!(
                    "cargo:warning=libtracewriter: TRACEWRITER_LIB_DIR is unset and pkg-config \
                     does not know tracewriter: linking a bare -ltracewriter from the default \
                     path.  After ./configure && make, set TRACEWRITER_LIB_DIR to the build \
                     tree's .libs directory (or make install, or set PKG_CONFIG_PATH)."
                );
                link_tracewriter(statik);
            }
        }
    }
}
