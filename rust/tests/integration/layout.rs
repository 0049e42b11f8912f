//! The hand-written C structs of src/ffi.rs against the linked library:
//! every tw_options field written by the library's own parser and read
//! back through ours, the struct sizes as the library sees them, and
//! tw_stats filled by the library.  (tw_event and tw_arg: every field is
//! written and read back from the file in tests/integration/phases.rs.)


use crate::common::{events_after_head, load, TempDir};
use std::mem::size_of;
use std::time::Duration;
use tracewriter::ffi::{self, tw_options, tw_stats};
use tracewriter::{Arg, Commit, Crash, Format, OnFull, Options, Sink, Writer};

/// A struct of the C API followed by room a newer header would use.
#[repr(C)]
struct WithRoom<T> {
    s: T,
    room: [u8; 64],
}

/// Call `fill` on a zeroed T followed by 64 bytes of 0xa5, passing the
/// size of both, as a program built against a newer, larger header does;
/// check that the C function returns 0 and zeroes the room past its own
/// struct (so past ours, if they agree).
fn fill_with_room<T>(fill: impl FnOnce(*mut T, usize) -> std::os::raw::c_int) -> T {
    let mut big: WithRoom<T> = unsafe { std::mem::zeroed() };
    big.room = [0xa5; 64];
    assert_eq!(fill(&mut big.s, size_of::<WithRoom<T>>()), 0);
    assert!(
        big.room.iter().all(|&b| b == 0),
        "the room past the struct is not zeroed"
    );
    big.s
}

/// The library fills at most its own sizeof(tw_options) and says how much
/// in struct_size: given more room than ours, it must fill exactly ours.
#[test]
fn tw_options_size_matches_the_library() {
    let o = fill_with_room(|p, size| unsafe { ffi::tw_options_init_sized(p, size) });
    assert_eq!(
        o.struct_size,
        size_of::<tw_options>(),
        "the library's tw_options is not ours"
    );
    // Ours exactly is accepted and named as ours.
    assert_eq!(Options::new().as_raw().struct_size, size_of::<tw_options>());
}

/// Every key of an options string, each with a value of its own, parsed
/// by the library into our struct: a field at the wrong offset reads back
/// wrong.  The Rust builder must produce the same fields.
#[test]
fn tw_options_fields_match_the_library() {
    let parsed = Options::parse(
        "buffer=12345,format=object,gzip=7,commit=background,buffers=5,chunk=8KiB,\
         flush=3ms,on_full=drop,crash=commit,rotate=5MiB,rotate_every=2s,keep=9,\
         utf8=reject,nonfinite=reject,long=reject,sync,max_string=100,max_event=5000",
    )
    .unwrap();
    let o = parsed.as_raw();
    assert_eq!(o.struct_size, size_of::<tw_options>());
    assert_eq!(o.buffer_size, 12345);
    assert_eq!(o.format, ffi::TW_FORMAT_OBJECT);
    assert_eq!(o.sink, ffi::TW_SINK_GZIP);
    assert_eq!(o.gzip_level, 7);
    assert_eq!(o.flags, 0x0f);
    assert_eq!(o.max_string, 100);
    assert_eq!(o.max_event, 5000);
    assert!(o.process_name.is_null());
    assert_eq!(o.file_mode, 0o644);
    assert_eq!(o.commit, ffi::TW_COMMIT_BACKGROUND);
    assert_eq!(o.buffer_count, 5);
    assert_eq!(o.mmap_chunk, 8192);
    assert_eq!(o.flush_interval_ns, 3_000_000);
    assert_eq!(o.on_full, ffi::TW_ON_FULL_DROP);
    assert_eq!(o.crash, ffi::TW_CRASH_COMMIT);
    assert_eq!(o.rotate_size, 5 << 20);
    assert_eq!(o.rotate_interval_ns, 2_000_000_000);
    assert_eq!(o.rotate_keep, 9);

    let built = Options::new()
        .buffer_size(12345)
        .format(Format::Object)
        .sink(Sink::Gzip)
        .gzip_level(7)
        .commit(Commit::Background)
        .buffer_count(5)
        .mmap_chunk(8192)
        .flush_interval(Duration::from_millis(3))
        .on_full(OnFull::Drop)
        .crash(Crash::Commit)
        .rotate_size(5 << 20)
        .rotate_interval(Duration::from_secs(2))
        .rotate_keep(9)
        .reject_invalid_utf8(true)
        .reject_nonfinite(true)
        .reject_long_strings(true)
        .sync(true)
        .max_string(100)
        .max_event(5000);
    assert_eq!(format!("{:?}", built.as_raw()), format!("{:?}", o));
    let off = built.clone().sync(false).reject_nonfinite(false);
    assert_eq!(off.as_raw().flags, 0x05);

    // The process name points into the Options that own it, clones too.
    let named = Options::new().process_name("srv");
    let copy = named.clone();
    drop(named);
    let name = unsafe { std::ffi::CStr::from_ptr(copy.as_raw().process_name) };
    assert_eq!(name.to_str().unwrap(), "srv");
}

/// tw_stats as the library fills it: given more room than ours, the rest
/// is zeroed, and each counter reads back where the library put it
/// (rotations, the last field, counted by a rotating writer).
#[test]
fn tw_stats_fields_match_the_library() {
    let dir = TempDir::new("layout");
    let path = dir.path("rot.json");
    let w = Writer::open(&path, &Options::new().rotate_size(4096).buffer_size(1024)).unwrap();
    let pad = "x".repeat(200);
    for i in 0..100 {
        w.complete("l", "ev", i, 1, &[Arg::new("pad", pad.as_str())])
            .unwrap();
    }
    w.flush().unwrap();

    let raw: tw_stats =
        fill_with_room(|p, size| unsafe { ffi::tw_get_stats_sized(w.as_ptr(), p, size) });
    let st = w.stats();
    assert_eq!(
        (raw.events, raw.rotations, raw.output_bytes),
        (st.events, st.rotations, st.output_bytes)
    );
    assert!(st.rotations >= 3, "{:?}", st);
    assert!(st.commits >= st.rotations);
    assert!(
        st.bytes > 100 * 200 && st.output_bytes > 100 * 200,
        "{:?}",
        st
    );
    assert_eq!(
        (
            st.rejected,
            st.strings_truncated,
            st.utf8_replaced,
            st.dropped,
            st.error
        ),
        (0, 0, 0, 0, 0)
    );
    // A size below the first published struct is refused.
    let mut small = tw_stats::default();
    assert_eq!(
        unsafe { ffi::tw_get_stats_sized(w.as_ptr(), &mut small, 8) },
        ffi::TW_EVERSION
    );
    w.close().unwrap();

    // Every file, the live one and the rotated ones, is a complete trace;
    // together they hold the 100 events.
    let mut total = 0;
    for entry in std::fs::read_dir(&dir.0).unwrap() {
        total += events_after_head(&load(&entry.unwrap().path())).len();
    }
    assert_eq!(total, 100);
    assert_eq!(ffi::TW_MAX_ARGS, 1024);
    assert_eq!(tracewriter::version().split('.').count(), 3);
}
