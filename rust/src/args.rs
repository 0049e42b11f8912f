//! Typed arguments ([`Arg`], [`Value`]) and the conversion of an event's
//! strings and arguments into the C structs, without allocating for
//! common sizes.

use std::mem::MaybeUninit;
use std::os::raw::{c_char, c_int};
use std::ptr;

use crate::error::{code, Error};
use crate::ffi;

/// The value of an argument.  Strings are escaped by the library; raw
/// JSON is checked (strict RFC 8259) and written as it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A double.  NaN and infinities are written `null`, or refused with
    /// [`Options::reject_nonfinite`](crate::Options::reject_nonfinite).
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// A string (may hold NUL bytes: written `\u0000`).
    Str(&'a str),
    /// Bytes written as a string: invalid UTF-8 is replaced with U+FFFD
    /// or refused, by option.
    Bytes(&'a [u8]),
    /// `null`.
    Null,
    /// Already serialised JSON, checked by the library: invalid JSON is
    /// [`code::EJSON`] and the event is not written.
    Json(&'a str),
}

/// One named argument of an event: `"args":{"name":value,...}`, in the
/// order given.
///
/// ```
/// use tracewriter::{Arg, Value};
/// let args = [Arg::new("tokens", 42), Arg::new("layer", "attn"),
///             Arg::new("ratio", 0.5), Arg::json("shape", "[4,4096]")];
/// assert_eq!(args[0].value, Value::Int(42));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arg<'a> {
    /// The key.
    pub name: &'a str,
    /// The value.
    pub value: Value<'a>,
}

impl<'a> Arg<'a> {
    /// An argument of any type that converts into a [`Value`]: integers,
    /// floats, `bool`, `&str`, `&String`, `Option<T>` (`None` is `null`).
    pub fn new(name: &'a str, value: impl Into<Value<'a>>) -> Arg<'a> {
        Arg {
            name,
            value: value.into(),
        }
    }

    /// A raw JSON argument ([`Value::Json`]).
    pub fn json(name: &'a str, json: &'a str) -> Arg<'a> {
        Arg {
            name,
            value: Value::Json(json),
        }
    }

    /// A `null` argument.
    pub fn null(name: &'a str) -> Arg<'a> {
        Arg {
            name,
            value: Value::Null,
        }
    }
}

macro_rules! value_from {
    ($variant:ident as $to:ty: $($t:ty),*) => {
        $(impl<'a> From<$t> for Value<'a> {
            fn from(v: $t) -> Value<'a> {
                Value::$variant(v as $to)
            }
        })*
    };
}
value_from!(Int as i64: i8, i16, i32, i64, isize);
value_from!(UInt as u64: u8, u16, u32, u64, usize);
value_from!(Float as f64: f32, f64);

impl<'a> From<bool> for Value<'a> {
    fn from(v: bool) -> Value<'a> {
        Value::Bool(v)
    }
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(v: &'a str) -> Value<'a> {
        Value::Str(v)
    }
}

impl<'a> From<&'a String> for Value<'a> {
    fn from(v: &'a String) -> Value<'a> {
        Value::Str(v.as_str())
    }
}

impl<'a> From<&'a [u8]> for Value<'a> {
    fn from(v: &'a [u8]) -> Value<'a> {
        Value::Bytes(v)
    }
}

impl<'a, T: Into<Value<'a>>> From<Option<T>> for Value<'a> {
    fn from(v: Option<T>) -> Value<'a> {
        match v {
            Some(v) => v.into(),
            None => Value::Null,
        }
    }
}

impl<'a, V: Into<Value<'a>>> From<(&'a str, V)> for Arg<'a> {
    fn from((name, value): (&'a str, V)) -> Arg<'a> {
        Arg::new(name, value)
    }
}

/// The strings of one C call, NUL-terminated, and its argument array.
pub(crate) struct CallStrings {
    pub name: *const c_char,
    pub cat: *const c_char,
    pub id_scope: *const c_char,
    pub cname: *const c_char,
    pub args: *const ffi::tw_arg,
    pub nargs: usize,
}

/// Room on the stack for the NUL-terminated copies of an event's strings
/// and for its arguments; larger events use the heap.
const STACK_BYTES: usize = 512;
const STACK_ARGS: usize = 16;

/// The text an error names a string by.
const STRING_NAMES: [&str; 4] = ["name", "cat", "id_scope", "cname"];

fn has_nul(s: &str) -> bool {
    s.as_bytes().contains(&0)
}

fn arg_to_c(a: &Arg<'_>, name: *const c_char) -> ffi::tw_arg {
    let mut c = ffi::tw_arg::zeroed();
    c.name = name;
    let (ty, len): (c_int, usize) = match a.value {
        Value::Int(i) => {
            c.v.i = i;
            (ffi::TW_ARG_INT, 0)
        }
        Value::UInt(u) => {
            c.v.u = u;
            (ffi::TW_ARG_UINT, 0)
        }
        Value::Float(d) => {
            c.v.d = d;
            (ffi::TW_ARG_DOUBLE, 0)
        }
        Value::Bool(b) => {
            c.v.b = b as c_int;
            (ffi::TW_ARG_BOOL, 0)
        }
        Value::Str(s) => {
            c.v.s = s.as_ptr() as *const c_char;
            (ffi::TW_ARG_STRING, s.len())
        }
        Value::Bytes(b) => {
            c.v.s = b.as_ptr() as *const c_char;
            (ffi::TW_ARG_STRING, b.len())
        }
        Value::Null => (ffi::TW_ARG_NULL, 0),
        Value::Json(s) => {
            c.v.s = s.as_ptr() as *const c_char;
            (ffi::TW_ARG_JSON, s.len())
        }
    };
    c.type_ = ty;
    c.len = len;
    c
}

/// Copy `strings` (name, cat, id_scope, cname: `None` passes NULL) and
/// the arguments' names NUL-terminated, build the `tw_arg` array, and run
/// `f` on the pointers, which live until `f` returns.  A string holding a
/// NUL byte, which C would cut, is [`code::EEVENT`] and `f` is not run.
///
/// The copies and the array are on the stack up to STACK_BYTES and
/// STACK_ARGS, left uninitialised but for what is written (zeroing them
/// cost 160 instructions per event, more than the copies), else in one
/// allocation each.
pub(crate) fn with_c<F>(strings: [Option<&str>; 4], args: &[Arg<'_>], f: F) -> Result<(), Error>
where
    F: FnOnce(&CallStrings) -> c_int,
{
    let mut total = 0;
    for (i, s) in strings.iter().enumerate() {
        if let Some(s) = s {
            if has_nul(s) {
                return Err(Error::with_detail(
                    code::EEVENT,
                    format!("NUL byte in the event's {}", STRING_NAMES[i]),
                ));
            }
            total += s.len() + 1;
        }
    }
    for a in args {
        if has_nul(a.name) {
            return Err(Error::with_detail(
                code::EEVENT,
                "NUL byte in an argument's name",
            ));
        }
        total += a.name.len() + 1;
    }

    let mut stack = [MaybeUninit::<u8>::uninit(); STACK_BYTES];
    let mut heap: Vec<u8> = Vec::new();
    let mut dst: *mut u8 = if total <= STACK_BYTES {
        stack.as_mut_ptr() as *mut u8
    } else {
        heap.reserve_exact(total);
        heap.as_mut_ptr()
    };
    // Copy s and its NUL to dst and return where the copy begins.  The
    // buffer never moves, so the pointers stay valid until it goes out of
    // scope after f.
    let mut copy = |s: &str| -> *const c_char {
        // SAFETY: the bytes written, s.len() + 1 for each string, add up
        // to total, the room behind dst.
        unsafe {
            let start = dst;
            ptr::copy_nonoverlapping(s.as_ptr(), dst, s.len());
            *dst.add(s.len()) = 0;
            dst = dst.add(s.len() + 1);
            start as *const c_char
        }
    };
    let mut c_ptr = |s: Option<&str>| s.map_or(ptr::null(), &mut copy);
    let name = c_ptr(strings[0]);
    let cat = c_ptr(strings[1]);
    let id_scope = c_ptr(strings[2]);
    let cname = c_ptr(strings[3]);

    let mut c_stack = [MaybeUninit::<ffi::tw_arg>::uninit(); STACK_ARGS];
    let mut c_heap: Vec<ffi::tw_arg> = Vec::new();
    let c_args: *mut ffi::tw_arg = if args.len() <= STACK_ARGS {
        c_stack.as_mut_ptr() as *mut ffi::tw_arg
    } else {
        c_heap.reserve_exact(args.len());
        c_heap.as_mut_ptr()
    };
    for (i, a) in args.iter().enumerate() {
        // SAFETY: room for args.len() tw_arg behind c_args.
        unsafe { c_args.add(i).write(arg_to_c(a, copy(a.name))) };
    }

    let call = CallStrings {
        name,
        cat,
        id_scope,
        cname,
        args: if args.is_empty() { ptr::null() } else { c_args },
        nargs: args.len(),
    };
    Error::check(f(&call))
}
