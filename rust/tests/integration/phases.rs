//! Every phase of the format written through the safe API and read back
//! through a strict JSON reader, field by field; typed arguments; the
//! options reaching the file.

use crate::common;

use crate::common::{events_after_head, load, parse, TempDir, J};
use tracewriter::{now_ns, Arg, Event, Format, Options, Scope, Sink, Value, Writer};

/// The kernel id of the calling thread, as the library writes by default.
fn gettid() -> i64 {
    let link = std::fs::read_link("/proc/thread-self").expect("/proc/thread-self");
    link.to_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn pid() -> i64 {
    i64::from(std::process::id())
}

/// Check the fields every event has: ph, name, cat (absent when None),
/// pid and tid (the defaults unless given).
fn assert_common(e: &J, ph: &str, name: &str, cat: Option<&str>) {
    assert_eq!(e.ph(), ph, "{:?}", e);
    assert_eq!(e.name(), name, "{:?}", e);
    assert_eq!(e.get("cat").map(J::str), cat, "{:?}", e);
    assert_eq!(e.at("pid").i64(), pid(), "{:?}", e);
    assert_eq!(e.at("tid").i64(), gettid(), "{:?}", e);
}

/// A ts taken by the library "now": between the two clock reads.
fn assert_now(e: &J, before: u64, after: u64) {
    let ts = e.at("ts").ns();
    // The file has whole nanoseconds; the clock reads may fall anywhere.
    assert!(
        ts >= before && ts <= after,
        "ts {} outside [{}, {}] in {:?}",
        ts,
        before,
        after,
        e
    );
}

fn assert_args(e: &J, want: &[(&str, J)]) {
    let args = e.at("args");
    let keys: Vec<&str> = want.iter().map(|(k, _)| *k).collect();
    assert_eq!(args.keys(), keys, "order of args in {:?}", e);
    for (k, v) in want {
        assert_eq!(args.at(k), v, "arg {:?} of {:?}", k, e);
    }
}

fn num(s: &str) -> J {
    J::Num(s.to_string())
}

fn s(v: &str) -> J {
    J::Str(v.to_string())
}

#[test]
fn strict_reader_refuses_what_json_forbids() {
    for bad in [
        "",
        " ",
        "[1,]",
        "{\"a\":1,}",
        "[1,,2]",
        "tru",
        "01",
        "1.",
        "1e",
        "-",
        "[1] x",
        "{}}",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"a\nb\"",
        "\"\\x\"",
        "{\"a\"}",
        "{\"a\":1,\"a\":2}",
        "[\"\u{1}\"]",
        "NaN",
        "[",
        "\"abc",
    ] {
        assert!(parse(bad.as_bytes()).is_err(), "accepted {:?}", bad);
    }
    assert!(parse(b"\"\xff\"").is_err());
    let v = parse(b" [1, -2.5e3, true, null, {\"k\": \"\\u00e9\\ud83d\\ude00\\n\"}] ").unwrap();
    assert_eq!(
        v,
        J::Arr(vec![
            num("1"),
            num("-2.5e3"),
            J::Bool(true),
            J::Null,
            J::Obj(vec![("k".into(), s("\u{e9}\u{1f600}\n"))]),
        ])
    );
}

#[test]
fn every_phase_reads_back_field_by_field() {
    let dir = TempDir::new("phases");
    let path = dir.path("all.json");
    let w = Writer::open(&path, &Options::new().process_name("rust \"phases\"")).unwrap();

    let before = now_ns();
    w.thread_name("main \u{e9}").unwrap();
    w.process_sort_index(-3).unwrap();
    w.thread_sort_index(7).unwrap();
    w.process_labels("a,b").unwrap();

    let typed = [
        Arg::new("i", i64::MIN),
        Arg::new("u", u64::MAX),
        Arg::new("f", 0.1),
        Arg::new("neg", -2.5f32),
        Arg::new("t", true),
        Arg::new("s", "q\"b\\n\n\t\u{1}\u{e9}\u{1f600}\0z"),
        Arg::null("n"),
        Arg::json("j", "{\"a\": [1, 2.5, \"x\"],\n \"b\": null}"),
        Arg::new("bytes", &b"ok\xffend"[..]),
        Arg::new("opt", None::<i32>),
        Arg::new("small", 7u8),
        Arg::new("empty", ""),
    ];
    w.complete("cat1", "x \"quoted\"", 1_000_000_123, 2_500, &typed)
        .unwrap();

    let span_start;
    {
        let span = w.span("cat2", "span");
        span_start = span.start_ns();
    }
    w.begin("c", "b", &[Arg::new("k", 1)]).unwrap();
    w.end("c", "b", &[]).unwrap();
    w.instant("c", "it", Scope::Thread, &[]).unwrap();
    w.instant("", "ip", Scope::Process, &[]).unwrap();
    w.instant("c", "ig", Scope::Global, &[Arg::new("why", "test")])
        .unwrap();
    w.counter("c", "queue", &[Arg::new("depth", 3), Arg::new("load", 0.5)])
        .unwrap();
    w.async_begin("c", "req", 0x1a, &[Arg::new("url", "/")])
        .unwrap();
    w.async_instant("c", "req", 0x1a, &[]).unwrap();
    w.async_end("c", "req", 0x1a, &[]).unwrap();
    w.flow_start("c", "flow", 5).unwrap();
    w.flow_step("c", "flow", 5).unwrap();
    w.flow_end("c", "flow", 5).unwrap();
    w.mark("c", "mark").unwrap();
    let after = now_ns();

    // tw_emit, every optional field.
    let xargs = [Arg::new("a", 1)];
    w.emit(
        &Event::new('X', "full")
            .cat("e")
            .ts(5_000_001)
            .dur(999)
            .tts(7_000)
            .tdur(1)
            .pid(42)
            .tid(4_294_967_295)
            .id2_local(0xabc)
            .bind_id(u64::MAX)
            .flow_in()
            .flow_out()
            .cname("good")
            .args(&xargs),
    )
    .unwrap();
    w.emit(
        &Event::new('i', "scoped")
            .ts(10)
            .scope(Scope::Process)
            .id2_global(3)
            .id_scope("sc\"x"),
    )
    .unwrap();
    w.emit(&Event::new('t', "step").cat("f").ts(11).id(0).bp_enclosing())
        .unwrap();
    w.emit(&Event::new('N', "obj").ts(12).id(9)).unwrap();
    w.emit(
        &Event::new('O', "obj")
            .ts(13)
            .id(9)
            .args(&[Arg::json("snapshot", "{\"v\":1}")]),
    )
    .unwrap();
    w.emit(&Event::new('D', "obj").ts(14).id(9)).unwrap();
    w.emit(
        &Event::new('c', "clock_sync")
            .ts(15)
            .args(&[Arg::new("sync_id", "abc")]),
    )
    .unwrap();
    w.emit(
        &Event::new('M', "thread_name")
            .tid(99)
            .args(&[Arg::new("name", "other")]),
    )
    .unwrap();
    w.close().unwrap();

    let all = load(&path);
    assert_eq!(all[0].at("args").at("name").str(), "rust \"phases\"");
    let ev = events_after_head(&all);
    let mut it = ev.iter();
    let mut next = || it.next().expect("an event is missing");

    let e = next();
    assert_common(e, "M", "thread_name", None);
    assert_args(e, &[("name", s("main \u{e9}"))]);
    let e = next();
    assert_common(e, "M", "process_sort_index", None);
    assert_args(e, &[("sort_index", num("-3"))]);
    let e = next();
    assert_common(e, "M", "thread_sort_index", None);
    assert_args(e, &[("sort_index", num("7"))]);
    let e = next();
    assert_common(e, "M", "process_labels", None);
    assert_args(e, &[("labels", s("a,b"))]);

    let e = next();
    assert_common(e, "X", "x \"quoted\"", Some("cat1"));
    assert_eq!(e.at("ts").ns(), 1_000_000_123);
    assert_eq!(e.at("dur").ns(), 2_500);
    let a = e.at("args");
    assert_eq!(
        a.keys(),
        ["i", "u", "f", "neg", "t", "s", "n", "j", "bytes", "opt", "small", "empty"]
    );
    assert_eq!(a.at("i"), &num("-9223372036854775808"));
    // Above i64::MAX, a u64 is written as the nearest double.
    assert_eq!(a.at("u"), &num("1.8446744073709552e+19"));
    assert_eq!(a.at("f").f64().to_bits(), 0.1f64.to_bits());
    assert_eq!(a.at("neg").f64(), -2.5);
    assert_eq!(a.at("t"), &J::Bool(true));
    assert_eq!(a.at("s"), &s("q\"b\\n\n\t\u{1}\u{e9}\u{1f600}\0z"));
    assert_eq!(a.at("n"), &J::Null);
    assert_eq!(
        a.at("j"),
        &parse(b"{\"a\":[1,2.5,\"x\"],\"b\":null}").unwrap()
    );
    assert_eq!(a.at("bytes"), &s("ok\u{fffd}end"));
    assert_eq!(a.at("opt"), &J::Null);
    assert_eq!(a.at("small"), &num("7"));
    assert_eq!(a.at("empty"), &s(""));

    let e = next();
    assert_common(e, "X", "span", Some("cat2"));
    assert_eq!(e.at("ts").ns(), span_start);
    assert!(span_start + e.at("dur").ns() <= after);

    let e = next();
    assert_common(e, "B", "b", Some("c"));
    assert_now(e, before, after);
    assert_args(e, &[("k", num("1"))]);
    let e = next();
    assert_common(e, "E", "b", Some("c"));
    assert_now(e, before, after);
    for (name, cat, scope) in [
        ("it", Some("c"), "t"),
        ("ip", None, "p"),
        ("ig", Some("c"), "g"),
    ] {
        let e = next();
        assert_common(e, "I", name, cat);
        assert_now(e, before, after);
        assert_eq!(e.at("s").str(), scope);
    }
    // "ig" had args.
    let e = next();
    assert_common(e, "C", "queue", Some("c"));
    assert_now(e, before, after);
    assert_args(e, &[("depth", num("3")), ("load", num("0.5"))]);
    for ph in ["b", "n", "e"] {
        let e = next();
        assert_common(e, ph, "req", Some("c"));
        assert_now(e, before, after);
        assert_eq!(e.at("id").str(), "0x1a");
        if ph == "b" {
            assert_args(e, &[("url", s("/"))]);
        }
    }
    for ph in ["s", "t", "f"] {
        let e = next();
        assert_common(e, ph, "flow", Some("c"));
        assert_now(e, before, after);
        assert_eq!(e.at("id").str(), "0x5");
        assert_eq!(
            e.get("bp").map(J::str),
            if ph == "f" { Some("e") } else { None }
        );
    }
    let e = next();
    assert_common(e, "I", "mark", Some("c")); // a global instant
    assert_eq!(e.at("s").str(), "g");
    assert_now(e, before, after);

    let e = next();
    let mut keys = e.keys();
    keys.sort_unstable();
    let mut want = [
        "ph", "name", "cat", "ts", "dur", "tts", "tdur", "pid", "tid", "args", "id2", "bind_id",
        "flow_in", "flow_out", "cname",
    ];
    want.sort_unstable();
    assert_eq!(keys, want);
    assert_eq!(e.ph(), "X");
    assert_eq!(e.at("cat").str(), "e");
    assert_eq!(e.at("ts").ns(), 5_000_001);
    assert_eq!(e.at("dur").ns(), 999);
    assert_eq!(e.at("tts").ns(), 7_000);
    assert_eq!(e.at("tdur").ns(), 1);
    assert_eq!(e.at("pid").i64(), 42);
    assert_eq!(e.at("tid").i64(), 4_294_967_295);
    assert_eq!(e.at("id2").at("local").str(), "0xabc");
    assert!(e.get("id").is_none());
    assert_eq!(e.at("bind_id").str(), "0xffffffffffffffff");
    assert_eq!(e.at("flow_in"), &J::Bool(true));
    assert_eq!(e.at("flow_out"), &J::Bool(true));
    assert_eq!(e.at("cname").str(), "good");
    assert_args(e, &[("a", num("1"))]);

    let e = next();
    assert_common(e, "I", "scoped", None);
    assert_eq!(e.at("ts").ns(), 10);
    assert_eq!(e.at("s").str(), "p");
    assert_eq!(e.at("id2").at("global").str(), "0x3");
    assert_eq!(e.at("scope").str(), "sc\"x");
    let e = next();
    assert_common(e, "t", "step", Some("f"));
    assert_eq!(e.at("id").str(), "0x0");
    assert_eq!(e.at("bp").str(), "e");
    for (ph, ts) in [("N", 12), ("O", 13), ("D", 14)] {
        let e = next();
        assert_common(e, ph, "obj", None);
        assert_eq!(e.at("ts").ns(), ts);
        assert_eq!(e.at("id").str(), "0x9");
        if ph == "O" {
            assert_eq!(e.at("args").at("snapshot"), &parse(b"{\"v\":1}").unwrap());
        }
    }
    let e = next();
    assert_common(e, "c", "clock_sync", None);
    assert_eq!(e.at("ts").ns(), 15);
    assert_args(e, &[("sync_id", s("abc"))]);
    let e = next();
    assert_eq!(e.ph(), "M");
    assert_eq!(e.at("tid").i64(), 99);
    assert_args(e, &[("name", s("other"))]);
    assert!(it.next().is_none(), "more events than written");
}

/// Each sink and both layouts hold the same events after close, and after
/// each flush every event emitted before it.
#[test]
fn every_sink_and_format_reads_back() {
    let dir = TempDir::new("sinks");
    let cases = [
        (
            "file.json",
            Options::new().sink(Sink::File).buffer_size(256),
        ),
        ("object.json", Options::new().format(Format::Object)),
        ("mmap.json", Options::parse("mmap,chunk=4KiB").unwrap()),
        (
            "parsed.json",
            "buffer=1KiB,commit=background,buffers=2".parse().unwrap(),
        ),
    ];
    for (name, opts) in cases.iter() {
        let path = dir.path(name);
        let w = Writer::open(&path, opts).unwrap();
        for round in 0..3i64 {
            for i in 0..50i64 {
                let n = round * 50 + i;
                w.complete(
                    "sink",
                    "ev",
                    1000 + n as u64,
                    5,
                    &[Arg::new("n", n), Arg::new("pad", "x".repeat(40).as_str())],
                )
                .unwrap();
            }
            w.flush().unwrap();
            let ev = load(&path);
            let ev = events_after_head(&ev);
            assert_eq!(
                ev.len() as i64,
                (round + 1) * 50,
                "{} after flush {}",
                name,
                round
            );
            for (n, e) in ev.iter().enumerate() {
                assert_eq!(e.at("args").at("n").i64(), n as i64, "{}", name);
                assert_eq!(e.at("ts").ns(), 1000 + n as u64);
            }
        }
        let stats = w.stats();
        // Ours, and the library's own records: process_name, and the
        // clock record that load leaves out.
        let records = load(&path).len() as u64 + 1;
        assert!(
            stats.events >= 150 && stats.events <= records,
            "{}: {:?}",
            name,
            stats
        );
        assert_eq!(stats.error, 0);
        assert!(stats.output_bytes > 0);
        w.close().unwrap();
        assert_eq!(events_after_head(&load(&path)).len(), 150, "{}", name);
        if *name == "object.json" {
            let doc = parse(&std::fs::read(&path).unwrap()).unwrap();
            assert!(matches!(doc, J::Obj(_)), "format=object wrote {:?}", doc);
        }
    }
}

/// Value converts from the Rust types an argument is made of.
#[test]
fn values_convert_from_rust_types() {
    let text = String::from("owned");
    assert_eq!(Value::from(-1i8), Value::Int(-1));
    assert_eq!(Value::from(usize::MAX), Value::UInt(usize::MAX as u64));
    assert_eq!(Value::from(1.5f32), Value::Float(1.5));
    assert_eq!(Value::from(&text), Value::Str("owned"));
    assert_eq!(Value::from(Some("x")), Value::Str("x"));
    assert_eq!(Value::from(None::<bool>), Value::Null);
    assert_eq!(
        Arg::from(("k", false)),
        Arg {
            name: "k",
            value: Value::Bool(false)
        }
    );
}

/// A stream on a pipe: valid JSON once the writer is closed.
#[test]
fn pipe_streams_and_ends_at_close() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut cat = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run cat");
    let stdin = cat.stdin.take().unwrap();
    let w = Writer::open_fd(stdin, &Options::new()).unwrap();
    w.instant("p", "piped", Scope::Thread, &[Arg::new("n", 1)])
        .unwrap();
    w.close().unwrap(); // closes the pipe: cat ends
    let mut out = Vec::new();
    cat.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    assert!(cat.wait().unwrap().success());
    let doc = parse(&out).unwrap();
    match doc {
        J::Arr(ev) => {
            let ev = common::without_clock(ev);
            let ev = events_after_head(&ev);
            assert_eq!(ev.len(), 1);
            assert_eq!(ev[0].name(), "piped");
        }
        other => panic!("not an array: {:?}", other),
    }
}
