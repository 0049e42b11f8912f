//! A drop-in for the buffered `TraceWriter` tracewriter was born from.
//!
//! That writer (the trace module of a Rust inference engine, ferrum's
//! `ferrum_bench_core::trace`) kept every event in a `Mutex<Vec>` and
//! wrote the whole file at `flush`, enabled by an environment variable
//! naming the output file.  This module has the same surface, so an
//! engine changes one import:
//!
//! ```text
//! -use ferrum_bench_core::trace::{global_trace, flush_global_trace};
//! +use tracewriter::compat::{global_trace, flush_global_trace};
//! ```
//!
//! and gets a file that is valid after every commit, whatever happens to
//! the process, with memory bounded by the writer's buffers however many
//! events it records:
//!
//! ```
//! use tracewriter::compat::{Map, TraceWriter, Value};
//! # let path = std::env::temp_dir().join(format!("tw-doc-compat-{}.json", std::process::id()));
//!
//! let w = TraceWriter::enabled(path.clone());
//! w.push("rms_norm", "norm", 0.125, 1);          // 125 µs on "thread" 1
//! let mut args = Map::new();
//! args.insert("tokens".to_string(), Value::from(4));
//! args.insert("shape".to_string(), Value::from(vec![4, 4096]));
//! w.push_with_args("matmul", "gemm", 1.5, 1, args);
//! w.flush()?;                                     // a complete trace on disk
//! # drop(w);
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # The same
//!
//! * [`global_trace`] returns a `&'static TraceWriter` on which any thread
//!   calls [`push`](TraceWriter::push) unconditionally: it is a no-op when
//!   tracing is off.  [`flush_global_trace`] commits it.
//! * [`TraceWriter::from_env`], [`from_env_vars`](TraceWriter::from_env_vars),
//!   [`enabled`](TraceWriter::enabled), [`disabled`](TraceWriter::disabled),
//!   [`is_enabled`](TraceWriter::is_enabled),
//!   [`push`](TraceWriter::push)`(name, cat, dur_ms, tid)`,
//!   [`push_with_args`](TraceWriter::push_with_args)`(name, cat, dur_ms, tid, args)`,
//!   [`flush`](TraceWriter::flush)` -> io::Result<()>`, and a flush when
//!   the writer is dropped.
//! * Every event is a complete event (`"ph":"X"`) that ends when `push` is
//!   called: its `ts` is the time of the call minus `dur_ms`, and its `tid`
//!   the given `tid`.
//!
//! # What differs, and why
//!
//! * **The environment**: `TRACEWRITER_OUT` names the file, and the
//!   seed's `FERRUM_TRACE_OUT` is read when `TRACEWRITER_OUT` is unset,
//!   so a deployment that sets it keeps its trace; `TRACEWRITER_OPTIONS`
//!   takes the library's options string (`flush=1s,gzip`...).
//!   [`global_trace`] and [`TraceWriter::from_env`] are the library's
//!   process-wide writer ([`crate::global`]): `%p` in the path is the pid
//!   and `%t` the start time, a child after `fork` never writes into its
//!   parent's file, and the file is committed at exit, which the seed's
//!   never-dropped static could not do.  Every writer made from the
//!   environment is that one writer, so two of them never fight over one
//!   file.  (The file of `FERRUM_TRACE_OUT` is opened by this module as
//!   written, without `%p`, and committed at exit the same way.)
//!   [`from_env_vars`](TraceWriter::from_env_vars) reads the same two
//!   variables from the pairs it is given and opens a writer of its own
//!   on the path as written (no `%p`).
//! * **`flush` keeps every earlier event.**  The seed truncated the file
//!   at each flush and wrote only the events pushed since the last one,
//!   so a second flush lost the first one's events.  Here the file is
//!   opened once and each flush (a commit) adds to it; the library also
//!   commits by itself whenever a buffer fills, so the file grows while
//!   the program runs, not only at flush.
//! * **Time**: `ts` is on the library's clock (`CLOCK_MONOTONIC`, as
//!   [`crate::now_ns`]), not microseconds since the writer was created,
//!   so events from this module and from [`crate::Writer`] line up;
//!   viewers show times relative to the first event either way.
//! * **Precision**: `dur_ms` becomes whole nanoseconds (rounded), written
//!   as microseconds with three decimals (`0.0015` ms is `"dur":1.500`);
//!   the seed rounded to whole microseconds.  A negative or NaN `dur_ms`
//!   is 0.
//! * **pid**: the real process id (the seed wrote 0), and the file begins
//!   with a `process_name` metadata record, so traces of several
//!   processes merge.
//! * **Tracks have names.**  The seed's `tid`s are not threads but tracks
//!   (layers, streams); [`thread_name`](TraceWriter::thread_name)`(tid,
//!   name)` names one (a `thread_name` metadata record for that tid,
//!   which viewers show instead of the number, kept at the head of every
//!   rotated file).
//! * **The process name on a fixed tid.**  The library's first record
//!   names the process on the thread that opened the writer: for the
//!   process-wide writer ([`global_trace`], [`TraceWriter::from_env`]),
//!   opened at its first use, that is whichever worker pushed first, so
//!   a track of that thread's id would appear among the engine's
//!   numbered ones.  This module writes a `process_name` record of its
//!   own on the tid that is the process id (the main thread's id) at the
//!   process-wide writer's first use in each process; viewers take the
//!   last record, and every file a rotation begins starts with this one.
//!   A writer of its own ([`TraceWriter::enabled`], [`TraceWriter::open`])
//!   is opened by the calling thread, whose tid the first record has.
//! * **Arguments** are a [`Map`] of this module's [`Value`] (the shape of
//!   `serde_json::Map<String, serde_json::Value>`, without depending on
//!   serde), or, with the `serde` feature, the seed's own
//!   `serde_json::Map`; [`Value::Raw`] passes already-serialised JSON,
//!   checked by the library.  A `push` whose
//!   arguments the library refuses (invalid raw JSON) writes nothing and
//!   counts in [`stats`](TraceWriter::stats)`.rejected`.
//! * **Strings**: `name` and `cat` are `impl AsRef<str>` (the seed's
//!   `impl Into<String>` allocated at every push); `&str`, `String`,
//!   `&String` and `Cow<str>` are accepted as before.
//! * **Errors**: the file is created when the writer is made, not at
//!   the first flush.  If that fails the writer is disabled
//!   ([`is_enabled`](TraceWriter::is_enabled) is false) and every
//!   [`flush`](TraceWriter::flush) returns the error.
//! * **`TraceEvent`** (the `serde` feature) has the seed's fields,
//!   constructor and derives, and its `Deserialize` reads every record
//!   tracewriter writes.  A file holds two records before the first
//!   event: the `process_name` metadata record and the clock record
//!   (`"ph":"c"`), so parsing a whole file as `Vec<TraceEvent>` gives
//!   two more records than were pushed; [`read_events`] gives only the
//!   complete events.  `ts` and `dur` are read rounded to whole
//!   microseconds.

use std::collections::BTreeMap;
use std::env;
use std::ffi::CStr;
use std::fmt::{self, Write as _};
use std::io;
use std::os::raw::{c_char, c_int};
use std::path::PathBuf;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Once;

use crate::args::{Arg, Value as ArgValue};
use crate::error::Error;
use crate::options::Options;
use crate::writer::{global, global_status, now_ns, Stats, Writer};

/// The environment variable naming the output file.
pub const TRACE_OUT_ENV: &str = "TRACEWRITER_OUT";
/// The environment variable holding the options string.
pub const TRACE_OPTIONS_ENV: &str = "TRACEWRITER_OPTIONS";
/// The seed's variable naming the output file, read when
/// [`TRACE_OUT_ENV`] is unset.
pub const FERRUM_TRACE_OUT_ENV: &str = "FERRUM_TRACE_OUT";

#[cfg(feature = "serde")]
mod event;
#[cfg(feature = "serde")]
pub use event::{read_events, TraceEvent};

/// The map type of [`TraceWriter::push_with_args`]: keys in sorted order,
/// as `serde_json::Map` without its `preserve_order` feature.
pub type Map<K, V> = BTreeMap<K, V>;

/// A JSON number: a signed or unsigned integer, or a finite double.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Number(N);

#[derive(Clone, Copy, Debug, PartialEq)]
enum N {
    Int(i64),
    UInt(u64),
    Float(f64),
}

impl Number {
    /// A number from a finite double; `None` for NaN and infinities,
    /// which JSON cannot hold (as `serde_json::Number::from_f64`).
    pub fn from_f64(f: f64) -> Option<Number> {
        if f.is_finite() {
            Some(Number(N::Float(f)))
        } else {
            None
        }
    }
    /// The value as `i64`, if it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self.0 {
            N::Int(i) => Some(i),
            N::UInt(u) => i64::try_from(u).ok(),
            N::Float(_) => None,
        }
    }
    /// The value as `u64`, if it is an integer that fits.
    pub fn as_u64(&self) -> Option<u64> {
        match self.0 {
            N::Int(i) => u64::try_from(i).ok(),
            N::UInt(u) => Some(u),
            N::Float(_) => None,
        }
    }
    /// The value as `f64` (integers converted, possibly rounded).
    pub fn as_f64(&self) -> f64 {
        match self.0 {
            N::Int(i) => i as f64,
            N::UInt(u) => u as f64,
            N::Float(f) => f,
        }
    }
}

macro_rules! number_from {
    ($variant:ident as $to:ty: $($t:ty),*) => {
        $(impl From<$t> for Number {
            fn from(v: $t) -> Number {
                Number(N::$variant(v as $to))
            }
        }
        impl From<$t> for Value {
            fn from(v: $t) -> Value {
                Value::Number(Number::from(v))
            }
        })*
    };
}
number_from!(Int as i64: i8, i16, i32, i64, isize);
number_from!(UInt as u64: u8, u16, u32, u64, usize);

impl fmt::Display for Number {
    /// JSON text; a double keeps enough digits to read back the same.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            N::Int(i) => write!(f, "{}", i),
            N::UInt(u) => write!(f, "{}", u),
            // Rust's shortest round-trip form, with an exponent for very
            // large and small magnitudes so "1e300" stays short; both
            // forms are valid JSON numbers.
            N::Float(x) if x != 0.0 && (x.abs() >= 1e16 || x.abs() < 1e-5) => write!(f, "{:e}", x),
            N::Float(x) => write!(f, "{:?}", x),
        }
    }
}

/// A JSON value, shaped like `serde_json::Value`, plus [`Value::Raw`].
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object.
    Object(Map<String, Value>),
    /// Already serialised JSON, written as it is once the library has
    /// checked it.
    Raw(String),
}

impl Value {
    /// Already serialised JSON ([`Value::Raw`]).
    pub fn raw(json: impl Into<String>) -> Value {
        Value::Raw(json.into())
    }

    /// The JSON text of an array or object argument.  Strings are escaped
    /// here; the library checks the whole text again.
    fn write_json(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => {
                let _ = write!(out, "{}", n);
            }
            Value::String(s) => write_json_string(s, out),
            Value::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_json(out);
                }
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                for (i, (k, v)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_json_string(k, out);
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
            Value::Raw(s) => out.push_str(s),
        }
    }
}

fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

impl From<f64> for Value {
    /// A number, or `null` for NaN and infinities (as serde_json).
    fn from(f: f64) -> Value {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}
impl From<f32> for Value {
    fn from(f: f32) -> Value {
        Value::from(f as f64)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}
impl From<()> for Value {
    fn from(_: ()) -> Value {
        Value::Null
    }
}
impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}
impl From<Map<String, Value>> for Value {
    fn from(m: Map<String, Value>) -> Value {
        Value::Object(m)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The argument maps [`TraceWriter::push_with_args`] takes: a [`Map`] of
/// this module's [`Value`], and with the `serde` feature a
/// `serde_json::Map<String, serde_json::Value>` (the seed's type).
/// Sealed: implemented here only.
pub trait PushArgs: sealed::Sealed {
    /// Call `f` with the map as typed arguments, in key order.
    #[doc(hidden)]
    fn with_args(&self, f: &mut dyn FnMut(&[Arg<'_>]));
}

impl sealed::Sealed for Map<String, Value> {}

/// Call `f` with a map's entries (`entries()` walks them) as typed
/// arguments: `text` gives the JSON text of the values that need one
/// (arrays, objects), kept alive here while `value` makes the argument of
/// each entry from it.
pub(crate) fn with_map_args<'m, V: 'm, I>(
    entries: impl Fn() -> I,
    text: impl Fn(&V) -> Option<String>,
    value: impl for<'b> Fn(&'b V, Option<&'b str>) -> ArgValue<'b>,
    f: &mut dyn FnMut(&[Arg<'_>]),
) where
    I: Iterator<Item = (&'m String, &'m V)>,
{
    let texts: Vec<Option<String>> = entries().map(|(_, v)| text(v)).collect();
    let typed: Vec<Arg<'_>> = entries()
        .zip(&texts)
        .map(|((k, v), t)| Arg {
            name: k,
            value: value(v, t.as_deref()),
        })
        .collect();
    f(&typed);
}

impl PushArgs for Map<String, Value> {
    fn with_args(&self, f: &mut dyn FnMut(&[Arg<'_>])) {
        with_map_args(
            || self.iter(),
            |v| match v {
                Value::Array(_) | Value::Object(_) => {
                    let mut s = String::new();
                    v.write_json(&mut s);
                    Some(s)
                }
                _ => None,
            },
            |v, text| match (v, text) {
                (_, Some(t)) => ArgValue::Json(t),
                (Value::Null, _) => ArgValue::Null,
                (Value::Bool(b), _) => ArgValue::Bool(*b),
                (Value::Number(n), _) => match n.0 {
                    N::Int(i) => ArgValue::Int(i),
                    N::UInt(u) => ArgValue::UInt(u),
                    N::Float(f) => ArgValue::Float(f),
                },
                (Value::String(s), _) => ArgValue::Str(s),
                (Value::Raw(s), _) => ArgValue::Json(s),
                (Value::Array(_), None) | (Value::Object(_), None) => ArgValue::Null,
            },
            f,
        );
    }
}

/// Where a TraceWriter's events go.
enum Inner {
    /// Tracing off: every call returns at once.
    Disabled,
    /// A writer of its own, closed when the TraceWriter is dropped.
    Owned(Writer),
    /// The process-wide writer, looked up at each call (fork-safe).
    Global,
    /// The open failed: events are dropped, flush returns the error.
    Failed(Error),
}

/// The buffered writer's surface over a tracewriter [`Writer`].  See the
/// [module documentation](self) for what is the same and what differs.
pub struct TraceWriter {
    inner: Inner,
}

static GLOBAL_TRACE: TraceWriter = TraceWriter {
    inner: Inner::Global,
};

/// The process-wide writer, from `TRACEWRITER_OUT` and
/// `TRACEWRITER_OPTIONS` at the first call, or from the seed's
/// `FERRUM_TRACE_OUT` when `TRACEWRITER_OUT` is unset: a disabled writer
/// when neither names a file, so callers can always
/// `global_trace().push(...)`.  Committed at exit; cheap to call from hot
/// paths (a few loads once open).
pub fn global_trace() -> &'static TraceWriter {
    &GLOBAL_TRACE
}

/// The writer of `FERRUM_TRACE_OUT`, made at the first call when
/// `TRACEWRITER_OUT` is unset: `None` when there is none to make,
/// `Some(Err)` when the open failed.
fn ferrum_global() -> Option<&'static Result<Writer, Error>> {
    static INIT: Once = Once::new();
    static SLOT: AtomicPtr<Result<Writer, Error>> = AtomicPtr::new(ptr::null_mut());
    INIT.call_once(|| {
        if env::var_os(TRACE_OUT_ENV).is_some() {
            return; // the library's own global writer, or off
        }
        let path = match env::var_os(FERRUM_TRACE_OUT_ENV) {
            Some(p) if !p.is_empty() => p,
            _ => return,
        };
        let opts = env::var(TRACE_OPTIONS_ENV).unwrap_or_default();
        let made = Options::parse(&opts).and_then(|o| Writer::open(PathBuf::from(path), &o));
        let ok = made.is_ok();
        SLOT.store(Box::into_raw(Box::new(made)), Ordering::Release);
        if ok {
            extern "C" {
                fn atexit(f: extern "C" fn()) -> c_int;
            }
            // Committed at exit, as the library's global writer; a
            // failed registration leaves flush_global_trace to do it.
            // SAFETY: registers a plain function.
            unsafe { atexit(commit_ferrum_at_exit) };
        }
    });
    // SAFETY: a non-NULL SLOT points to a leaked, never freed value.
    unsafe { SLOT.load(Ordering::Acquire).as_ref() }
}

extern "C" fn commit_ferrum_at_exit() {
    if let Some(Ok(w)) = ferrum_global() {
        let _ = w.flush();
    }
}

/// Commit the process-wide writer now (before a signal handler or panic
/// hook exits, say); errors are ignored, as the seed's did.
pub fn flush_global_trace() {
    let _ = GLOBAL_TRACE.flush();
}

/// `dur_ms` (milliseconds, any f64) as whole nanoseconds: negative and
/// NaN give 0, overflow saturates.
fn ms_to_ns(dur_ms: f64) -> u64 {
    if dur_ms > 0.0 {
        (dur_ms * 1e6).round() as u64
    } else {
        0
    }
}

impl TraceWriter {
    /// The process-wide writer ([`global_trace`]'s), or a disabled writer
    /// when neither `TRACEWRITER_OUT` nor (when that is unset)
    /// `FERRUM_TRACE_OUT` names a file.  Dropping it commits
    /// (never closes) the shared writer.
    pub fn from_env() -> TraceWriter {
        TraceWriter {
            inner: Inner::Global,
        }
    }

    /// A writer configured from `(name, value)` pairs, such as a snapshot
    /// of `std::env::vars()`: `TRACEWRITER_OUT` (or, when it is absent,
    /// the seed's `FERRUM_TRACE_OUT`) names the file (taken as written:
    /// no `%p`), `TRACEWRITER_OPTIONS` the options; disabled when the
    /// path is missing or empty.  Each call opens a file of its own:
    /// do not give two writers one path.
    pub fn from_env_vars<I, K, V>(vars: I) -> TraceWriter
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let mut out = None;
        let mut ferrum_out = None;
        let mut opts = None;
        for (k, v) in vars {
            let k = k.into();
            if k == TRACE_OUT_ENV {
                out = Some(v.into());
            } else if k == FERRUM_TRACE_OUT_ENV {
                ferrum_out = Some(v.into());
            } else if k == TRACE_OPTIONS_ENV {
                opts = Some(v.into());
            }
        }
        match out.or(ferrum_out) {
            Some(path) if !path.is_empty() => {
                let opts = opts.unwrap_or_default();
                match Options::parse(&opts) {
                    Ok(o) => TraceWriter::open(path, &o).unwrap_or_else(TraceWriter::failed),
                    Err(e) => TraceWriter::failed(e),
                }
            }
            _ => TraceWriter::disabled(),
        }
    }

    /// A writer on `out_path` with the default options.  The file is
    /// created now; if that fails the writer is disabled and
    /// [`flush`](TraceWriter::flush) returns the error.
    pub fn enabled(out_path: PathBuf) -> TraceWriter {
        TraceWriter::open(out_path, &Options::new()).unwrap_or_else(TraceWriter::failed)
    }

    /// A writer on `out_path` with `opts`, or the error of the open.
    pub fn open(out_path: impl Into<PathBuf>, opts: &Options) -> Result<TraceWriter, Error> {
        Writer::open(out_path.into(), opts).map(|w| TraceWriter {
            inner: Inner::Owned(w),
        })
    }

    /// A writer whose every call is a no-op.
    pub fn disabled() -> TraceWriter {
        TraceWriter {
            inner: Inner::Disabled,
        }
    }

    fn failed(e: Error) -> TraceWriter {
        TraceWriter {
            inner: Inner::Failed(e),
        }
    }

    /// The writer events go to, if any.  Use it for what this surface
    /// lacks: spans, instants, counters, async events, flows, thread
    /// names...
    pub fn writer(&self) -> Option<&Writer> {
        match &self.inner {
            Inner::Owned(w) => Some(w),
            Inner::Global => {
                let w = global().or_else(|| match ferrum_global() {
                    Some(Ok(w)) => Some(w),
                    _ => None,
                })?;
                name_global(w);
                Some(w)
            }
            Inner::Disabled | Inner::Failed(_) => None,
        }
    }

    /// Name track `tid` (a layer, a stream: the `tid` given to
    /// [`push`](TraceWriter::push)) in the viewer: a `thread_name`
    /// metadata record for that tid, which Perfetto, chrome://tracing
    /// and DevTools show instead of the number, and which every file a
    /// rotation begins holds again.  A later call for the same tid
    /// renames it.  A no-op when disabled; a name the library refuses (a
    /// NUL inside) counts in [`stats`](TraceWriter::stats)`.rejected`.
    pub fn thread_name(&self, tid: u32, name: impl AsRef<str>) {
        if let Some(w) = self.writer() {
            let _ = w.emit(
                &crate::Event::new('M', "thread_name")
                    .tid(i64::from(tid))
                    .args(&[Arg {
                        name: "name",
                        value: ArgValue::Str(name.as_ref()),
                    }]),
            );
        }
    }

    /// True if events are written: probes can skip their timers when it
    /// is false.
    pub fn is_enabled(&self) -> bool {
        self.writer().is_some()
    }

    /// Record a complete event `name` in category `cat` that took `dur_ms`
    /// milliseconds and ends now, on track `tid` (the seed used it for
    /// the layer or sub-operation; 0 for the top level).
    pub fn push(&self, name: impl AsRef<str>, cat: impl AsRef<str>, dur_ms: f64, tid: u32) {
        if let Some(w) = self.writer() {
            let _ = complete_ending_now(w, name.as_ref(), cat.as_ref(), dur_ms, tid, &[]);
        }
    }

    /// As [`push`](TraceWriter::push), with arguments (tensor shapes...):
    /// a [`Map`] of this module's [`Value`], or, with the `serde`
    /// feature, the seed's `serde_json::Map<String, serde_json::Value>`.
    /// Numbers, booleans, strings and null are passed to the library as
    /// typed arguments; arrays and objects are serialised here; raw JSON
    /// is checked by the library.
    pub fn push_with_args<A: PushArgs>(
        &self,
        name: impl AsRef<str>,
        cat: impl AsRef<str>,
        dur_ms: f64,
        tid: u32,
        args: A,
    ) {
        let w = match self.writer() {
            Some(w) => w,
            None => return,
        };
        args.with_args(&mut |typed| {
            let _ = complete_ending_now(w, name.as_ref(), cat.as_ref(), dur_ms, tid, typed);
        });
    }

    /// Commit: the file then holds every event pushed so far, and every
    /// event of earlier flushes.  A no-op when disabled; the open's error
    /// when the file could not be created.
    pub fn flush(&self) -> io::Result<()> {
        match &self.inner {
            Inner::Owned(w) => w.flush().map_err(io::Error::from),
            Inner::Global => match (global(), ferrum_global()) {
                (Some(w), _) | (None, Some(Ok(w))) => w.flush().map_err(io::Error::from),
                (None, Some(Err(e))) => Err(io::Error::from(e.clone())),
                (None, None) => global_status().map_err(io::Error::from),
            },
            Inner::Disabled => Ok(()),
            Inner::Failed(e) => Err(io::Error::from(e.clone())),
        }
    }

    /// The writer's counters (all zero when disabled).
    pub fn stats(&self) -> Stats {
        self.writer().map(Writer::stats).unwrap_or_default()
    }
}

/// The program's short name, which the library's first record gives the
/// process by default.
fn program_name() -> String {
    extern "C" {
        static program_invocation_short_name: *const c_char;
    }
    // SAFETY: glibc sets it before main to a NUL-terminated string that
    // lives as long as the process, or leaves it NULL.
    let p = unsafe { program_invocation_short_name };
    if p.is_null() {
        return "tracewriter".to_string();
    }
    // SAFETY: as above.
    let name = unsafe { CStr::from_ptr(p) }.to_string_lossy();
    if name.is_empty() {
        "tracewriter".to_string()
    } else {
        name.into_owned()
    }
}

/// Write this module's `process_name` record on `w`, on the tid that is
/// the process id, with the program's short name (the name the library's
/// first record takes when TRACEWRITER_OPTIONS gives none).
fn name_process(w: &Writer) {
    let name = program_name();
    let _ = w.emit(
        &crate::Event::new('M', "process_name")
            .tid(i64::from(std::process::id()))
            .args(&[Arg {
                name: "name",
                value: ArgValue::Str(&name),
            }]),
    );
}

/// Name the process on the process-wide writer `w` once: at its first
/// use in this process (a child after fork has a writer, and so a
/// `Writer`, of its own).
fn name_global(w: &'static Writer) {
    static NAMED: AtomicUsize = AtomicUsize::new(0);
    let key = w as *const Writer as usize;
    let seen = NAMED.load(Ordering::Acquire);
    if seen != key
        && NAMED
            .compare_exchange(seen, key, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    {
        name_process(w);
    }
}

/// An 'X' that ends now and lasted dur_ms, on track tid.
fn complete_ending_now(
    w: &Writer,
    name: &str,
    cat: &str,
    dur_ms: f64,
    tid: u32,
    args: &[Arg<'_>],
) -> Result<(), Error> {
    let dur = ms_to_ns(dur_ms);
    let ts = now_ns().saturating_sub(dur);
    w.emit(
        &crate::Event::new('X', name)
            .cat(cat)
            .ts(ts)
            .dur(dur)
            .tid(i64::from(tid))
            .args(args),
    )
}

impl Drop for TraceWriter {
    /// Commit, as the seed's flush-on-drop; an owned writer is closed.
    fn drop(&mut self) {
        if let Inner::Global = self.inner {
            let _ = self.flush();
        }
    }
}

impl fmt::Debug for TraceWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.inner {
            Inner::Disabled => "disabled".to_string(),
            Inner::Owned(_) => "enabled".to_string(),
            Inner::Global => "global".to_string(),
            Inner::Failed(e) => format!("failed: {}", e),
        };
        f.debug_struct("TraceWriter")
            .field("state", &state)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ms_to_ns_rounds_and_clamps() {
        assert_eq!(ms_to_ns(0.123), 123_000);
        assert_eq!(ms_to_ns(0.0015), 1_500);
        assert_eq!(ms_to_ns(1e-7), 0);
        assert_eq!(ms_to_ns(-1.0), 0);
        assert_eq!(ms_to_ns(f64::NAN), 0);
        assert_eq!(ms_to_ns(f64::INFINITY), u64::MAX);
    }

    #[test]
    fn json_text_of_nested_values() {
        let mut m = Map::new();
        m.insert(
            "b".to_string(),
            Value::from(vec![Value::from(1), Value::from(-2.5), Value::Null]),
        );
        m.insert("a\"\n".to_string(), Value::from("x\u{1}y\\"));
        let mut s = String::new();
        Value::Object(m).write_json(&mut s);
        assert_eq!(s, r#"{"a\"\n":"x\u0001y\\","b":[1,-2.5,null]}"#);
    }

    #[test]
    fn number_text_reads_back_exactly() {
        for x in [
            0.1,
            -0.0,
            1.0,
            1e300,
            5e-324,
            123456789.125,
            1e16,
            1e-5,
            2.5e-6,
        ] {
            let text = Number::from_f64(x).unwrap().to_string();
            assert_eq!(
                text.parse::<f64>().unwrap().to_bits(),
                x.to_bits(),
                "{}",
                text
            );
            assert!(!text.contains("inf") && !text.contains("NaN"));
        }
    }
}
