//! Errors: codes, messages and details from the library; bad input
//! refused before a byte is written, the file still strictly valid; the
//! sticky I/O error.


use crate::common::{events_after_head, load, TempDir, J};
use std::io;
use tracewriter::{code, Arg, Error, Event, Options, Scope, Sink, Value, Writer};

#[test]
fn open_in_a_missing_directory_names_the_path() {
    let dir = TempDir::new("errors");
    let path = dir.path("no/such/dir/trace.json");
    let err = Writer::open(&path, &Options::new()).unwrap_err();
    assert_eq!(err.code(), -2);
    assert_eq!(err.raw_os_error(), Some(2));
    assert_eq!(err.name(), "ENOENT");
    assert_eq!(
        err.message(),
        io::Error::from_raw_os_error(2)
            .to_string()
            .split(" (os error")
            .next()
            .unwrap()
    );
    assert_eq!(err.detail(), Some(path.to_str().unwrap()));
    let shown = err.to_string();
    assert!(
        shown.contains(path.to_str().unwrap()) && shown.contains(err.message()),
        "{}",
        shown
    );
    assert!(format!("{:?}", err).contains("ENOENT"));
    let as_io = io::Error::from(err.clone());
    assert_eq!(as_io.kind(), io::ErrorKind::NotFound);
    // Usable with ? in any error-returning code.
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err);
    assert!(boxed.to_string().contains("trace.json"));
}

#[test]
fn bad_options_name_the_key() {
    let err = Options::parse("buffer=64KiB,bogus=1").unwrap_err();
    assert_eq!(err.code(), code::EOPTION);
    assert_eq!(err.name(), "TW_EOPTION");
    assert_eq!(err.message(), "invalid option key or value");
    assert!(err.detail().unwrap().contains("bogus"), "{:?}", err);
    assert_eq!(err.raw_os_error(), None);
    assert_eq!(io::Error::from(err).kind(), io::ErrorKind::Other);

    let err = Options::parse("gzip=10").unwrap_err();
    assert_eq!(err.code(), code::EOPTION);
    assert!(err.to_string().contains("gzip"), "{}", err);
    assert_eq!(Options::parse("a\0b").unwrap_err().code(), code::EOPTION);

    // Values set in Rust are checked when the writer opens.
    let dir = TempDir::new("opt");
    for opts in [
        Options::new().buffer_size(1),
        Options::new().gzip_level(0),
        Options::new().process_name("nul\0inside"),
        Options::new().buffer_count(99),
    ] {
        let err = Writer::open(dir.path("x.json"), &opts).unwrap_err();
        assert_eq!(err.code(), code::EOPTION, "{:?} for {:?}", err, opts);
    }
}

/// Each bad event returns its code, writes nothing, and the writer goes
/// on: the file reads back strictly with only the good events.
#[test]
fn bad_events_are_refused_and_leave_the_file_valid() {
    let dir = TempDir::new("badev");
    let path = dir.path("bad.json");
    let w = Writer::open(&path, &Options::new()).unwrap();
    w.instant("ok", "first", Scope::Thread, &[]).unwrap();

    let expect = |r: Result<(), Error>, c: i32| {
        let err = r.expect_err("a bad event was accepted");
        assert_eq!(err.code(), c, "{:?}", err);
    };
    expect(
        w.counter("c", "queue", &[Arg::new("depth", "three")]),
        code::EEVENT,
    );
    expect(
        w.instant("c", "raw", Scope::Thread, &[Arg::json("j", "{\"a\":}")]),
        code::EJSON,
    );
    expect(
        w.instant("c", "raw", Scope::Thread, &[Arg::json("j", "[1] 2")]),
        code::EJSON,
    );
    expect(w.emit(&Event::new('b', "no id").cat("c")), code::EEVENT);
    expect(w.emit(&Event::new('\u{e9}', "not a letter")), code::EEVENT);
    let many: Vec<Arg> = (0..1025).map(|_| Arg::new("k", 1)).collect();
    expect(w.instant("c", "many", Scope::Thread, &many), code::ETOOMANY);
    let rejected_by_library = w.stats().rejected;

    // Strings C would cut at a NUL byte are refused in Rust.
    let err = w.instant("c", "a\0b", Scope::Thread, &[]).unwrap_err();
    assert_eq!(err.code(), code::EEVENT);
    assert!(err.to_string().contains("name"), "{}", err);
    let err = w.instant("c\0", "a", Scope::Thread, &[]).unwrap_err();
    assert!(err.to_string().contains("cat"), "{}", err);
    let err = w
        .instant("c", "a", Scope::Thread, &[Arg::new("k\0", 1)])
        .unwrap_err();
    assert!(err.to_string().contains("argument"), "{}", err);
    let err = w
        .emit(&Event::new('O', "o").id(1).cname("x\0"))
        .unwrap_err();
    assert!(err.to_string().contains("cname"), "{}", err);

    // Many arguments with long names (the heap path) are fine.
    let names: Vec<String> = (0..100)
        .map(|i| format!("argument_number_{:03}", i))
        .collect();
    let args: Vec<Arg> = names
        .iter()
        .enumerate()
        .map(|(i, n)| Arg::new(n, i))
        .collect();
    w.instant("ok", "many", Scope::Thread, &args).unwrap();
    w.instant("ok", "last", Scope::Thread, &[]).unwrap();
    assert!(w.error().is_none());
    assert!(rejected_by_library >= 5, "rejected {}", rejected_by_library);
    w.close().unwrap();

    let all = load(&path);
    let ev = events_after_head(&all);
    let names: Vec<&str> = ev.iter().map(J::name).collect();
    assert_eq!(names, ["first", "many", "last"]);
    let a = ev[1].at("args");
    assert_eq!(a.keys().len(), 100);
    assert_eq!(a.at("argument_number_099").i64(), 99);
}

#[test]
fn strict_options_refuse_what_the_defaults_replace() {
    let dir = TempDir::new("strict");
    let long = "\u{e9}".repeat(40); // 80 bytes

    // Defaults: NaN -> null, long string cut on a UTF-8 boundary, invalid
    // UTF-8 replaced.
    let path = dir.path("lenient.json");
    let w = Writer::open(&path, &Options::new().max_string(64)).unwrap();
    w.instant(
        "",
        "nan",
        Scope::Thread,
        &[Arg::new("x", f64::NAN), Arg::new("y", f64::INFINITY)],
    )
    .unwrap();
    w.instant("", "long", Scope::Thread, &[Arg::new("s", long.as_str())])
        .unwrap();
    w.instant("", "bytes", Scope::Thread, &[Arg::new("b", &b"a\xc3"[..])])
        .unwrap();
    let st = w.stats();
    assert_eq!(
        (st.strings_truncated, st.utf8_replaced, st.rejected),
        (1, 1, 0)
    );
    w.close().unwrap();
    let all = load(&path);
    let ev = events_after_head(&all);
    assert_eq!(ev[0].at("args").at("x"), &J::Null);
    assert_eq!(ev[0].at("args").at("y"), &J::Null);
    assert_eq!(ev[1].at("args").at("s").str(), "\u{e9}".repeat(32));
    assert_eq!(ev[2].at("args").at("b").str(), "a\u{fffd}");

    let path = dir.path("strict.json");
    let opts = Options::new()
        .max_string(64)
        .reject_nonfinite(true)
        .reject_long_strings(true)
        .reject_invalid_utf8(true);
    let w = Writer::open(&path, &opts).unwrap();
    let nan = w
        .instant("", "nan", Scope::Thread, &[Arg::new("x", f64::NAN)])
        .unwrap_err();
    assert_eq!(nan.code(), code::ENONFINITE);
    let too_long = w
        .instant("", "long", Scope::Thread, &[Arg::new("s", long.as_str())])
        .unwrap_err();
    assert_eq!(too_long.code(), code::ETOOLONG);
    let utf8 = w
        .instant(
            "",
            "bytes",
            Scope::Thread,
            &[Arg {
                name: "b",
                value: Value::Bytes(b"\xff"),
            }],
        )
        .unwrap_err();
    assert_eq!(utf8.code(), code::EUTF8);
    assert_eq!(w.stats().rejected, 3);
    w.instant("", "ok", Scope::Thread, &[Arg::new("x", 1.25)])
        .unwrap();
    w.close().unwrap();
    let all = load(&path);
    let ev = events_after_head(&all);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].at("args").at("x").f64(), 1.25);
}

#[test]
fn a_pipe_cannot_take_the_mmap_sink() {
    let (mut reader, writer) = pipe();
    let err = Writer::open_fd(writer, &Options::new().sink(Sink::Mmap)).unwrap_err();
    assert_eq!(err.code(), code::ESINK);
    // The descriptor was the writer's to close: the reader sees the end.
    assert!(reader.wait().unwrap().success());
}

/// A pipe from the shell: `cat` reading nothing keeps the read end open.
fn pipe() -> (std::process::Child, std::process::ChildStdin) {
    use std::process::{Command, Stdio};
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

/// /dev/full: the head is committed at open, so the open fails with
/// ENOSPC; if a later version defers the head, the first flush must fail
/// and the error stay sticky.
#[test]
fn a_full_device_is_a_sticky_error() {
    match Writer::open("/dev/full", &Options::new()) {
        Err(err) => {
            assert_eq!(err.raw_os_error(), Some(28), "{:?}", err);
            assert_eq!(
                io::Error::from(err).kind(),
                io::Error::from_raw_os_error(28).kind()
            );
        }
        Ok(w) => {
            w.instant("", "x", Scope::Thread, &[]).ok();
            let err = w.flush().unwrap_err();
            assert_eq!(err.raw_os_error(), Some(28));
            assert_eq!(w.error(), Some(err.clone()));
            assert_eq!(w.instant("", "y", Scope::Thread, &[]).unwrap_err(), err);
            assert_eq!(w.stats().error, err.code());
            assert_eq!(w.close().unwrap_err(), err);
        }
    }
}
