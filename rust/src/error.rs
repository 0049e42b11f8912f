//! [`Error`]: a tracewriter error code with its message.

use std::ffi::CStr;
use std::fmt;
use std::io;
use std::os::raw::c_int;

use crate::ffi;

/// An error of the library: the negative code the C function returned
/// (`-errno` for system errors, one of the `TW_E*` codes of [`code`]
/// otherwise), the message `tw_strerror` gives for it, and for some errors
/// a detail: the bad key of an options string, the path that failed to
/// open, the field of an event that cannot be passed to C.
///
/// ```
/// let err = tracewriter::Options::parse("buffer=tiny").unwrap_err();
/// assert_eq!(err.code(), tracewriter::code::EOPTION);
/// assert_eq!(err.name(), "TW_EOPTION");
/// assert!(err.to_string().contains("buffer"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    code: i32,
    detail: Option<String>,
}

/// The library's own error codes (`TW_E*` in `tracewriter.h`).  System
/// errors are the negated `errno` ([`Error::raw_os_error`]).
pub mod code {
    /// Invalid option key or value.
    pub const EOPTION: i32 = -1001;
    /// Options or stats struct from an incompatible version.
    pub const EVERSION: i32 = -1002;
    /// Invalid event: missing or wrong field for its phase.
    pub const EEVENT: i32 = -1003;
    /// String is not valid UTF-8 (with `utf8=reject`).
    pub const EUTF8: i32 = -1004;
    /// Number is NaN or infinite (with `nonfinite=reject`).
    pub const ENONFINITE: i32 = -1005;
    /// String longer than `max_string` (with `long=reject`).
    pub const ETOOLONG: i32 = -1006;
    /// Event larger than `max_event` once formatted.
    pub const ETOOBIG: i32 = -1007;
    /// Raw JSON argument is not valid JSON.
    pub const EJSON: i32 = -1008;
    /// Too many arguments (more than 1024).
    pub const ETOOMANY: i32 = -1009;
    /// Writer belongs to the parent process (after `fork`).
    pub const EFORKED: i32 = -1010;
    /// Sink not available for this output.
    pub const ESINK: i32 = -1011;
    /// zlib error.
    pub const EZLIB: i32 = -1012;
    /// Event dropped: every buffer full (`on_full=drop`).
    pub const EDROPPED: i32 = -1013;
    /// Another writer has this trace file open.
    pub const EBUSY: i32 = -1014;
}

fn static_str(p: *const std::os::raw::c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    // SAFETY: tw_strerror and tw_err_name return static NUL-terminated
    // strings that are never freed.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

impl Error {
    /// An error with `code` (negative) and no detail.
    pub fn from_code(code: i32) -> Error {
        Error { code, detail: None }
    }

    /// An error with `code` and a detail shown after the message.
    pub fn with_detail(code: i32, detail: impl Into<String>) -> Error {
        let detail = detail.into();
        Error {
            code,
            detail: if detail.is_empty() {
                None
            } else {
                Some(detail)
            },
        }
    }

    /// `Ok(())` for 0, else the error: how every C return is turned into
    /// a `Result`.
    pub(crate) fn check(rc: c_int) -> Result<(), Error> {
        if rc == 0 {
            Ok(())
        } else {
            Err(Error::from_code(rc))
        }
    }

    /// The code: `-errno`, or one of [`code`]'s constants.
    pub fn code(&self) -> i32 {
        self.code
    }

    /// The symbolic name, from `tw_err_name`: `"TW_EEVENT"`, `"ENOENT"`...
    pub fn name(&self) -> &'static str {
        // SAFETY: any int is a valid argument.
        static_str(unsafe { ffi::tw_err_name(self.code) })
    }

    /// The message, from `tw_strerror`: `"invalid event: missing or wrong
    /// field for its phase"`, `strerror`'s text for a system error.
    pub fn message(&self) -> &'static str {
        // SAFETY: any int is a valid argument.
        static_str(unsafe { ffi::tw_strerror(self.code) })
    }

    /// The detail, if any: the bad key or value of an options string, the
    /// path of a failed open...
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// The `errno` of a system error (`ENOENT`, `ENOSPC`...), `None` for
    /// the library's own codes.
    pub fn raw_os_error(&self) -> Option<i32> {
        if self.code < 0 && self.code > -1000 {
            Some(-self.code)
        } else {
            None
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.detail {
            Some(d) => write!(f, "{}: {}", d, self.message()),
            None => f.write_str(self.message()),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("code", &self.code)
            .field("name", &self.name())
            .field("message", &self.message());
        if let Some(detail) = &self.detail {
            d.field("detail", detail);
        }
        d.finish()
    }
}

impl std::error::Error for Error {}

/// A system error becomes the `io::Error` of its `errno` (so `kind()` is
/// `NotFound`, `PermissionDenied`...), the library's own codes an
/// `io::Error` of kind `Other` that carries the [`Error`].
impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        match (e.raw_os_error(), &e.detail) {
            (Some(errno), None) => io::Error::from_raw_os_error(errno),
            (Some(errno), Some(_)) => {
                let kind = io::Error::from_raw_os_error(errno).kind();
                io::Error::new(kind, e)
            }
            (None, _) => io::Error::new(io::ErrorKind::Other, e),
        }
    }
}
