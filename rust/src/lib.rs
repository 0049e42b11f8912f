//! Chrome Trace Event Format JSON (what Perfetto, `chrome://tracing` and
//! Chrome DevTools open), written incrementally to a file that is a
//! complete, strictly valid JSON document after every commit: a binding
//! to the C library libtracewriter.
//!
//! A process killed at any moment, even by `SIGKILL`, leaves the trace of
//! its last commit, and memory stays bounded by the writer's buffers
//! however long the process runs.  The file format, the sinks (plain
//! file, mmap, gzip), rotation and the crash hook are the C library's:
//! `man 7 tracewriter`.
//!
//! ```
//! use tracewriter::{Arg, Options, Scope, Writer};
//! # let dir = std::env::temp_dir().join(format!("tw-doc-lib-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("trace.json");
//!
//! let w = Writer::open(&path, &Options::parse("flush=1s")?)?;
//! w.thread_name("main")?;
//! {
//!     let _span = w.span("app", "startup");      // one "X" event when it drops
//!     w.complete("app", "step", tracewriter::now_ns(), 1500,
//!                &[Arg::new("tokens", 42), Arg::new("layer", "attn")])?;
//!     w.instant("app", "ready", Scope::Global, &[])?;
//! }
//! w.counter("app", "queue", &[Arg::new("depth", 3)])?;
//! w.close()?;
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), tracewriter::Error>(())
//! ```
//!
//! * [`Writer`]: open, events of every phase, [`Span`] guards, flush,
//!   close; [`Event`] for full control of one event ([`Writer::emit`]).
//! * [`Options`]: built in Rust or parsed from an options string.
//! * [`Arg`] and [`Value`]: typed arguments.
//! * [`Error`]: the library's code and message.
//! * [`global`]: the process-wide writer of `TRACEWRITER_OUT`.
//! * [`compat`]: a drop-in for the buffered `TraceWriter` of the Rust
//!   inference engine tracewriter was born from.
//! * [`ffi`]: the C declarations, for what the safe interface lacks.
//! * `layer` (the `tracing` feature): a `tracing-subscriber` layer.
//!
//! The crate links `libtracewriter` found through `TRACEWRITER_LIB_DIR`,
//! `pkg-config`, or the default library path (see `README.md`); the
//! `static` feature links `libtracewriter.a`.  Optional features, each
//! built offline from Debian's packaged crates: `serde`, `tracing`,
//! `static`.

#![warn(missing_docs)]

mod args;
pub mod compat;
mod error;
pub mod ffi;
#[cfg(feature = "tracing")]
pub mod layer;
mod options;
mod writer;

pub use args::{Arg, Value};
pub use error::{code, Error};
pub use options::{Commit, Crash, Format, OnFull, Options, Sink};
pub use writer::{global, global_status, now_ns, version, Event, Scope, Span, Stats, Writer};
