//! The seed's `TraceEvent` and the `serde_json::Map` arguments of
//! `push_with_args` (the `serde` feature).

use std::fmt;
use std::fs;
use std::io;
use std::path::Path;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use super::{sealed, with_map_args, PushArgs};
use crate::args::{Arg, Value as ArgValue};

/// One record of a trace, as the seed's `TraceEvent`: the same fields,
/// constructor and serde traits (`Serialize`, `Deserialize`), so code
/// that built or parsed the seed's events compiles unchanged.  They are
/// written by hand, not derived: the derive macro's crates were most of
/// the binding's build time.
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
#[derive(Debug, Clone, PartialEq)]
pub struct TraceEvent {
    /// The event's name (`""` when the record has none).
    pub name: String,
    /// The category (`""` when the record has none).
    pub cat: String,
    /// The phase: `'X'` for a complete event.  The one field a record
    /// must have.
    pub ph: char,
    /// The start, in microseconds.
    pub ts: u64,
    /// The duration, in microseconds.
    pub dur: u64,
    /// The process id.
    pub pid: u32,
    /// The thread id (the `tid` given to `push`).
    pub tid: u32,
    /// The arguments; left out when empty.
    pub args: serde_json::Map<String, serde_json::Value>,
}

/// The fields in the order they are written, as the derive wrote them.
const FIELDS: &[&str] = &["name", "cat", "ph", "ts", "dur", "pid", "tid", "args"];

impl Serialize for TraceEvent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let with_args = !self.args.is_empty();
        let mut st = s.serialize_struct("TraceEvent", 7 + usize::from(with_args))?;
        st.serialize_field("name", &self.name)?;
        st.serialize_field("cat", &self.cat)?;
        st.serialize_field("ph", &self.ph)?;
        st.serialize_field("ts", &self.ts)?;
        st.serialize_field("dur", &self.dur)?;
        st.serialize_field("pid", &self.pid)?;
        st.serialize_field("tid", &self.tid)?;
        if with_args {
            st.serialize_field("args", &self.args)?;
        } else {
            st.skip_field("args")?;
        }
        st.end()
    }
}

/// A key of a record: one of [`FIELDS`] (its index), or another.
struct Field(Option<usize>);

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        struct Key;
        impl<'de> Visitor<'de> for Key {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(Field(FIELDS.iter().position(|&k| k == v)))
            }
        }
        d.deserialize_identifier(Key)
    }
}

/// A time in microseconds: an unsigned integer as it is, a number with
/// a fraction rounded to the nearest microsecond.
struct Micros(u64);

impl<'de> Deserialize<'de> for Micros {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Micros, D::Error> {
        d.deserialize_any(MicrosVisitor).map(Micros)
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = TraceEvent;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct TraceEvent")
    }
    /// A record: a field it lacks is its default, but for `ph`; a field
    /// given twice is an error; other keys are skipped.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TraceEvent, A::Error> {
        let mut ev = TraceEvent::complete("", "", 0, 0.0, 0);
        let mut seen = [false; 8];
        while let Some(Field(key)) = map.next_key()? {
            let i = match key {
                Some(i) => i,
                None => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if seen[i] {
                return Err(de::Error::duplicate_field(FIELDS[i]));
            }
            seen[i] = true;
            match i {
                0 => ev.name = map.next_value()?,
                1 => ev.cat = map.next_value()?,
                2 => ev.ph = map.next_value()?,
                3 => ev.ts = map.next_value::<Micros>()?.0,
                4 => ev.dur = map.next_value::<Micros>()?.0,
                5 => ev.pid = map.next_value()?,
                6 => ev.tid = map.next_value()?,
                _ => ev.args = map.next_value()?,
            }
        }
        if !seen[2] {
            return Err(de::Error::missing_field("ph"));
        }
        Ok(ev)
    }
    /// The fields in [`FIELDS`] order, as the derive read a sequence;
    /// `args` may be left out.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TraceEvent, A::Error> {
        fn need<'de, A: SeqAccess<'de>, T: Deserialize<'de>>(
            seq: &mut A,
            i: usize,
        ) -> Result<T, A::Error> {
            seq.next_element()?
                .ok_or_else(|| de::Error::invalid_length(i, &"struct TraceEvent with 8 elements"))
        }
        Ok(TraceEvent {
            name: need(&mut seq, 0)?,
            cat: need(&mut seq, 1)?,
            ph: need(&mut seq, 2)?,
            ts: need::<A, Micros>(&mut seq, 3)?.0,
            dur: need::<A, Micros>(&mut seq, 4)?.0,
            pid: need(&mut seq, 5)?,
            tid: need(&mut seq, 6)?,
            args: seq.next_element()?.unwrap_or_default(),
        })
    }
}

impl<'de> Deserialize<'de> for TraceEvent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TraceEvent, D::Error> {
        d.deserialize_struct("TraceEvent", FIELDS, EventVisitor)
    }
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

struct MicrosVisitor;

impl<'de> Visitor<'de> for MicrosVisitor {
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

/// A whole trace: its array of records, or the `traceEvents` member of
/// its object (the other members skipped).
struct Doc(Vec<TraceEvent>);

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Doc, D::Error> {
        struct DocVisitor;
        impl<'de> Visitor<'de> for DocVisitor {
            type Value = Doc;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of trace events or an object with traceEvents")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Doc, A::Error> {
                let mut all = Vec::new();
                while let Some(ev) = seq.next_element()? {
                    all.push(ev);
                }
                Ok(Doc(all))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
                let mut events = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key != "traceEvents" {
                        map.next_value::<IgnoredAny>()?;
                    } else if events.is_some() {
                        return Err(de::Error::duplicate_field("traceEvents"));
                    } else {
                        events = Some(map.next_value()?);
                    }
                }
                events
                    .map(Doc)
                    .ok_or_else(|| de::Error::missing_field("traceEvents"))
            }
        }
        d.deserialize_any(DocVisitor)
    }
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
    let Doc(all) = serde_json::from_slice(&bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {}", path.as_ref().display(), e),
        )
    })?;
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
