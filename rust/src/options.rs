//! [`Options`]: how a writer is opened, built in Rust or from an options
//! string.

use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::{c_char, c_int, c_uint};
use std::str::FromStr;
use std::time::Duration;

use crate::error::{code, Error};
use crate::ffi;

/// Layout of the file (`format=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A bare array, the default: Perfetto opens a truncated array, which
    /// matters after a crash.
    Array,
    /// `{"traceEvents":[...]}`.
    Object,
}

/// Where the bytes go (`sink=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// Gzip for a path ending in `.gz`, the file sink otherwise.
    Auto,
    /// Plain JSON, committed in place at each commit.
    File,
    /// Plain JSON in a shared mapping: every record is committed as it is
    /// copied in.
    Mmap,
    /// One gzip member, complete after every commit.
    Gzip,
}

/// Who writes commits (`commit=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Commit {
    /// Background for gzip, inline otherwise.
    Auto,
    /// The thread that fills a buffer or calls [`Writer::flush`](crate::Writer::flush).
    Inline,
    /// A committer thread.
    Background,
}

/// What a producer does when every buffer is full (`on_full=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnFull {
    /// Wait for a free buffer.
    Block,
    /// Drop the event (`code::EDROPPED`), counted and reported in the file.
    Drop,
}

/// What happens when the process dies by a signal (`crash=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crash {
    /// Nothing: the file keeps its last commit.
    Off,
    /// The library's signal handler commits what is buffered first.
    Commit,
}

/// Options for [`Writer::open`](crate::Writer::open): a `tw_options`
/// filled by `tw_options_init`, changed by the builder methods below or by
/// an options string (the one `TRACEWRITER_OPTIONS` takes; see
/// `tw_options_init(3)` for every key).  The library checks the values
/// when the writer is opened.
///
/// ```
/// use tracewriter::{Options, Sink};
/// use std::time::Duration;
///
/// let a = Options::new().sink(Sink::Gzip).flush_interval(Duration::from_millis(100));
/// let b = Options::parse("gzip,flush=100ms").unwrap();
/// assert_eq!(a.as_raw().sink, b.as_raw().sink);
/// assert_eq!(a.as_raw().flush_interval_ns, b.as_raw().flush_interval_ns);
/// ```
pub struct Options {
    raw: ffi::tw_options,
    /// Owns the string raw.process_name points to.
    process_name: Option<CString>,
    /// A value that cannot be passed to C (a NUL in process_name),
    /// reported by the open.
    invalid: Option<Error>,
}

// SAFETY: the only pointer in raw is process_name, which points into the
// CString this struct owns and never changes through a shared reference.
unsafe impl Send for Options {}
unsafe impl Sync for Options {}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Options {
    /// The defaults (`tw_options_init`).
    pub fn new() -> Options {
        // SAFETY: an all-zero tw_options is a valid value to pass, and
        // tw_options_init_sized fills it.
        let mut raw: ffi::tw_options = unsafe { std::mem::zeroed() };
        let rc =
            unsafe { ffi::tw_options_init_sized(&mut raw, std::mem::size_of::<ffi::tw_options>()) };
        // Only a NULL pointer or a size below the first published struct
        // fail, and ours is the whole struct.
        debug_assert_eq!(rc, 0);
        Options {
            raw,
            process_name: None,
            invalid: None,
        }
    }

    /// The defaults with an options string applied, for example
    /// `"buffer=256KiB,flush=1s,utf8=reject"`.  A bad key or value is
    /// [`code::EOPTION`] with a detail naming it.
    pub fn parse(s: &str) -> Result<Options, Error> {
        Options::new().apply(s)
    }

    /// Apply an options string on top of these options.  On error the
    /// options are dropped: keep a clone to go on.
    pub fn apply(mut self, s: &str) -> Result<Options, Error> {
        let cs = CString::new(s)
            .map_err(|_| Error::with_detail(code::EOPTION, "options string contains a NUL byte"))?;
        let mut msg = [0 as c_char; 256];
        // SAFETY: raw was initialised by tw_options_init_sized; cs and msg
        // outlive the call; msg's size is passed.
        let rc = unsafe {
            ffi::tw_options_parse(&mut self.raw, cs.as_ptr(), msg.as_mut_ptr(), msg.len())
        };
        if rc != 0 {
            // SAFETY: tw_options_parse always NUL-terminates msg.
            let detail = unsafe { CStr::from_ptr(msg.as_ptr()) }
                .to_string_lossy()
                .into_owned();
            return Err(Error::with_detail(rc, detail));
        }
        Ok(self)
    }

    /// Bytes buffered between commits (`buffer=`; default 64 KiB, at least
    /// 256).
    #[must_use]
    pub fn buffer_size(mut self, bytes: usize) -> Options {
        self.raw.buffer_size = bytes;
        self
    }

    /// [`Format::Array`] (default) or [`Format::Object`] (`format=`).
    #[must_use]
    pub fn format(mut self, format: Format) -> Options {
        self.raw.format = match format {
            Format::Array => ffi::TW_FORMAT_ARRAY,
            Format::Object => ffi::TW_FORMAT_OBJECT,
        };
        self
    }

    /// The sink (`sink=`).
    #[must_use]
    pub fn sink(mut self, sink: Sink) -> Options {
        self.raw.sink = match sink {
            Sink::Auto => ffi::TW_SINK_AUTO,
            Sink::File => ffi::TW_SINK_FILE,
            Sink::Mmap => ffi::TW_SINK_MMAP,
            Sink::Gzip => ffi::TW_SINK_GZIP,
        };
        self
    }

    /// The gzip level, 1..9 (`gzip=LEVEL` also selects the sink; this does
    /// not).
    #[must_use]
    pub fn gzip_level(mut self, level: i32) -> Options {
        self.raw.gzip_level = level as c_int;
        self
    }

    fn flag(mut self, bit: c_uint, on: bool) -> Options {
        if on {
            self.raw.flags |= bit;
        } else {
            self.raw.flags &= !bit;
        }
        self
    }

    /// Refuse strings that are not UTF-8 instead of replacing the bad
    /// bytes with U+FFFD (`utf8=reject`).  Rust strings are always UTF-8;
    /// this matters to [`Value::Bytes`](crate::Value::Bytes).
    #[must_use]
    pub fn reject_invalid_utf8(self, on: bool) -> Options {
        self.flag(ffi::TW_OPT_REJECT_INVALID_UTF8, on)
    }

    /// Refuse NaN and infinities instead of writing `null`
    /// (`nonfinite=reject`).
    #[must_use]
    pub fn reject_nonfinite(self, on: bool) -> Options {
        self.flag(ffi::TW_OPT_REJECT_NONFINITE, on)
    }

    /// Refuse strings longer than `max_string` instead of cutting them on
    /// a UTF-8 boundary (`long=reject`).
    #[must_use]
    pub fn reject_long_strings(self, on: bool) -> Options {
        self.flag(ffi::TW_OPT_REJECT_LONG_STRINGS, on)
    }

    /// `fdatasync` every commit (`sync`).
    #[must_use]
    pub fn sync(self, on: bool) -> Options {
        self.flag(ffi::TW_OPT_SYNC, on)
    }

    /// Longest string written, in bytes (`max_string=`; default 64 KiB).
    #[must_use]
    pub fn max_string(mut self, bytes: usize) -> Options {
        self.raw.max_string = bytes;
        self
    }

    /// Largest formatted record (`max_event=`; default 1 MiB).
    #[must_use]
    pub fn max_event(mut self, bytes: usize) -> Options {
        self.raw.max_event = bytes;
        self
    }

    /// The name in the file's first record (default: the program's short
    /// name).  A name holding a NUL byte makes the open fail with
    /// [`code::EOPTION`].
    #[must_use]
    pub fn process_name(mut self, name: &str) -> Options {
        match CString::new(name) {
            Ok(c) => {
                self.raw.process_name = c.as_ptr();
                self.process_name = Some(c);
            }
            Err(_) => {
                self.invalid = Some(Error::with_detail(
                    code::EOPTION,
                    "process name contains a NUL byte",
                ));
            }
        }
        self
    }

    /// Permission bits of the file `Writer::open` creates (default 0644,
    /// before the umask).
    #[must_use]
    pub fn file_mode(mut self, mode: u32) -> Options {
        self.raw.file_mode = mode as c_int;
        self
    }

    /// Who writes commits (`commit=`).
    #[must_use]
    pub fn commit(mut self, commit: Commit) -> Options {
        self.raw.commit = match commit {
            Commit::Auto => ffi::TW_COMMIT_AUTO,
            Commit::Inline => ffi::TW_COMMIT_INLINE,
            Commit::Background => ffi::TW_COMMIT_BACKGROUND,
        };
        self
    }

    /// Buffers of a background committer, 2..8 (`buffers=`).
    #[must_use]
    pub fn buffer_count(mut self, n: u32) -> Options {
        self.raw.buffer_count = n as c_uint;
        self
    }

    /// Growth step of the mmap sink (`chunk=`).
    #[must_use]
    pub fn mmap_chunk(mut self, bytes: usize) -> Options {
        self.raw.mmap_chunk = bytes;
        self
    }

    /// Commit at least this often (`flush=`); zero: only when a buffer
    /// fills, at [`Writer::flush`](crate::Writer::flush) and at close.
    #[must_use]
    pub fn flush_interval(mut self, every: Duration) -> Options {
        self.raw.flush_interval_ns = duration_ns(every);
        self
    }

    /// Block or drop when every buffer is full (`on_full=`).
    #[must_use]
    pub fn on_full(mut self, on_full: OnFull) -> Options {
        self.raw.on_full = match on_full {
            OnFull::Block => ffi::TW_ON_FULL_BLOCK,
            OnFull::Drop => ffi::TW_ON_FULL_DROP,
        };
        self
    }

    /// The crash hook (`crash=`).
    #[must_use]
    pub fn crash(mut self, crash: Crash) -> Options {
        self.raw.crash = match crash {
            Crash::Off => ffi::TW_CRASH_OFF,
            Crash::Commit => ffi::TW_CRASH_COMMIT,
        };
        self
    }

    /// Start a new file once this one holds `bytes` past its metadata
    /// (`rotate=`; 0: never).
    #[must_use]
    pub fn rotate_size(mut self, bytes: u64) -> Options {
        self.raw.rotate_size = bytes;
        self
    }

    /// Start a new file at the first commit this long after the file
    /// began (`rotate_every=`; zero: never).
    #[must_use]
    pub fn rotate_interval(mut self, every: Duration) -> Options {
        self.raw.rotate_interval_ns = duration_ns(every);
        self
    }

    /// Finished files kept with rotation (`keep=`; 0: all).
    #[must_use]
    pub fn rotate_keep(mut self, n: u32) -> Options {
        self.raw.rotate_keep = n as c_uint;
        self
    }

    /// The C struct, as the library will read it.
    pub fn as_raw(&self) -> &ffi::tw_options {
        &self.raw
    }

    /// The struct to pass to an open function, or the error a builder
    /// method recorded.
    pub(crate) fn to_c(&self) -> Result<*const ffi::tw_options, Error> {
        match &self.invalid {
            Some(e) => Err(e.clone()),
            None => Ok(&self.raw),
        }
    }
}

impl Default for Options {
    fn default() -> Options {
        Options::new()
    }
}

impl Clone for Options {
    fn clone(&self) -> Options {
        let mut o = Options {
            raw: self.raw,
            process_name: self.process_name.clone(),
            invalid: self.invalid.clone(),
        };
        // Point at the clone's own copy of the name.
        if let Some(c) = &o.process_name {
            o.raw.process_name = c.as_ptr();
        }
        o
    }
}

impl FromStr for Options {
    type Err = Error;
    fn from_str(s: &str) -> Result<Options, Error> {
        Options::parse(s)
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("raw", &self.raw)
            .field("process_name", &self.process_name)
            .finish()
    }
}
