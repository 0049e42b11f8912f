//! The `serde` feature of the compat module: `push_with_args` with the
//! seed's `serde_json::Map`, `TraceEvent` reading every record the
//! library writes, and `read_events`.
#![cfg(feature = "serde")]


use crate::common::{load, load_all, parse, TempDir, J};
use serde_json::json;
use std::io;
use std::path::Path;
use tracewriter::compat::{read_events, TraceEvent, TraceWriter};
use tracewriter::{Arg, Event, Format, Options, Scope, Writer};

/// A number of microseconds as written ("1234.567") rounded to whole
/// microseconds by decimal arithmetic on the text, half away from zero.
fn rounded_us(text: &str) -> u64 {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let int: u64 = int.parse().unwrap();
    match frac.bytes().next() {
        Some(d) if d >= b'5' => int + 1,
        _ => int,
    }
}

/// A JSON value of the strict reader as serde_json's.
fn to_serde(j: &J) -> serde_json::Value {
    match j {
        J::Null => serde_json::Value::Null,
        J::Bool(b) => json!(b),
        J::Num(n) => serde_json::from_str(n).unwrap(),
        J::Str(s) => json!(s),
        J::Arr(a) => serde_json::Value::Array(a.iter().map(to_serde).collect()),
        J::Obj(o) => serde_json::Value::Object(
            o.iter().map(|(k, v)| (k.clone(), to_serde(v))).collect(),
        ),
    }
}

/// Every record of `path` read by the strict reader and as TraceEvent,
/// compared field by field.
fn check_every_record(path: &Path, events: &[TraceEvent]) {
    let all = load_all(path);
    assert_eq!(all.len(), events.len());
    for (j, e) in all.iter().zip(events) {
        assert_eq!(e.ph.to_string(), j.ph(), "{:?}", j);
        assert_eq!(e.name, j.name(), "{:?}", j);
        assert_eq!(e.cat, j.get("cat").map_or("", J::str), "{:?}", j);
        assert_eq!(e.ts, j.get("ts").map_or(0, |t| rounded_us(t.num())), "{:?}", j);
        assert_eq!(e.dur, j.get("dur").map_or(0, |t| rounded_us(t.num())), "{:?}", j);
        assert_eq!(i64::from(e.pid), j.at("pid").i64(), "{:?}", j);
        assert_eq!(i64::from(e.tid), j.at("tid").i64(), "{:?}", j);
        let args = j.get("args").map(to_serde).unwrap_or_else(|| json!({}));
        assert_eq!(serde_json::Value::Object(e.args.clone()), args, "{:?}", j);
    }
}

/// Write one record of every phase the library has.
fn every_phase(w: &Writer) {
    w.thread_name("serde reader").unwrap();
    w.complete("c", "x", 1_234_567_891, 1_500, &[Arg::new("n", 1), Arg::json("s", "[1,{\"a\":null}]")])
        .unwrap();
    w.complete("", "no cat", 2_000_000_499, 499, &[]).unwrap();
    w.begin("c", "b", &[]).unwrap();
    w.end("c", "b", &[]).unwrap();
    w.instant("c", "i", Scope::Global, &[Arg::new("why", "x\"y")]).unwrap();
    w.counter("c", "q", &[Arg::new("depth", 3), Arg::new("ratio", 0.5)]).unwrap();
    w.async_begin("c", "req", 7, &[]).unwrap();
    w.async_end("c", "req", 7, &[]).unwrap();
    w.flow_start("c", "f", 9).unwrap();
    w.flow_end("c", "f", 9).unwrap();
    w.mark("c", "m").unwrap(); // written as an instant
    w.emit(&Event::new('O', "obj").cat("c").id2_global(7)).unwrap();
}

#[test]
fn trace_event_reads_every_record_of_both_forms() {
    let dir = TempDir::new("serde-every");
    for (form, format) in [("array", Format::Array), ("object", Format::Object)] {
        let path = dir.path(&format!("{}.json", form));
        let w = Writer::open(&path, &Options::new().format(format)).unwrap();
        every_phase(&w);
        w.close().unwrap();
        let text = std::fs::read(&path).unwrap();
        let events: Vec<TraceEvent> = match format {
            Format::Array => serde_json::from_slice(&text).unwrap(),
            _ => {
                let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
                serde_json::from_value(v["traceEvents"].clone()).unwrap()
            }
        };
        let phases: String = events.iter().map(|e| e.ph).collect();
        assert_eq!(phases, "McMXXBEICbesfIO", "{}", form);
        check_every_record(&path, &events);
        // Fractions rounded to the nearest microsecond.
        assert_eq!((events[3].ts, events[3].dur), (1_234_568, 2));
        assert_eq!((events[4].ts, events[4].dur), (2_000_000, 0));
        // read_events: the complete events only, the same in both forms.
        let x = read_events(&path).unwrap();
        assert_eq!(x, events[3..5]);
    }
}

#[test]
fn push_with_args_takes_a_serde_json_map() {
    let dir = TempDir::new("serde-args");
    let path = dir.path("args.json");
    let w = TraceWriter::enabled(path.clone());
    let args = match json!({
        "tokens": 4, "big": u64::MAX, "neg": -3, "ratio": 0.25, "flag": true,
        "none": null, "name": "q_proj \"x\"\n", "shape": [4, 4096],
        "nested": {"a": [1.5, "s", null], "b": {}}
    }) {
        serde_json::Value::Object(m) => m,
        _ => unreachable!(),
    };
    // The call site of the issue, as written against the seed.
    w.push_with_args("matmul", "gemm", 1.5, 0, args.clone());
    w.push_with_args("empty", "gemm", 0.5, 0, serde_json::Map::new());
    w.flush().unwrap();
    let all = load(&path);
    let x: Vec<&J> = all.iter().filter(|e| e.ph() == "X").collect();
    assert_eq!(x.len(), 2);
    assert_eq!(x[0].name(), "matmul");
    assert_eq!(x[0].at("dur").num(), "1500.000");
    // serde_json's Map keeps keys sorted: the file has them in that order
    // and every value as given.
    let got = x[0].at("args");
    assert_eq!(got.keys(), args.keys().map(String::as_str).collect::<Vec<_>>());
    for (k, want) in &args {
        let have = to_serde(got.at(k));
        if let (Some(h), Some(w)) = (have.as_f64(), want.as_f64()) {
            assert_eq!(h, w, "{}", k); // u64::MAX is written as the nearest double
        } else {
            assert_eq!(&have, want, "{}", k);
        }
    }
    assert!(x[1].get("args").is_none());
    // And read back as the seed's records.
    let ev = read_events(&path).unwrap();
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[0].args["shape"], json!([4, 4096]));
    assert_eq!(ev[0].args["nested"], args["nested"]);
    assert_eq!(ev[0].dur, 1500);
}

#[test]
fn read_events_refuses_what_is_not_a_whole_trace() {
    let dir = TempDir::new("serde-read");
    let path = dir.path("t.json");
    let w = Writer::open(&path, &Options::new()).unwrap();
    w.complete("c", "x", 1_000, 1_000, &[]).unwrap();
    w.close().unwrap();
    let full = std::fs::read(&path).unwrap();
    assert!(parse(&full).is_ok());

    // Cut inside the last record: a crash inside a commit.
    let cut = dir.path("cut.json");
    std::fs::write(&cut, &full[..full.len() - 10]).unwrap();
    let err = read_events(&cut).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    assert!(err.to_string().contains("cut.json"), "{}", err);

    // A gzip file says so.
    let gz = dir.path("t.json.gz");
    let w = Writer::open(&gz, &Options::parse("gzip").unwrap()).unwrap();
    w.close().unwrap();
    let err = read_events(&gz).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    assert!(err.to_string().contains("gzip"), "{}", err);

    assert_eq!(read_events(dir.path("missing.json")).unwrap_err().kind(), io::ErrorKind::NotFound);

    // A negative time is no TraceEvent.
    let bad = r#"[{"ph":"X","name":"n","ts":-1,"pid":1,"tid":1}]"#;
    assert!(serde_json::from_str::<Vec<TraceEvent>>(bad).is_err());
}

/// The traits are written by hand: they keep what the seed's derive did.
#[test]
fn trace_event_serde_keeps_the_derived_shape() {
    let mut ev = TraceEvent::complete("n\"1", "c", 12, 1.5, 3);
    let text = serde_json::to_string(&ev).unwrap();
    assert_eq!(
        text,
        r#"{"name":"n\"1","cat":"c","ph":"X","ts":12,"dur":1500,"pid":0,"tid":3}"#
    );
    assert_eq!(serde_json::from_str::<TraceEvent>(&text).unwrap(), ev);
    ev.args.insert("k".into(), json!([1, "x"]));
    let text = serde_json::to_string(&ev).unwrap();
    assert!(text.ends_with(r#""tid":3,"args":{"k":[1,"x"]}}"#), "{}", text);
    assert_eq!(serde_json::from_str::<TraceEvent>(&text).unwrap(), ev);
    // As a sequence, in the fields' order; args may be left out.
    let seq: TraceEvent = serde_json::from_str(r#"["n\"1","c","X",12,1500,0,3]"#).unwrap();
    assert_eq!(seq, TraceEvent { args: serde_json::Map::new(), ..ev.clone() });
    assert!(serde_json::from_str::<TraceEvent>(r#"["n","c","X"]"#).is_err());

    // Only ph is required; other keys skipped, whatever their value.
    let min: TraceEvent =
        serde_json::from_str(r#"{"id":"0x1","ph":"M","s":{"a":[1]},"ts":2.5}"#).unwrap();
    assert_eq!((min.ph, min.name.as_str(), min.ts, min.dur), ('M', "", 3, 0));
    let err = serde_json::from_str::<TraceEvent>(r#"{"name":"x","ts":1}"#).unwrap_err();
    assert!(err.to_string().contains("missing field `ph`"), "{}", err);
    let err = serde_json::from_str::<TraceEvent>(r#"{"ph":"X","ts":1,"ts":2}"#).unwrap_err();
    assert!(err.to_string().contains("duplicate field `ts`"), "{}", err);
    let err = serde_json::from_str::<TraceEvent>(r#"{"ph":"X","ts":-1}"#).unwrap_err();
    assert!(err.to_string().contains("negative time -1"), "{}", err);
    assert!(serde_json::from_str::<TraceEvent>(r#"{"ph":"XY"}"#).is_err());
}

/// read_events takes traceEvents wherever it stands among the members.
#[test]
fn read_events_finds_trace_events_among_members() {
    let dir = TempDir::new("serde-members");
    let path = dir.path("m.json");
    let x = r#"{"name":"k","cat":"kernel","ph":"X","ts":10.4,"dur":2,"pid":1,"tid":7}"#;
    std::fs::write(
        &path,
        format!(
            r#"{{"schemaVersion":1,"deviceProperties":[{{"id":0}}],"traceEvents":[{},{{"ph":"i","name":"j","ts":1}}],"traceName":"t","baseTimeNanoseconds":1700000000000000000}}"#,
            x
        ),
    )
    .unwrap();
    let ev = read_events(&path).unwrap();
    assert_eq!(ev, vec![TraceEvent { ts: 10, dur: 2, pid: 1, ..TraceEvent::complete("k", "kernel", 0, 0.0, 7) }]);
    std::fs::write(&path, r#"{"traceName":"t"}"#).unwrap();
    let err = read_events(&path).unwrap_err();
    assert!(err.to_string().contains("missing field `traceEvents`"), "{}", err);
    std::fs::write(&path, format!(r#"{{"traceEvents":[{}],"traceEvents":[]}}"#, x)).unwrap();
    assert!(read_events(&path).is_err());
}
