//! The integration tests, as modules of one test program: cargo builds
//! and links one program instead of one per file (a fifth of the CPU
//! time of `cargo test`).  The tests that need a process of their own
//! run this program again as a child (`common::test_path`).

#[path = "../common/mod.rs"]
mod common;

mod compat;
mod compat_serde;
mod errors;
mod kill;
mod layer;
mod layout;
mod origin;
mod phases;
mod threads;
