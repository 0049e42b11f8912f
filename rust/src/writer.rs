//! [`Writer`], its events, [`Span`] guards and [`Stats`].

use std::ffi::CString;
use std::fmt;
use std::mem::ManuallyDrop;
use std::os::raw::{c_char, c_int, c_uint};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::{AsRawFd, OwnedFd};
use std::path::Path;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::args::{with_c, Arg};
use crate::error::{code, Error};
use crate::ffi;
use crate::options::Options;

/// A trace being written: a `tw_writer`.
///
/// Any number of threads may emit events on one writer at once (it is
/// `Send` and `Sync`: share it with `Arc`, or borrow it into scoped
/// threads); the events of each thread appear in the file in the order
/// the thread emitted them.  [`close`](Writer::close) takes the writer by
/// value, so it cannot race with other calls; dropping the writer closes
/// it too, ignoring the error.
///
/// The file is a complete, strictly valid JSON document after every
/// commit: when a buffer fills, at [`flush`](Writer::flush), every
/// `flush=` interval, and at close.
///
/// Category and name come first, as in the C API.  An empty category is
/// left out of the record.  Times are nanoseconds on the scale of
/// [`now_ns`] (`CLOCK_MONOTONIC`).  Every event call returns `Ok(())` or
/// the [`Error`] the library gave: bad input (an event refused, the file
/// unchanged), or the writer's sticky I/O error.
///
/// ```
/// use tracewriter::{Arg, Options, Scope, Writer};
/// # let dir = std::env::temp_dir().join(format!("tw-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let path = dir.join("writer.json");
/// let w = Writer::open(&path, &Options::new())?;
/// w.thread_name("main")?;
/// {
///     let _span = w.span("app", "startup");       // one "X" event at the end of the block
///     w.instant("app", "ready", Scope::Global, &[Arg::new("port", 8080)])?;
/// }
/// w.counter("app", "queue", &[Arg::new("depth", 3)])?;
/// w.close()?;                                    // the first error, if any
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), tracewriter::Error>(())
/// ```
pub struct Writer {
    raw: NonNull<ffi::tw_writer>,
    /// The descriptor of open_fd, closed after tw_close.
    fd: Option<OwnedFd>,
}

// SAFETY: the header allows any number of threads to emit events, flush
// and read the stats of one writer at once.  The one call that must not
// race, tw_close, needs the Writer by value (close, Drop).
unsafe impl Send for Writer {}
unsafe impl Sync for Writer {}

/// The scope of an instant event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The calling thread's track (`"s":"t"`).
    Thread,
    /// The process (`"s":"p"`).
    Process,
    /// Every track (`"s":"g"`).
    Global,
}

impl Scope {
    fn to_c(self) -> c_char {
        (match self {
            Scope::Thread => b't',
            Scope::Process => b'p',
            Scope::Global => b'g',
        }) as c_char
    }
}

/// Counters of a writer ([`Writer::stats`]).  Fields may be added.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Events written (staged or committed).
    pub events: u64,
    /// Bytes of records written, head included.
    pub bytes: u64,
    /// Commits done.
    pub commits: u64,
    /// Events refused as bad input.
    pub rejected: u64,
    /// Strings cut to `max_string`.
    pub strings_truncated: u64,
    /// Strings whose invalid UTF-8 was replaced.
    pub utf8_replaced: u64,
    /// Events dropped by `on_full=drop`.
    pub dropped: u64,
    /// The sticky error (0: none), as [`Writer::error`].
    pub error: i32,
    /// Bytes committed to the output (compressed bytes for gzip).
    pub output_bytes: u64,
    /// Files begun by rotation.
    pub rotations: u64,
}

fn cat_opt(cat: &str) -> Option<&str> {
    if cat.is_empty() {
        None
    } else {
        Some(cat)
    }
}

fn path_cstring(path: &Path) -> Result<CString, Error> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::with_detail(-22 /* EINVAL */, "path contains a NUL byte"))
}

impl Writer {
    /// Create (or truncate) the file at `path` and write its head and
    /// first record, so that it is a valid trace at once (`tw_open`).
    /// The error carries the path as its detail.
    pub fn open<P: AsRef<Path>>(path: P, opts: &Options) -> Result<Writer, Error> {
        let path = path.as_ref();
        let cpath = path_cstring(path)?;
        let copts = opts.to_c()?;
        let mut err: c_int = 0;
        // SAFETY: cpath and the options (and their process name) outlive
        // the call, which copies what it keeps.
        let raw = unsafe { ffi::tw_open(cpath.as_ptr(), copts, &mut err) };
        match NonNull::new(raw) {
            Some(raw) => Ok(Writer { raw, fd: None }),
            None => Err(Error::with_detail(err, path.display().to_string())),
        }
    }

    /// A writer on an open descriptor, which the writer owns from now on
    /// and closes after the trace is closed (`tw_open_fd`).  A regular
    /// file is committed in place from its current offset; a pipe, socket
    /// or `O_APPEND` file is streamed, valid JSON only after close.
    /// Anything `Into<OwnedFd>` works: a `File`, a `ChildStdin`...
    pub fn open_fd(fd: impl Into<OwnedFd>, opts: &Options) -> Result<Writer, Error> {
        let fd = fd.into();
        let copts = opts.to_c()?;
        let mut err: c_int = 0;
        // SAFETY: fd stays open for the writer's life (closed after
        // tw_close, or here on failure when fd is dropped).
        let raw = unsafe { ffi::tw_open_fd(fd.as_raw_fd(), copts, &mut err) };
        match NonNull::new(raw) {
            Some(raw) => Ok(Writer { raw, fd: Some(fd) }),
            None => Err(Error::from_code(err)),
        }
    }

    /// The C handle, for calls this crate does not wrap.  It stays valid
    /// while the `Writer` lives; never `tw_close` it.
    pub fn as_ptr(&self) -> *mut ffi::tw_writer {
        self.raw.as_ptr()
    }

    /// Commit: the file is then a complete document holding every event
    /// emitted before the call (`tw_flush`).
    pub fn flush(&self) -> Result<(), Error> {
        // SAFETY: raw is a live writer (for every call below too).
        Error::check(unsafe { ffi::tw_flush(self.as_ptr()) })
    }

    /// Commit and close the file (`tw_close`).  Returns the first error
    /// the writer met, including those of the last commit and of
    /// `close(2)`.
    pub fn close(self) -> Result<(), Error> {
        let mut me = ManuallyDrop::new(self);
        // SAFETY: me is never used or dropped again; the descriptor is
        // taken out to be closed after the writer.
        let rc = unsafe { ffi::tw_close(me.as_ptr()) };
        drop(me.fd.take());
        Error::check(rc)
    }

    /// The writer's sticky error (`tw_errcode`): `None` while all is
    /// well, else the first I/O error; every later event call and flush
    /// fails with it, and the file keeps its last commit.
    pub fn error(&self) -> Option<Error> {
        Error::check(unsafe { ffi::tw_errcode(self.as_ptr()) }).err()
    }

    /// The writer's counters (`tw_get_stats`).
    pub fn stats(&self) -> Stats {
        let mut s = ffi::tw_stats::default();
        let rc = unsafe {
            ffi::tw_get_stats_sized(self.as_ptr(), &mut s, std::mem::size_of::<ffi::tw_stats>())
        };
        debug_assert_eq!(rc, 0);
        Stats {
            events: s.events,
            bytes: s.bytes,
            commits: s.commits,
            rejected: s.rejected,
            strings_truncated: s.strings_truncated,
            utf8_replaced: s.utf8_replaced,
            dropped: s.dropped,
            error: s.error,
            output_bytes: s.output_bytes,
            rotations: s.rotations,
        }
    }

    /// A complete event (`'X'`) of `dur_ns` starting at `ts_ns`.
    pub fn complete(
        &self,
        cat: &str,
        name: &str,
        ts_ns: u64,
        dur_ns: u64,
        args: &[Arg<'_>],
    ) -> Result<(), Error> {
        with_c([Some(name), cat_opt(cat), None, None], args, |c| unsafe {
            ffi::tw_complete(self.as_ptr(), c.cat, c.name, ts_ns, dur_ns, c.args, c.nargs)
        })
    }

    /// A span that starts now and writes one complete event when it is
    /// dropped (or [`end`](Span::end)ed).
    pub fn span<'a>(&'a self, cat: &'a str, name: &'a str) -> Span<'a> {
        Span {
            w: self,
            cat,
            name,
            start_ns: now_ns(),
            done: false,
        }
    }

    /// A begin event (`'B'`) now, on the calling thread.
    pub fn begin(&self, cat: &str, name: &str, args: &[Arg<'_>]) -> Result<(), Error> {
        with_c([Some(name), cat_opt(cat), None, None], args, |c| unsafe {
            ffi::tw_begin(self.as_ptr(), c.cat, c.name, c.args, c.nargs)
        })
    }

    /// An end event (`'E'`) now, on the calling thread; `name` may be
    /// empty.
    pub fn end(&self, cat: &str, name: &str, args: &[Arg<'_>]) -> Result<(), Error> {
        with_c([Some(name), cat_opt(cat), None, None], args, |c| unsafe {
            ffi::tw_end(self.as_ptr(), c.cat, c.name, c.args, c.nargs)
        })
    }

    /// An instant event now (written with phase `'I'`).
    pub fn instant(
        &self,
        cat: &str,
        name: &str,
        scope: Scope,
        args: &[Arg<'_>],
    ) -> Result<(), Error> {
        with_c([Some(name), cat_opt(cat), None, None], args, |c| unsafe {
            ffi::tw_instant(self.as_ptr(), c.cat, c.name, scope.to_c(), c.args, c.nargs)
        })
    }

    /// A counter event (`'C'`) now: each argument is one series, numbers
    /// only (anything else is [`code::EEVENT`]).
    pub fn counter(&self, cat: &str, name: &str, series: &[Arg<'_>]) -> Result<(), Error> {
        with_c([Some(name), cat_opt(cat), None, None], series, |c| unsafe {
            ffi::tw_counter(self.as_ptr(), c.cat, c.name, c.args, c.nargs)
        })
    }

    /// An async begin (`'b'`) now, keyed by `cat` and `id`.
    pub fn async_begin(
        &self,
        cat: &str,
        name: &str,
        id: u64,
        args: &[Arg<'_>],
    ) -> Result<(), Error> {
        with_c([Some(name), cat_opt(cat), None, None], args, |c| unsafe {
            ffi::tw_async_begin(self.as_ptr(), c.cat, c.name, id, c.args, c.nargs)
        })
    }

    /// An async instant (`'n'`) now.
    pub fn async_instant(
        &self,
        cat: &str,
        name: &str,
        id: u64,
        args: &[Arg<'_>],
    ) -> Result<(), Error> {
        with_c([Some(name), cat_opt(cat), None, None], args, |c| unsafe {
            ffi::tw_async_instant(self.as_ptr(), c.cat, c.name, id, c.args, c.nargs)
        })
    }

    /// An async end (`'e'`) now.
    pub fn async_end(&self, cat: &str, name: &str, id: u64, args: &[Arg<'_>]) -> Result<(), Error> {
        with_c([Some(name), cat_opt(cat), None, None], args, |c| unsafe {
            ffi::tw_async_end(self.as_ptr(), c.cat, c.name, id, c.args, c.nargs)
        })
    }

    /// A flow start (`'s'`) now, on the calling thread.
    pub fn flow_start(&self, cat: &str, name: &str, id: u64) -> Result<(), Error> {
        with_c([Some(name), cat_opt(cat), None, None], &[], |c| unsafe {
            ffi::tw_flow_start(self.as_ptr(), c.cat, c.name, id)
        })
    }

    /// A flow step (`'t'`) now.
    pub fn flow_step(&self, cat: &str, name: &str, id: u64) -> Result<(), Error> {
        with_c([Some(name), cat_opt(cat), None, None], &[], |c| unsafe {
            ffi::tw_flow_step(self.as_ptr(), c.cat, c.name, id)
        })
    }

    /// A flow end (`'f'`) now, bound to the enclosing slice (`"bp":"e"`).
    pub fn flow_end(&self, cat: &str, name: &str, id: u64) -> Result<(), Error> {
        with_c([Some(name), cat_opt(cat), None, None], &[], |c| unsafe {
            ffi::tw_flow_end(self.as_ptr(), c.cat, c.name, id)
        })
    }

    /// Name this process (`process_name` metadata).
    pub fn process_name(&self, name: &str) -> Result<(), Error> {
        with_c([Some(name), None, None, None], &[], |c| unsafe {
            ffi::tw_process_name(self.as_ptr(), c.name)
        })
    }

    /// Name the calling thread (`thread_name` metadata).
    pub fn thread_name(&self, name: &str) -> Result<(), Error> {
        with_c([Some(name), None, None, None], &[], |c| unsafe {
            ffi::tw_thread_name(self.as_ptr(), c.name)
        })
    }

    /// Where this process sorts among processes.
    pub fn process_sort_index(&self, index: i64) -> Result<(), Error> {
        Error::check(unsafe { ffi::tw_process_sort_index(self.as_ptr(), index) })
    }

    /// Where the calling thread sorts among threads.
    pub fn thread_sort_index(&self, index: i64) -> Result<(), Error> {
        Error::check(unsafe { ffi::tw_thread_sort_index(self.as_ptr(), index) })
    }

    /// Labels shown beside the process name (`"a,b"`).
    pub fn process_labels(&self, labels: &str) -> Result<(), Error> {
        with_c([Some(labels), None, None, None], &[], |c| unsafe {
            ffi::tw_process_labels(self.as_ptr(), c.name)
        })
    }

    /// A mark (`'R'`) now.
    pub fn mark(&self, cat: &str, name: &str) -> Result<(), Error> {
        with_c([Some(name), cat_opt(cat), None, None], &[], |c| unsafe {
            ffi::tw_mark(self.as_ptr(), c.cat, c.name)
        })
    }

    /// Any event of any phase, every field under the caller's control
    /// (`tw_emit`).
    pub fn emit(&self, ev: &Event<'_>) -> Result<(), Error> {
        let ph = match u8::try_from(ev.ph) {
            Ok(b) if b.is_ascii() => b as c_char,
            _ => {
                return Err(Error::with_detail(
                    code::EEVENT,
                    format!("phase {:?} is not one ASCII letter", ev.ph),
                ))
            }
        };
        with_c(
            [Some(ev.name), cat_opt(ev.cat), ev.id_scope, ev.cname],
            ev.args,
            |c| {
                let mut e = ffi::tw_event::zeroed();
                e.ph = ph;
                e.instant_scope = ev.scope.map_or(0, Scope::to_c);
                e.has = ev.has;
                e.flags = ev.flags;
                e.name = c.name;
                e.cat = c.cat;
                e.ts = ev.ts;
                e.dur = ev.dur;
                e.tts = ev.tts;
                e.tdur = ev.tdur;
                e.pid = ev.pid;
                e.tid = ev.tid;
                e.id = ev.id;
                e.bind_id = ev.bind_id;
                e.id_scope = c.id_scope;
                e.cname = c.cname;
                e.args = c.args;
                e.nargs = c.nargs;
                // SAFETY: e and every pointer in it live until the call returns.
                unsafe { ffi::tw_emit(self.as_ptr(), &e) }
            },
        )
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // SAFETY: the writer is live, and dropped once; its error is lost
        // here: call close() to see it.
        unsafe { ffi::tw_close(self.as_ptr()) };
    }
}

impl fmt::Debug for Writer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Writer").field("raw", &self.raw).finish()
    }
}

/// A span: one complete event (`'X'`) from its creation by
/// [`Writer::span`] to its end, at drop or at [`end`](Span::end).
///
/// ```
/// # use tracewriter::{Options, Writer};
/// # let path = std::env::temp_dir().join(format!("tw-doc-span-{}.json", std::process::id()));
/// # let w = Writer::open(&path, &Options::new()).unwrap();
/// fn handle(w: &Writer) {
///     let _span = w.span("http", "handle");
///     // ... the work ...
/// }                                              // the event is written here
/// # handle(&w);
/// # w.close().unwrap();
/// # std::fs::remove_file(&path).unwrap();
/// ```
#[must_use = "a span ends when it is dropped: bind it with `let _span = ...`"]
pub struct Span<'a> {
    w: &'a Writer,
    cat: &'a str,
    name: &'a str,
    start_ns: u64,
    done: bool,
}

impl<'a> Span<'a> {
    /// When the span began, on the scale of [`now_ns`].
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }

    /// End the span now and see the result of writing it.
    pub fn end(self) -> Result<(), Error> {
        self.end_with(&[])
    }

    /// End the span now with arguments.
    pub fn end_with(mut self, args: &[Arg<'_>]) -> Result<(), Error> {
        self.done = true;
        self.finish(args)
    }

    fn finish(&self, args: &[Arg<'_>]) -> Result<(), Error> {
        let end = now_ns();
        self.w.complete(
            self.cat,
            self.name,
            self.start_ns,
            end.saturating_sub(self.start_ns),
            args,
        )
    }
}

impl Drop for Span<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.finish(&[]);
        }
    }
}

impl fmt::Debug for Span<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Span")
            .field("cat", &self.cat)
            .field("name", &self.name)
            .field("start_ns", &self.start_ns)
            .finish()
    }
}

/// An event of any phase for [`Writer::emit`]: a `tw_event`.  Unset
/// fields take the library's defaults (ts now, the process's pid, the
/// calling thread's id).  What each phase requires is in `tw_emit(3)`;
/// a missing field is [`code::EEVENT`].
///
/// ```
/// # use tracewriter::{Event, Options, Writer};
/// # let path = std::env::temp_dir().join(format!("tw-doc-event-{}.json", std::process::id()));
/// # let w = Writer::open(&path, &Options::new()).unwrap();
/// // An object snapshot, with a global id and a colour.
/// w.emit(&Event::new('O', "cc::LayerTree").cat("cc").id2_global(7).cname("good"))?;
/// # w.close().unwrap();
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), tracewriter::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    ph: char,
    name: &'a str,
    cat: &'a str,
    has: c_uint,
    flags: c_uint,
    scope: Option<Scope>,
    ts: u64,
    dur: u64,
    tts: u64,
    tdur: u64,
    pid: i64,
    tid: i64,
    id: u64,
    bind_id: u64,
    id_scope: Option<&'a str>,
    cname: Option<&'a str>,
    args: &'a [Arg<'a>],
}

impl<'a> Event<'a> {
    /// An event of phase `ph` (`'X'`, `'B'`, `'i'`, `'C'`, `'b'`, `'s'`,
    /// `'M'`, `'O'`, `'c'`...) named `name`.
    pub fn new(ph: char, name: &'a str) -> Event<'a> {
        Event {
            ph,
            name,
            cat: "",
            has: 0,
            flags: 0,
            scope: None,
            ts: 0,
            dur: 0,
            tts: 0,
            tdur: 0,
            pid: 0,
            tid: 0,
            id: 0,
            bind_id: 0,
            id_scope: None,
            cname: None,
            args: &[],
        }
    }

    /// The category list (`"a,b"`); empty: none.
    #[must_use]
    pub fn cat(mut self, cat: &'a str) -> Self {
        self.cat = cat;
        self
    }
    /// The timestamp, ns (default: now).
    #[must_use]
    pub fn ts(mut self, ns: u64) -> Self {
        self.ts = ns;
        self.has |= ffi::TW_HAS_TS;
        self
    }
    /// The duration of an `'X'`, ns.
    #[must_use]
    pub fn dur(mut self, ns: u64) -> Self {
        self.dur = ns;
        self
    }
    /// The thread timestamp, ns.
    #[must_use]
    pub fn tts(mut self, ns: u64) -> Self {
        self.tts = ns;
        self.has |= ffi::TW_HAS_TTS;
        self
    }
    /// The thread duration of an `'X'`, ns.
    #[must_use]
    pub fn tdur(mut self, ns: u64) -> Self {
        self.tdur = ns;
        self.has |= ffi::TW_HAS_TDUR;
        self
    }
    /// The process id (default: this process).
    #[must_use]
    pub fn pid(mut self, pid: i64) -> Self {
        self.pid = pid;
        self.has |= ffi::TW_HAS_PID;
        self
    }
    /// The thread id (default: the calling thread's kernel id).
    #[must_use]
    pub fn tid(mut self, tid: i64) -> Self {
        self.tid = tid;
        self.has |= ffi::TW_HAS_TID;
        self
    }
    /// The id, written `"id":"0x.."`.
    #[must_use]
    pub fn id(mut self, id: u64) -> Self {
        self.id = id;
        self.has |= ffi::TW_HAS_ID;
        self.flags &= !(ffi::TW_EV_ID2_LOCAL | ffi::TW_EV_ID2_GLOBAL);
        self
    }
    /// The id, written `"id2":{"local":"0x.."}`.
    #[must_use]
    pub fn id2_local(self, id: u64) -> Self {
        let mut e = self.id(id);
        e.flags |= ffi::TW_EV_ID2_LOCAL;
        e
    }
    /// The id, written `"id2":{"global":"0x.."}`.
    #[must_use]
    pub fn id2_global(self, id: u64) -> Self {
        let mut e = self.id(id);
        e.flags |= ffi::TW_EV_ID2_GLOBAL;
        e
    }
    /// The scope of the id, written `"scope"`.
    #[must_use]
    pub fn id_scope(mut self, scope: &'a str) -> Self {
        self.id_scope = Some(scope);
        self
    }
    /// A flow v2 binding id, written `"bind_id":"0x.."`.
    #[must_use]
    pub fn bind_id(mut self, id: u64) -> Self {
        self.bind_id = id;
        self.has |= ffi::TW_HAS_BIND_ID;
        self
    }
    /// `"flow_in":true`.
    #[must_use]
    pub fn flow_in(mut self) -> Self {
        self.flags |= ffi::TW_EV_FLOW_IN;
        self
    }
    /// `"flow_out":true`.
    #[must_use]
    pub fn flow_out(mut self) -> Self {
        self.flags |= ffi::TW_EV_FLOW_OUT;
        self
    }
    /// `"bp":"e"` on a flow step or end: bind to the enclosing slice.
    #[must_use]
    pub fn bp_enclosing(mut self) -> Self {
        self.flags |= ffi::TW_EV_BP_ENCLOSING;
        self
    }
    /// The scope of an instant event (default: thread).
    #[must_use]
    pub fn scope(mut self, scope: Scope) -> Self {
        self.scope = Some(scope);
        self
    }
    /// A colour name, written `"cname"`.
    #[must_use]
    pub fn cname(mut self, cname: &'a str) -> Self {
        self.cname = Some(cname);
        self
    }
    /// The arguments.
    #[must_use]
    pub fn args(mut self, args: &'a [Arg<'a>]) -> Self {
        self.args = args;
        self
    }
}

/// The current time in nanoseconds, `CLOCK_MONOTONIC` (`tw_now_ns`): the
/// scale of every timestamp.
pub fn now_ns() -> u64 {
    unsafe { ffi::tw_now_ns() }
}

/// The version of the linked library, `"MAJOR.MINOR.PATCH"`.
pub fn version() -> &'static str {
    // SAFETY: a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(ffi::tw_version()) }
        .to_str()
        .unwrap_or("")
}

/// The process-wide writer (`tw_global`): opened at the first call from
/// `TRACEWRITER_OUT` (the path; `%p` is the pid, `%t` the start time) and
/// `TRACEWRITER_OPTIONS`, committed at exit, never closed.  `None` when
/// tracing is off or the open failed ([`global_status`] says why).  In a
/// child after `fork`, the parent's writer is never returned: with `%p`
/// the child gets its own file, without it `None`.
pub fn global() -> Option<&'static Writer> {
    // The Writer wrapping the last handle tw_global returned; replaced
    // (and the old one leaked: references may live on) only when the
    // handle changes, which happens in a child after fork.
    static SLOT: AtomicPtr<Writer> = AtomicPtr::new(ptr::null_mut());
    let raw = NonNull::new(unsafe { ffi::tw_global() })?;
    let cur = SLOT.load(Ordering::Acquire);
    // SAFETY: a non-NULL SLOT points to a leaked, never freed Writer.
    if !cur.is_null() && unsafe { (*cur).raw } == raw {
        return Some(unsafe { &*cur });
    }
    let fresh: &'static Writer = Box::leak(Box::new(Writer { raw, fd: None }));
    SLOT.store(fresh as *const Writer as *mut Writer, Ordering::Release);
    Some(fresh)
}

/// Why [`global`] returned `None`: `Ok(())` when tracing is simply off
/// (or the writer is open), else the error of the options string or of
/// the open, with the library's explanation as its detail.
pub fn global_status() -> Result<(), Error> {
    let mut msg: *const c_char = ptr::null();
    let rc = unsafe { ffi::tw_global_status(&mut msg) };
    if rc == 0 {
        return Ok(());
    }
    let detail = if msg.is_null() {
        String::new()
    } else {
        // SAFETY: a static NUL-terminated string.
        unsafe { std::ffi::CStr::from_ptr(msg) }
            .to_string_lossy()
            .into_owned()
    };
    Err(Error::with_detail(rc, detail))
}
