//! The C API of `tracewriter.h`, declared by hand.
//!
//! These mirror the header field for field (`#[repr(C)]`, the C types of
//! `std::os::raw`); the crate's tests check them against the linked
//! library (see `tests/integration/layout.rs`).  Everything here is `unsafe` to call
//! and follows the header's contracts; the rest of the crate is the safe
//! interface over it.  `std::os::raw` rather than `std::ffi::c_char`:
//! the latter is Rust 1.64, and the crate builds with 1.63.

#![allow(non_camel_case_types, missing_docs)]

use std::os::raw::{c_char, c_int, c_uint};

/// Opaque writer handle (`tw_writer`).
#[repr(C)]
pub struct tw_writer {
    _private: [u8; 0],
}

/// `tw_options`: fields in the header's order; only ever appended to.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tw_options {
    pub struct_size: usize,
    pub buffer_size: usize,
    pub format: c_int,
    pub sink: c_int,
    pub gzip_level: c_int,
    pub flags: c_uint,
    pub max_string: usize,
    pub max_event: usize,
    pub process_name: *const c_char,
    pub file_mode: c_int,
    pub commit: c_int,
    pub buffer_count: c_uint,
    pub mmap_chunk: usize,
    pub flush_interval_ns: u64,
    pub on_full: c_int,
    pub crash: c_int,
    pub rotate_size: u64,
    pub rotate_interval_ns: u64,
    pub rotate_keep: c_uint,
    pub timebase: c_int,
    pub rank: c_int,
    pub gzip_threads: c_uint,
}

/// `tw_stats`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct tw_stats {
    pub events: u64,
    pub bytes: u64,
    pub commits: u64,
    pub rejected: u64,
    pub strings_truncated: u64,
    pub utf8_replaced: u64,
    pub dropped: u64,
    pub error: c_int,
    pub output_bytes: u64,
    pub rotations: u64,
}

/// The value of a `tw_arg` (the header's anonymous union).
#[repr(C)]
#[derive(Clone, Copy)]
pub union tw_arg_value {
    pub i: i64,
    pub u: u64,
    pub d: f64,
    pub b: c_int,
    pub s: *const c_char,
}

/// `tw_arg`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct tw_arg {
    pub name: *const c_char,
    pub type_: c_int,
    pub len: usize,
    pub v: tw_arg_value,
}

/// `tw_event`.  A zeroed event (`tw_event::zeroed()`) takes every default.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct tw_event {
    pub ph: c_char,
    pub instant_scope: c_char,
    pub has: c_uint,
    pub flags: c_uint,
    pub name: *const c_char,
    pub cat: *const c_char,
    pub ts: u64,
    pub dur: u64,
    pub tts: u64,
    pub tdur: u64,
    pub pid: i64,
    pub tid: i64,
    pub id: u64,
    pub bind_id: u64,
    pub id_scope: *const c_char,
    pub cname: *const c_char,
    pub args: *const tw_arg,
    pub nargs: usize,
    pub reserved: [*const std::os::raw::c_void; 2],
}

impl tw_event {
    /// An event with every field zero or NULL.
    pub fn zeroed() -> tw_event {
        // SAFETY: every field is an integer or a raw pointer, for which
        // all-zero bits are valid (NULL for the pointers).
        unsafe { std::mem::zeroed() }
    }
}

impl tw_arg {
    /// A NULL-named TW_ARG_NULL argument, for filling arrays.
    pub fn zeroed() -> tw_arg {
        // SAFETY: as for tw_event.
        unsafe { std::mem::zeroed() }
    }
}

// enum tw_format, tw_sink, tw_commit, tw_on_full, tw_crash
pub const TW_FORMAT_ARRAY: c_int = 0;
pub const TW_FORMAT_OBJECT: c_int = 1;
pub const TW_SINK_AUTO: c_int = 0;
pub const TW_SINK_FILE: c_int = 1;
pub const TW_SINK_MMAP: c_int = 2;
pub const TW_SINK_GZIP: c_int = 3;
pub const TW_COMMIT_AUTO: c_int = 0;
pub const TW_COMMIT_INLINE: c_int = 1;
pub const TW_COMMIT_BACKGROUND: c_int = 2;
pub const TW_ON_FULL_BLOCK: c_int = 0;
pub const TW_ON_FULL_DROP: c_int = 1;
pub const TW_CRASH_OFF: c_int = 0;
pub const TW_CRASH_COMMIT: c_int = 1;

// tw_options.flags
pub const TW_OPT_REJECT_INVALID_UTF8: c_uint = 0x01;
pub const TW_OPT_REJECT_NONFINITE: c_uint = 0x02;
pub const TW_OPT_REJECT_LONG_STRINGS: c_uint = 0x04;
pub const TW_OPT_SYNC: c_uint = 0x08;

// enum tw_arg_type
pub const TW_ARG_INT: c_int = 1;
pub const TW_ARG_UINT: c_int = 2;
pub const TW_ARG_DOUBLE: c_int = 3;
pub const TW_ARG_BOOL: c_int = 4;
pub const TW_ARG_STRING: c_int = 5;
pub const TW_ARG_NULL: c_int = 6;
pub const TW_ARG_JSON: c_int = 7;

pub const TW_MAX_ARGS: usize = 1024;

// tw_event.has
pub const TW_HAS_TS: c_uint = 0x01;
pub const TW_HAS_PID: c_uint = 0x02;
pub const TW_HAS_TID: c_uint = 0x04;
pub const TW_HAS_TTS: c_uint = 0x08;
pub const TW_HAS_TDUR: c_uint = 0x10;
pub const TW_HAS_ID: c_uint = 0x20;
pub const TW_HAS_BIND_ID: c_uint = 0x40;

// tw_event.flags
pub const TW_EV_ID2_LOCAL: c_uint = 0x01;
pub const TW_EV_ID2_GLOBAL: c_uint = 0x02;
pub const TW_EV_FLOW_IN: c_uint = 0x04;
pub const TW_EV_FLOW_OUT: c_uint = 0x08;
pub const TW_EV_BP_ENCLOSING: c_uint = 0x10;

// TW_ERRNO_MAP
pub const TW_EOPTION: c_int = -1001;
pub const TW_EVERSION: c_int = -1002;
pub const TW_EEVENT: c_int = -1003;
pub const TW_EUTF8: c_int = -1004;
pub const TW_ENONFINITE: c_int = -1005;
pub const TW_ETOOLONG: c_int = -1006;
pub const TW_ETOOBIG: c_int = -1007;
pub const TW_EJSON: c_int = -1008;
pub const TW_ETOOMANY: c_int = -1009;
pub const TW_EFORKED: c_int = -1010;
pub const TW_ESINK: c_int = -1011;
pub const TW_EZLIB: c_int = -1012;
pub const TW_EDROPPED: c_int = -1013;
pub const TW_EBUSY: c_int = -1014;

extern "C" {
    pub fn tw_version() -> *const c_char;
    pub fn tw_strerror(code: c_int) -> *const c_char;
    pub fn tw_err_name(code: c_int) -> *const c_char;

    pub fn tw_options_init_sized(opts: *mut tw_options, size: usize) -> c_int;
    pub fn tw_options_parse(
        opts: *mut tw_options,
        s: *const c_char,
        err: *mut c_char,
        errsize: usize,
    ) -> c_int;

    pub fn tw_open(
        path: *const c_char,
        opts: *const tw_options,
        error: *mut c_int,
    ) -> *mut tw_writer;
    pub fn tw_open_fd(fd: c_int, opts: *const tw_options, error: *mut c_int) -> *mut tw_writer;
    pub fn tw_flush(w: *mut tw_writer) -> c_int;
    pub fn tw_close(w: *mut tw_writer) -> c_int;
    pub fn tw_errcode(w: *const tw_writer) -> c_int;
    pub fn tw_get_stats_sized(w: *mut tw_writer, stats: *mut tw_stats, size: usize) -> c_int;

    pub fn tw_emit(w: *mut tw_writer, ev: *const tw_event) -> c_int;
    pub fn tw_now_ns() -> u64;

    pub fn tw_complete(
        w: *mut tw_writer,
        cat: *const c_char,
        name: *const c_char,
        ts_ns: u64,
        dur_ns: u64,
        args: *const tw_arg,
        nargs: usize,
    ) -> c_int;
    pub fn tw_begin(
        w: *mut tw_writer,
        cat: *const c_char,
        name: *const c_char,
        args: *const tw_arg,
        nargs: usize,
    ) -> c_int;
    pub fn tw_end(
        w: *mut tw_writer,
        cat: *const c_char,
        name: *const c_char,
        args: *const tw_arg,
        nargs: usize,
    ) -> c_int;
    pub fn tw_instant(
        w: *mut tw_writer,
        cat: *const c_char,
        name: *const c_char,
        scope: c_char,
        args: *const tw_arg,
        nargs: usize,
    ) -> c_int;
    pub fn tw_counter(
        w: *mut tw_writer,
        cat: *const c_char,
        name: *const c_char,
        series: *const tw_arg,
        nseries: usize,
    ) -> c_int;
    pub fn tw_async_begin(
        w: *mut tw_writer,
        cat: *const c_char,
        name: *const c_char,
        id: u64,
        args: *const tw_arg,
        nargs: usize,
    ) -> c_int;
    pub fn tw_async_instant(
        w: *mut tw_writer,
        cat: *const c_char,
        name: *const c_char,
        id: u64,
        args: *const tw_arg,
        nargs: usize,
    ) -> c_int;
    pub fn tw_async_end(
        w: *mut tw_writer,
        cat: *const c_char,
        name: *const c_char,
        id: u64,
        args: *const tw_arg,
        nargs: usize,
    ) -> c_int;
    pub fn tw_flow_start(
        w: *mut tw_writer,
        cat: *const c_char,
        name: *const c_char,
        id: u64,
    ) -> c_int;
    pub fn tw_flow_step(
        w: *mut tw_writer,
        cat: *const c_char,
        name: *const c_char,
        id: u64,
    ) -> c_int;
    pub fn tw_flow_end(
        w: *mut tw_writer,
        cat: *const c_char,
        name: *const c_char,
        id: u64,
    ) -> c_int;
    pub fn tw_process_name(w: *mut tw_writer, name: *const c_char) -> c_int;
    pub fn tw_thread_name(w: *mut tw_writer, name: *const c_char) -> c_int;
    pub fn tw_process_sort_index(w: *mut tw_writer, index: i64) -> c_int;
    pub fn tw_thread_sort_index(w: *mut tw_writer, index: i64) -> c_int;
    pub fn tw_process_labels(w: *mut tw_writer, labels: *const c_char) -> c_int;
    pub fn tw_mark(w: *mut tw_writer, cat: *const c_char, name: *const c_char) -> c_int;

    pub fn tw_global() -> *mut tw_writer;
    pub fn tw_global_status(message: *mut *const c_char) -> c_int;
}

// The layout of the LP64 ABI (x86_64, aarch64...), checked at compile
// time; tests/integration/layout.rs checks the fields against the library itself.
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<tw_options>() == 128);
    assert!(std::mem::size_of::<tw_stats>() == 80);
    assert!(std::mem::size_of::<tw_arg>() == 32);
    assert!(std::mem::size_of::<tw_event>() == 144);
};
