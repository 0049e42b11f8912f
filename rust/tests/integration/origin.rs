//! The seed's four unit tests (ferrum's `trace` module), as an engine that
//! switched to this crate keeps them: the same calls and assertions, with
//! only the import changed from the seed's module to `tracewriter::compat`.
//!
//! One assertion had to change, in the test that parses the whole file:
//! a tracewriter file holds two records before the first event (the
//! `process_name` metadata record and the clock record, `"ph":"c"`), so
//! the file parses as four records where the seed's held two.  The test
//! checks those two records exactly; `compat::read_events` gives the two
//! events alone (rust/README.md, "A drop-in").
#![cfg(feature = "serde")]

use tracewriter::compat::*;

#[test]
fn complete_event_round_trip() {
    let e = TraceEvent::complete("rms_norm", "norm", 1_000_000, 0.123, 1);
    assert_eq!(e.ph, 'X');
    assert_eq!(e.dur, 123); // 0.123 ms is 123 µs
    let text = serde_json::to_string(&e).unwrap();
    let back: TraceEvent = serde_json::from_str(&text).unwrap();
    assert_eq!(back.name, "rms_norm");
    assert_eq!(back.dur, 123);
}

#[test]
fn disabled_writer_is_noop() {
    let w = TraceWriter::disabled();
    w.push("rms_norm", "norm", 1.0, 0);
    assert!(!w.is_enabled());
    w.flush().unwrap();
}

#[test]
fn from_env_vars_empty_is_disabled_and_a_path_enabled() {
    let dir = scratch_dir("env");
    assert!(!TraceWriter::from_env_vars([("FERRUM_TRACE_OUT", "")]).is_enabled());
    let path = dir.join("trace.json");
    let w = TraceWriter::from_env_vars([("FERRUM_TRACE_OUT", path.to_str().unwrap())]);
    assert!(w.is_enabled());
    drop(w);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn enabled_writer_flushes_to_file() {
    let dir = scratch_dir("flush");
    let path = dir.join("trace.json");
    let w = TraceWriter::enabled(path.clone());
    w.push("rms_norm", "norm", 1.0, 1);
    w.push("rope", "attn", 0.5, 1);
    w.flush().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let events: Vec<TraceEvent> = serde_json::from_str(&text).unwrap();
    // The seed's file held the two events alone: here the process_name
    // record and the clock record come first, and nothing else.
    assert_eq!(events.len(), 2 + 2);
    let pid = std::process::id();
    assert_eq!((events[0].ph, events[0].name.as_str()), ('M', "process_name"));
    assert_eq!((events[1].ph, events[1].name.as_str()), ('c', "clock_sync"));
    for head in &events[..2] {
        assert_eq!(head.pid, pid);
        assert_eq!(head.cat, "");
        assert_eq!(head.dur, 0);
    }
    assert!(events[1].args.contains_key("realtime_ns"));
    let events = &events[2..];
    assert_eq!(events[0].name, "rms_norm");
    assert_eq!(events[1].cat, "attn");
    // What the compat module offers instead: the complete events alone.
    let read = read_events(&path).unwrap();
    assert_eq!(read, events);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh directory under the system's temporary directory, as the
/// seed's tests made one.
fn scratch_dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "tw-origin-{}-{}-{}",
        tag,
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}
