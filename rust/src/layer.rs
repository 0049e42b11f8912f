//! A [`tracing`](https://docs.rs/tracing) layer that writes a trace
//! through a tracewriter [`Writer`] (the `tracing` feature).
//!
//! ```
//! use std::sync::Arc;
//! use tracewriter::{layer::ChromeLayer, Options, Writer};
//! use tracing_subscriber::layer::SubscriberExt;
//! # let path = std::env::temp_dir().join(format!("tw-doc-layer-{}.json", std::process::id()));
//!
//! let w = Arc::new(Writer::open(&path, &Options::new())?);
//! let subscriber = tracing_subscriber::registry().with(ChromeLayer::new(w.clone()));
//! tracing::subscriber::with_default(subscriber, || {
//!     let _s = tracing::info_span!("prefill", tokens = 512).entered();
//!     tracing::info!(layer = 3, "kv cache full");
//! });
//! # drop(w);
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! What each thing becomes:
//!
//! * a span entered once and exited (on one thread, with nothing in
//!   between that leaves it): one complete event (`"ph":"X"`) from the
//!   enter to the exit, on that thread;
//! * a span entered more than once -- the span of a future that lives
//!   across `.await` points, entered at each poll, possibly on several
//!   threads -- one async begin/end pair (`"ph":"b"`/`"e"`) with an id of
//!   its own, from its first enter to its last exit: one slice on an
//!   async track, never a fragment per poll;
//! * a span never entered: nothing;
//! * an event: an instant (`"ph":"I"`, thread scope) named by its message
//!   (else by the event's name), its other fields as arguments;
//! * the span's fields (at creation and from `record`) become the
//!   arguments of its `X` or `b`; the category is the target
//!   (`module::path`);
//! * each thread, at its first record, gets a `thread_name` record with
//!   its Rust name when it has one.
//!
//! A span is written when it closes, with the times it was entered and
//! exited, so a span still open when the process dies is not in the file
//! (its events are).  Field values: integers, floats and booleans as
//! such, strings as strings, anything else by its `Debug` text.
//!
//! # Lanes, for viewers without async tracks
//!
//! Chrome DevTools and speedscope draw no async (`b`/`e`) events at
//! all: there a tokio server's trace shows its worker threads nearly
//! empty.  With [`ChromeLayer::async_spans`] and [`AsyncSpans::Lanes`]
//! the layer writes every span as a complete event (`"ph":"X"`) on a *lane* instead: a
//! synthetic thread of the process (tid [`LANE_TID_BASE`]` + n`), named
//! by a `thread_name` record `"requests lane n"`.  A span with no parent
//! (a request) takes the lowest lane free at its first enter and holds
//! it until it closes; a span inside it goes on its parent's lane when
//! the parent is the innermost span open there, else (siblings polled
//! at once: `join!`, `select!`) on a lane of its own.  So on one lane
//! two events are apart or one holds the other, and every viewer shows
//! every request.  A span's event there lasts from its first enter to
//! its last exit, or to the end of the last span written inside it if
//! that is later.  Events (instants) stay on their threads.
//!
//! [`AsyncSpans::Async`] is the default: Perfetto draws async tracks,
//! a span entered on one thread stays on that thread's track, and a
//! request's track keeps its own name there; lanes give up which thread
//! ran what for a picture every viewer can show.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tracing_core::field::{Field, Visit};
use tracing_core::span::{Attributes, Id, Record};
use tracing_core::{Event as TracingEvent, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use crate::args::{Arg, Value};
use crate::writer::{global, now_ns, Event, Writer};

/// Where the layer's records go.
enum Target {
    Owned(Arc<Writer>),
    Global,
}

/// How the spans of futures (entered at each poll) are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsyncSpans {
    /// A span entered more than once is an async begin/end pair with an
    /// id of its own; a span entered once is an `X` on its thread (the
    /// default).
    Async,
    /// Every span is an `X` on a lane: see the
    /// [module documentation](self#lanes-for-viewers-without-async-tracks).
    Lanes,
}

/// The tid of lane `n` (from 1) is `LANE_TID_BASE + n`: above any Linux
/// thread id (`pid_max` is at most 2^22), below 2^31 for readers that
/// take tids as 32-bit integers.  The Python binding uses the same.
pub const LANE_TID_BASE: i64 = 0x7FFF_0000;

/// The layer: see the [module documentation](self).
pub struct ChromeLayer {
    target: Target,
    lanes: Option<Mutex<Lanes>>,
}

impl ChromeLayer {
    /// A layer writing through `writer`.
    pub fn new(writer: Arc<Writer>) -> ChromeLayer {
        ChromeLayer {
            target: Target::Owned(writer),
            lanes: None,
        }
    }

    /// A layer writing through the process-wide writer ([`crate::global`],
    /// `TRACEWRITER_OUT`): nothing is written while tracing is off.
    pub fn global() -> ChromeLayer {
        ChromeLayer {
            target: Target::Global,
            lanes: None,
        }
    }

    /// The same layer writing spans as `mode` says ([`AsyncSpans::Async`]
    /// by default).
    #[must_use]
    pub fn async_spans(mut self, mode: AsyncSpans) -> ChromeLayer {
        self.lanes = match mode {
            AsyncSpans::Async => None,
            AsyncSpans::Lanes => Some(Mutex::new(Lanes::default())),
        };
        self
    }

    fn writer(&self) -> Option<&Writer> {
        match &self.target {
            Target::Owned(w) => Some(w),
            Target::Global => global(),
        }
    }
}

impl fmt::Debug for ChromeLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChromeLayer")
            .field("global", &matches!(self.target, Target::Global))
            .field("lanes", &self.lanes.is_some())
            .finish()
    }
}

/// A field value, owned.
#[derive(Clone, Debug)]
enum Owned {
    I(i64),
    U(u64),
    F(f64),
    B(bool),
    S(String),
}

/// The fields of a span or event, in the order recorded.
#[derive(Default)]
struct Fields {
    list: Vec<(&'static str, Owned)>,
}

impl Fields {
    fn set(&mut self, name: &'static str, v: Owned) {
        match self.list.iter_mut().find(|(k, _)| *k == name) {
            Some(slot) => slot.1 = v,
            None => self.list.push((name, v)),
        }
    }

    /// Take the "message" field out, if any.
    fn take_message(&mut self) -> Option<String> {
        let i = self.list.iter().position(|(k, _)| *k == "message")?;
        match self.list.remove(i).1 {
            Owned::S(s) => Some(s),
            other => Some(format!("{:?}", other)),
        }
    }

    fn args(&self) -> Vec<Arg<'_>> {
        self.list
            .iter()
            .map(|(k, v)| Arg {
                name: k,
                value: match v {
                    Owned::I(i) => Value::Int(*i),
                    Owned::U(u) => Value::UInt(*u),
                    Owned::F(f) => Value::Float(*f),
                    Owned::B(b) => Value::Bool(*b),
                    Owned::S(s) => Value::Str(s),
                },
            })
            .collect()
    }
}

impl Visit for Fields {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field.name(), Owned::I(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.set(field.name(), Owned::U(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.set(field.name(), Owned::F(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.set(field.name(), Owned::B(value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field.name(), Owned::S(value.to_string()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.set(field.name(), Owned::S(format!("{:?}", value)));
    }
}

/// What the layer keeps in a span's extensions.
struct SpanState {
    fields: Fields,
    /// The first enter: time and kernel thread id.
    first: Option<(u64, i64)>,
    /// The last exit: time and kernel thread id.
    last_exit: Option<(u64, i64)>,
    enters: u32,
}

/// A lane: the spans open on it, innermost last, as (span id, first
/// enter, end of what was written inside it so far); and the end of the
/// last event written on it.
#[derive(Default)]
struct Lane {
    stack: Vec<(u64, u64, u64)>,
    last_end: u64,
}

/// The lanes of a layer, lane n at index n - 1, and the lane of each
/// open span.
#[derive(Default)]
struct Lanes {
    lanes: Vec<Lane>,
    of: HashMap<u64, usize>,
}

impl Lanes {
    /// Put span `id`, first entered at `t0`, on a lane: its parent's when
    /// the parent is the innermost span open there, else the lowest lane
    /// with nothing open and nothing written after `t0`.  Returns the
    /// index of a lane made new, to be named.
    fn open(&mut self, id: u64, parent: Option<u64>, t0: u64) -> Option<usize> {
        let on_parent = parent
            .and_then(|p| self.of.get(&p).map(|&l| (p, l)))
            .filter(|&(p, l)| self.lanes[l].stack.last().map(|top| top.0) == Some(p))
            .map(|(_, l)| l);
        let (lane, new) = match on_parent {
            Some(l) => (l, false),
            None => match self
                .lanes
                .iter()
                .position(|l| l.stack.is_empty() && l.last_end <= t0)
            {
                Some(l) => (l, false),
                None => {
                    self.lanes.push(Lane::default());
                    (self.lanes.len() - 1, true)
                }
            },
        };
        self.lanes[lane].stack.push((id, t0, 0));
        self.of.insert(id, lane);
        if new {
            Some(lane)
        } else {
            None
        }
    }

    /// Take span `id`, whose last exit was `t1`, off its lane: its lane
    /// index and the end of its event (`t1`, or later when a span
    /// written inside it ended later).  With the registry a span closes
    /// after every span inside it, so it is the innermost one open on
    /// its lane; were it not, only it is taken off.
    fn close(&mut self, id: u64, t1: u64) -> Option<(usize, u64)> {
        let l = self.of.remove(&id)?;
        let lane = &mut self.lanes[l];
        let i = lane.stack.iter().rposition(|e| e.0 == id)?;
        let (_, _, inner_end) = lane.stack.remove(i);
        let end = t1.max(inner_end);
        if i > 0 {
            let below = &mut lane.stack[i - 1];
            below.2 = below.2.max(end);
        }
        lane.last_end = lane.last_end.max(end);
        Some((l, end))
    }
}

/// The id of each async pair: unique in the process.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

extern "C" {
    fn gettid() -> i32;
}

thread_local! {
    /// This thread's kernel id, and the writers (by address) that have
    /// its thread_name record.
    static THREAD: RefCell<(i64, Vec<usize>)> = RefCell::new((0, Vec::new()));
}

/// The calling thread's kernel id; names the thread on `w` the first
/// time.
fn this_thread(w: &Writer) -> i64 {
    THREAD.with(|t| {
        let mut t = t.borrow_mut();
        if t.0 == 0 {
            // SAFETY: gettid has no preconditions.
            t.0 = i64::from(unsafe { gettid() });
        }
        let key = w as *const Writer as usize;
        if !t.1.contains(&key) {
            t.1.push(key);
            if let Some(name) = std::thread::current().name() {
                let _ = w.thread_name(name);
            }
        }
        t.0
    })
}

impl ChromeLayer {
    /// Apply `f` to the state of span `id` with the time and thread of
    /// now (an enter or an exit).
    fn update<S>(&self, id: &Id, ctx: &Context<'_, S>, f: impl FnOnce(&mut SpanState, (u64, i64)))
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let w = match self.writer() {
            Some(w) => w,
            None => return,
        };
        let tid = this_thread(w);
        if let Some(span) = ctx.span(id) {
            if let Some(state) = span.extensions_mut().get_mut::<SpanState>() {
                f(state, (now_ns(), tid));
            }
        }
    }
}

impl<S> Layer<S> for ChromeLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if self.writer().is_none() {
            return;
        }
        let span = match ctx.span(id) {
            Some(s) => s,
            None => return,
        };
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        span.extensions_mut().insert(SpanState {
            fields,
            first: None,
            last_exit: None,
            enters: 0,
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(state) = span.extensions_mut().get_mut::<SpanState>() {
                values.record(&mut state.fields);
            }
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        let mut first_at = None;
        self.update(id, &ctx, |state, at| {
            state.enters += 1;
            if state.first.is_none() {
                state.first = Some(at);
                first_at = Some(at.0);
            }
        });
        if let (Some(t0), Some(lanes), Some(w)) = (first_at, &self.lanes, self.writer()) {
            let parent = ctx
                .span(id)
                .and_then(|s| s.parent().map(|p| p.id().into_u64()));
            let made = lanes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .open(id.into_u64(), parent, t0);
            if let Some(l) = made {
                let name = format!("requests lane {}", l + 1);
                let _ = w.emit(
                    &Event::new('M', "thread_name")
                        .tid(LANE_TID_BASE + l as i64 + 1)
                        .args(&[Arg {
                            name: "name",
                            value: Value::Str(&name),
                        }]),
                );
            }
        }
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        self.update(id, &ctx, |state, at| state.last_exit = Some(at));
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let w = match self.writer() {
            Some(w) => w,
            None => return,
        };
        let span = match ctx.span(&id) {
            Some(s) => s,
            None => return,
        };
        let mut ext = span.extensions_mut();
        let state = match ext.remove::<SpanState>() {
            Some(s) => s,
            None => return,
        };
        let ((t0, tid0), (t1, tid1)) = match (state.first, state.last_exit) {
            (Some(a), Some(b)) => (a, b),
            (Some(a), None) => (a, (now_ns(), this_thread(w))),
            _ => return, // never entered
        };
        let meta = span.metadata();
        let args = state.fields.args();
        if let Some(lanes) = &self.lanes {
            let placed = lanes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .close(id.into_u64(), t1);
            if let Some((l, end)) = placed {
                let _ = w.emit(
                    &Event::new('X', meta.name())
                        .cat(meta.target())
                        .ts(t0)
                        .dur(end.saturating_sub(t0))
                        .tid(LANE_TID_BASE + l as i64 + 1)
                        .args(&args),
                );
                return;
            }
        }
        if state.enters == 1 {
            let _ = w.emit(
                &Event::new('X', meta.name())
                    .cat(meta.target())
                    .ts(t0)
                    .dur(t1.saturating_sub(t0))
                    .tid(tid0)
                    .args(&args),
            );
        } else {
            let async_id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
            let _ = w.emit(
                &Event::new('b', meta.name())
                    .cat(meta.target())
                    .ts(t0)
                    .tid(tid0)
                    .id(async_id)
                    .args(&args),
            );
            let _ = w.emit(
                &Event::new('e', meta.name())
                    .cat(meta.target())
                    .ts(t1.max(t0))
                    .tid(tid1)
                    .id(async_id),
            );
        }
    }

    fn on_event(&self, event: &TracingEvent<'_>, _ctx: Context<'_, S>) {
        let w = match self.writer() {
            Some(w) => w,
            None => return,
        };
        this_thread(w);
        let mut fields = Fields::default();
        event.record(&mut fields);
        let meta = event.metadata();
        let message = fields.take_message();
        let name = message.as_deref().unwrap_or_else(|| meta.name());
        let args = fields.args();
        let _ = w.emit(
            &Event::new('I', name)
                .cat(meta.target())
                .scope(crate::Scope::Thread)
                .args(&args),
        );
    }
}
