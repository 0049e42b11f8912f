//! The seed's `TraceEvent` and the `serde_json::Map` arguments of
//! `push_with_args` (the `serde` feature).

use std::fmt;
use std::fs;
use std::io;
use std::path::Path;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use super::{sealed, with_map_args, PushArgs};
use crate::args::{Arg, Value as ArgValue};

/// One record of a trace, as the seed's `TraceEvent`: the same fields,
/// constructor and serde derives, so code that built or parsed the
/// seed's events compiles unchanged.
///
/// Its `Deserialize` reads every record tracewriter writes, not only the
/// complete events the seed wrote:
///
/// * `ts` and `dur` are written in microseconds with three decimals
///   (`"ts":1234.567`); they are read rounded to the nearest whole
///   microsecond, as the seed's `u64` fields hold them (a plain integer
///   is read as it is);
/// * a field a record lacks reads as its default: a metadata record
///   (`"ph":"M"`) has no `ts`, `dur` or `cat`, so they are 0 and `""`;
/// * the fields the seed's struct has no place for (`id`, `s`, `bp`...)
///   are skipped.
///
/// A tracewriter file begins with two such records before any event: a
/// `process_name` metadata record (`"ph":"M"`) and the clock record
/// (`"ph":"c"`, `"name":"clock_sync"`, the monotonic and realtime clocks
/// read at one instant in its `args`).  [`read_events`] leaves them out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEvent {
    /// The event's name.
    #[serde(default)]
    pub name: String,
    /// The category (`""` when the record has none).
    #[serde(default)]
    pub cat: String,
    /// The phase: `'X'` for a complete event.
    pub ph: char,
    /// The start, in microseconds.
    #[serde(default, deserialize_with = "micros")]
    pub ts: u64,
    /// The duration, in microseconds.
    #[serde(default, deserialize_with = "micros")]
    pub dur: u64,
    /// The process id.
    #[serde(default)]
    pub pid: u32,
    /// The thread id (the `tid` given to `push`).
    #[serde(default)]
    pub tid: u32,
    /// The arguments; left out when empty.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub args: serde_json::Map<String, serde_json::Value>,
}

impl TraceEvent {
    /// A complete event (`'X'`) that began at `start_ts_us` microseconds
    /// and lasted `dur_ms` milliseconds (rounded to whole microseconds),
    /// with pid 0 and no arguments, as the seed's constructor.
    pub fn complete(
        name: impl Into<String>,
        cat: impl Into<String>,
        start_ts_us: u64,
        dur_ms: f64,
        tid: u32,
    ) -> TraceEvent {
        TraceEvent {
            name: name.into(),
            cat: cat.into(),
            ph: 'X',
            ts: start_ts_us,
            // `as` saturates: NaN and negative durations are 0.
            dur: (dur_ms * 1000.0).round() as u64,
            pid: 0,
            tid,
            args: serde_json::Map::new(),
        }
    }
}

/// A time in microseconds: an unsigned integer as it is, a number with
/// a fraction rounded to the nearest microsecond.
fn micros<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    struct Micros;
    impl<'de> Visitor<'de> for Micros {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a non-negative number of microseconds")
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::custom(format!("negative time {}", v)))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
            if v.is_finite() && v >= 0.0 && v < 18446744073709551616.0 {
                Ok(v.round() as u64)
            } else {
                Err(E::custom(format!("time {} out of range", v)))
            }
        }
    }
    d.deserialize_any(Micros)
}

/// The complete events (`"ph":"X"`) of the trace at `path`, in file
/// order: the metadata records, the clock record and events of other
/// phases are left out.  The file must be strictly valid JSON, in array
/// or object (`{"traceEvents":[...]}`) form, uncompressed: a file cut by
/// a crash inside a commit is an `InvalidData` error (`tracewriter
/// repair FILE` makes it valid), and so is a gzip file (read it through
/// `zcat` first).
pub fn read_events(path: impl AsRef<Path>) -> io::Result<Vec<TraceEvent>> {
    let bytes = fs::read(path.as_ref())?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: a gzip file: decompress it first (zcat)",
                path.as_ref().display()
            ),
        ));
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Doc {
        Array(Vec<TraceEvent>),
        Object {
            #[serde(rename = "traceEvents")]
            trace_events: Vec<TraceEvent>,
        },
    }
    let doc: Doc = serde_json::from_slice(&bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {}", path.as_ref().display(), e),
        )
    })?;
    let all = match doc {
        Doc::Array(v) => v,
        Doc::Object { trace_events } => trace_events,
    };
    Ok(all.into_iter().filter(|e| e.ph == 'X').collect())
}

impl sealed::Sealed for serde_json::Map<String, serde_json::Value> {}

impl PushArgs for serde_json::Map<String, serde_json::Value> {
    fn with_args(&self, f: &mut dyn FnMut(&[Arg<'_>])) {
        use serde_json::Value as J;
        with_map_args(
            || self.iter(),
            |v| match v {
                J::Array(_) | J::Object(_) => serde_json::to_string(v).ok(),
                _ => None,
            },
            |v, text| match (v, text) {
                (_, Some(t)) => ArgValue::Json(t),
                (J::Bool(b), _) => ArgValue::Bool(*b),
                (J::Number(n), _) => {
                    if let Some(i) = n.as_i64() {
                        ArgValue::Int(i)
                    } else if let Some(u) = n.as_u64() {
                        ArgValue::UInt(u)
                    } else {
                        ArgValue::Float(n.as_f64().unwrap_or(f64::NAN))
                    }
                }
                (J::String(s), _) => ArgValue::Str(s),
                _ => ArgValue::Null,
            },
            f,
        );
    }
}
