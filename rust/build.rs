//! Link libtracewriter.
//!
//! Where the library is found, first match wins:
//!
//! 1. `TRACEWRITER_LIB_DIR`: a directory holding `libtracewriter.so` (the
//!    project's own tests point it at `$top_builddir/.libs`);
//! 2. the output of `pkg-config --libs tracewriter` (`$PKG_CONFIG` names
//!    another pkg-config; `PKG_CONFIG_PATH` is honoured as usual);
//! 3. the linker's default search path (`-ltracewriter` alone).
//!
//! In the first two cases the directory is also written as an rpath into
//! this crate's own tests and examples, so that `cargo test` runs without
//! `LD_LIBRARY_PATH`.  Programs of other crates that depend on this one
//! get the search path but not the rpath (cargo passes link arguments only
//! to the package that prints them): install the library where the
//! dynamic loader looks (`ldconfig`), or set `LD_LIBRARY_PATH`, or add
//! `-C link-arg=-Wl,-rpath,DIR` to their `RUSTFLAGS`.
//!
//! Nothing but the standard library: pkg-config is run as a command.

use std::env;
use std::process::Command;

fn link_dir(dir: &str) {
    println!("cargo:rustc-link-search=native={}", dir);
    // -Xlinker, not -Wl,-rpath,DIR: -Wl splits at commas, which a
    // directory name may hold (a build directory such as
    // _build-address,undefined).
    for arg in ["-Xlinker", "-rpath", "-Xlinker", dir] {
        println!("cargo:rustc-link-arg={}", arg);
    }
}

/// Apply the output of `pkg-config --libs tracewriter`; false if
/// pkg-config is missing or does not know the library.
fn from_pkg_config() -> bool {
    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let out = match Command::new(&pkg_config)
        .args(["--libs", "tracewriter"])
        .output()
    {
        Ok(out) if out.status.success() => out,
        _ => return false,
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut linked = false;
    for word in text.split_whitespace() {
        if let Some(dir) = word.strip_prefix("-L") {
            link_dir(dir);
        } else if let Some(lib) = word.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={}", lib);
            linked |= lib == "tracewriter";
        }
    }
    if !linked {
        println!("cargo:rustc-link-lib=tracewriter");
    }
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
    match env::var("TRACEWRITER_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => {
            link_dir(&dir);
            println!("cargo:rustc-link-lib=tracewriter");
        }
        _ => {
            if !from_pkg_config() {
                println!("cargo:rustc-link-lib=tracewriter");
            }
        }
    }
}
