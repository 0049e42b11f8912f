//! The compat module: the seed's TraceWriter surface, its output read back
//! field by field, and where it differs on purpose (flush keeps earlier
//! events; the process-wide writer of TRACEWRITER_OUT).


use crate::common::{self, events_after_head, load, parse, TempDir, J};
use std::borrow::Cow;
use std::io;
use std::path::Path;
use std::process::Command;
use tracewriter::compat::{flush_global_trace, global_trace, Map, Number, TraceWriter, Value};
use tracewriter::now_ns;

/// The X events of a compat trace, checked as the seed wrote them: name,
/// cat, tid, and a ts that ends at the push.
fn read_x(path: &Path) -> Vec<J> {
    let all = load(path);
    let ev = events_after_head(&all).to_vec();
    for e in &ev {
        assert_eq!(e.ph(), "X", "{:?}", e);
        assert_eq!(e.at("pid").i64(), i64::from(std::process::id()));
    }
    ev
}

#[test]
fn disabled_writer_is_a_no_op() {
    let w = TraceWriter::disabled();
    w.push("rms_norm", "norm", 1.0, 0);
    w.push_with_args("x", "y", 1.0, 0, Map::new());
    assert!(!w.is_enabled());
    assert!(w.writer().is_none());
    w.flush().unwrap();
    assert_eq!(w.stats(), tracewriter::Stats::default());
}

#[test]
fn from_env_vars_reads_the_snapshot() {
    let dir = TempDir::new("envvars");
    let path = dir.path("env.json");
    let p = path.to_str().unwrap();
    assert!(!TraceWriter::from_env_vars([("TRACEWRITER_OUT", ""), ("OTHER", "1")]).is_enabled());
    assert!(!TraceWriter::from_env_vars(Vec::<(String, String)>::new()).is_enabled());

    let w = TraceWriter::from_env_vars([
        ("TRACEWRITER_OUT", p),
        ("TRACEWRITER_OPTIONS", "buffer=1KiB"),
    ]);
    assert!(w.is_enabled());
    w.push("a", "b", 0.5, 3);
    drop(w); // closes
    let ev = read_x(&path);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].name(), "a");

    // Bad options: disabled, and flush says why.
    let w = TraceWriter::from_env_vars(vec![
        ("TRACEWRITER_OUT".to_string(), p.to_string()),
        ("TRACEWRITER_OPTIONS".to_string(), "nope=1".to_string()),
    ]);
    assert!(!w.is_enabled());
    w.push("lost", "b", 1.0, 0);
    let err = w.flush().unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::Other);
    assert!(err.to_string().contains("nope"), "{}", err);
}

#[test]
fn enabled_on_a_bad_path_reports_at_flush() {
    let dir = TempDir::new("badpath");
    let w = TraceWriter::enabled(dir.path("missing/trace.json"));
    assert!(!w.is_enabled());
    w.push("lost", "b", 1.0, 0);
    assert_eq!(w.flush().unwrap_err().kind(), io::ErrorKind::NotFound);
}

/// push as the seed: a complete event that ends at the push, dur_ms in
/// ms, tid as given; every flush keeps the events of the earlier ones.
#[test]
fn push_writes_complete_events_and_flush_keeps_earlier_ones() {
    let dir = TempDir::new("push");
    let path = dir.path("trace.json");
    let w = TraceWriter::enabled(path.clone());
    assert!(w.is_enabled());
    let before = now_ns();
    w.push("rms_norm", "norm", 1.0, 1);
    w.push(String::from("rope"), String::from("attn"), 0.0015, 7);
    let owned = String::from("owned");
    w.push(&owned, Cow::Borrowed("cow"), 0.123, 0);
    let after = now_ns();
    w.flush().unwrap();

    let ev = read_x(&path);
    let got: Vec<(&str, &str, i64, u64)> = ev
        .iter()
        .map(|e| {
            (
                e.name(),
                e.at("cat").str(),
                e.at("tid").i64(),
                e.at("dur").ns(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("rms_norm", "norm", 1, 1_000_000),
            ("rope", "attn", 7, 1_500),
            ("owned", "cow", 0, 123_000)
        ]
    );
    for e in &ev {
        let end = e.at("ts").ns() + e.at("dur").ns();
        assert!(
            end >= before && end <= after,
            "{:?} does not end at its push",
            e
        );
    }

    // The seed truncated the file here and kept only what follows.
    w.push("after", "flush", -1.0, 2);
    w.push("nan", "flush", f64::NAN, 2);
    w.flush().unwrap();
    let ev = read_x(&path);
    let names: Vec<&str> = ev.iter().map(J::name).collect();
    assert_eq!(names, ["rms_norm", "rope", "owned", "after", "nan"]);
    assert_eq!(ev[3].at("dur").ns(), 0);
    assert_eq!(ev[4].at("dur").ns(), 0);
    drop(w);
    assert_eq!(read_x(&path).len(), 5);
}

#[test]
fn push_with_args_writes_every_value_kind() {
    let dir = TempDir::new("args");
    let path = dir.path("args.json");
    let w = TraceWriter::enabled(path.clone());
    let mut inner = Map::new();
    inner.insert("dim".to_string(), Value::from(4096u32));
    inner.insert("q\"\n".to_string(), Value::from("v\u{1}\\"));
    let mut args = Map::new();
    args.insert("tokens".to_string(), Value::from(4));
    args.insert("big".to_string(), Value::from(u64::MAX));
    args.insert("neg".to_string(), Value::from(-3i64));
    args.insert("ratio".to_string(), Value::from(0.25));
    args.insert("tiny".to_string(), Value::from(1e-300));
    args.insert("nan".to_string(), Value::from(f64::NAN));
    args.insert("flag".to_string(), Value::from(true));
    args.insert("none".to_string(), Value::Null);
    args.insert("unit".to_string(), Value::from(()));
    args.insert("name".to_string(), Value::from("q_proj \"x\""));
    args.insert("shape".to_string(), Value::from(vec![4, 4096]));
    args.insert(
        "mixed".to_string(),
        Value::Array(vec![
            Value::from(1.5),
            Value::from("s"),
            Value::Null,
            Value::Object(inner),
        ]),
    );
    args.insert(
        "raw".to_string(),
        Value::raw("{\"from\": \"serde_json::to_string\"}"),
    );
    args.insert("opt".to_string(), Value::from(Some(2.0f32)));
    args.insert(
        "num".to_string(),
        Value::from(Number::from_f64(-0.5).unwrap()),
    );
    w.push_with_args("matmul", "gemm", 2.0, 5, args);
    assert_eq!(w.stats().rejected, 0);

    // Raw JSON the library refuses: the event is not written.
    let mut bad = Map::new();
    bad.insert("raw".to_string(), Value::raw("{not json"));
    w.push_with_args("refused", "gemm", 1.0, 5, bad);
    assert_eq!(w.stats().rejected, 1);
    w.flush().unwrap();

    let ev = read_x(&path);
    assert_eq!(ev.len(), 1);
    let a = ev[0].at("args");
    // BTreeMap order, as serde_json::Map.
    assert_eq!(
        a.keys(),
        [
            "big", "flag", "mixed", "name", "nan", "neg", "none", "num", "opt", "ratio", "raw",
            "shape", "tiny", "tokens", "unit"
        ]
    );
    let want = parse(
        br#"{"big":18446744073709551615,"flag":true,
            "mixed":[1.5,"s",null,{"dim":4096,"q\"\n":"v\u0001\\"}],
            "name":"q_proj \"x\"","nan":null,"neg":-3,"none":null,"num":-0.5,"opt":2,
            "ratio":0.25,"raw":{"from":"serde_json::to_string"},"shape":[4,4096],
            "tiny":1e-300,"tokens":4,"unit":null}"#,
    )
    .unwrap();
    for k in a.keys() {
        let (got, exp) = (a.at(k), want.at(k));
        match (got, exp) {
            // Numbers are compared as values: 2 may be written 2.0.
            (J::Num(g), J::Num(e)) => assert_eq!(
                g.parse::<f64>().unwrap(),
                e.parse::<f64>().unwrap(),
                "{}",
                k
            ),
            _ => assert_eq!(got, exp, "{}", k),
        }
    }
    // Above i64::MAX, a u64 is written as the nearest double.
    assert_eq!(a.at("big").num(), "1.8446744073709552e+19");
    assert_eq!(a.at("tokens").num(), "4");
}

/// Run this test binary again as a child, running one ignored test with
/// the given environment.
fn child(test: &str, env: &[(&str, &str)]) -> std::process::Output {
    let test = common::test_path(module_path!(), test);
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--ignored",
        "--exact",
        &test,
        "--test-threads=1",
        "--nocapture",
    ]);
    cmd.env_remove("TRACEWRITER_OUT")
        .env_remove("TRACEWRITER_OPTIONS")
        .env_remove("FERRUM_TRACE_OUT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("rerun the test binary");
    assert!(
        out.status.success(),
        "child {} failed:\n{}{}",
        test,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // A name that matches nothing runs nothing and succeeds: make sure the
    // child test ran.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("1 passed"),
        "child {} ran no test:\n{}",
        test,
        stdout
    );
    out
}

/// The child's side of global_trace_is_the_process_wide_writer.
#[test]
#[ignore = "run by global_trace_is_the_process_wide_writer in a child"]
fn child_global_enabled() {
    assert!(global_trace().is_enabled());
    global_trace().push("first", "g", 1.0, 1);
    flush_global_trace();
    global_trace().push("second", "g", 1.0, 2);
    global_trace().flush().unwrap();
    {
        let w = TraceWriter::from_env(); // the same writer, not a second file
        assert!(w.is_enabled());
        w.push("third", "g", 1.0, 3);
        let native = w.writer().unwrap();
        native.thread_name("compat child").unwrap();
    } // dropped: committed, not closed
    global_trace().push("at exit", "g", 1.0, 4); // committed at exit
}

#[test]
fn global_trace_is_the_process_wide_writer() {
    let dir = TempDir::new("global");
    let pattern = dir.path("g-%p.json");
    child(
        "child_global_enabled",
        &[
            ("TRACEWRITER_OUT", pattern.to_str().unwrap()),
            ("TRACEWRITER_OPTIONS", "buffer=4KiB"),
        ],
    );
    let files: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{:?}", files);
    let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
    let pid: u32 = name
        .strip_prefix("g-")
        .unwrap()
        .strip_suffix(".json")
        .unwrap()
        .parse()
        .unwrap();
    assert_ne!(pid, std::process::id());
    let all = load(&files[0]);
    let ev = events_after_head(&all);
    let got: Vec<(&str, &str, i64)> = ev
        .iter()
        .map(|e| (e.ph(), e.name(), e.at("tid").i64()))
        .collect();
    let main_tid = ev
        .iter()
        .find(|e| e.ph() == "M" && e.name() == "thread_name")
        .map(|e| e.at("tid").i64())
        .unwrap();
    assert_eq!(
        got,
        [
            ("M", "process_name", i64::from(pid)),
            ("X", "first", 1),
            ("X", "second", 2),
            ("X", "third", 3),
            ("M", "thread_name", main_tid),
            ("X", "at exit", 4)
        ]
    );
    for e in ev {
        assert_eq!(e.at("pid").i64(), i64::from(pid));
    }
}

#[test]
#[ignore = "run by global_trace_off_or_failed in a child"]
fn child_global_disabled() {
    assert!(!global_trace().is_enabled());
    global_trace().push("nothing", "g", 1.0, 1);
    flush_global_trace();
    global_trace().flush().unwrap();
    TraceWriter::from_env().flush().unwrap();
    assert!(tracewriter::global().is_none());
    assert!(tracewriter::global_status().is_ok());
}

#[test]
#[ignore = "run by global_trace_off_or_failed in a child"]
fn child_global_bad_options() {
    assert!(!global_trace().is_enabled());
    global_trace().push("nothing", "g", 1.0, 1);
    flush_global_trace(); // errors ignored, as the seed's
    let err = global_trace().flush().unwrap_err();
    assert!(err.to_string().contains("bogus"), "{}", err);
    let status = tracewriter::global_status().unwrap_err();
    assert_eq!(status.code(), tracewriter::code::EOPTION);
}

#[test]
fn global_trace_off_or_failed() {
    let dir = TempDir::new("globaloff");
    child("child_global_disabled", &[]);
    let path = dir.path("bad.json");
    child(
        "child_global_bad_options",
        &[
            ("TRACEWRITER_OUT", path.to_str().unwrap()),
            ("TRACEWRITER_OPTIONS", "bogus=1"),
        ],
    );
    assert!(!path.exists());
}

/// The child's side of ferrum_trace_out_when_tracewriter_out_is_unset.
#[test]
#[ignore = "run by ferrum_trace_out_when_tracewriter_out_is_unset in a child"]
fn child_ferrum_enabled() {
    assert!(tracewriter::global().is_none()); // the library's is off
    assert!(global_trace().is_enabled());
    assert!(TraceWriter::from_env().is_enabled());
    global_trace().push("seed variable", "g", 1.0, 1);
    flush_global_trace();
    global_trace().push("at exit", "g", 0.5, 2); // committed at exit
}

#[test]
#[ignore = "run by ferrum_trace_out_when_tracewriter_out_is_unset in a child"]
fn child_ferrum_bad_path() {
    assert!(!global_trace().is_enabled());
    global_trace().push("nothing", "g", 1.0, 1);
    let err = global_trace().flush().unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
}

#[test]
fn ferrum_trace_out_when_tracewriter_out_is_unset() {
    let dir = TempDir::new("ferrum");
    let path = dir.path("ferrum.json");
    child(
        "child_ferrum_enabled",
        &[("FERRUM_TRACE_OUT", path.to_str().unwrap())],
    );
    let all = load(&path);
    let ev = events_after_head(&all);
    // The process named again on the tid that is the pid, then the events.
    let pid = all[0].at("pid").i64();
    assert_eq!((ev[0].ph(), ev[0].name(), ev[0].at("tid").i64()), ("M", "process_name", pid));
    let ev = &ev[1..];
    for e in ev {
        assert_eq!(e.ph(), "X");
        assert_eq!(e.at("pid").i64(), pid);
    }
    let got: Vec<(&str, i64)> = ev.iter().map(|e| (e.name(), e.at("tid").i64())).collect();
    assert_eq!(got, [("seed variable", 1), ("at exit", 2)]);
    assert_eq!(ev[1].at("dur").num(), "500.000");

    // TRACEWRITER_OUT set: FERRUM_TRACE_OUT is not read.
    let ignored = dir.path("ignored.json");
    child(
        "child_global_enabled",
        &[
            ("TRACEWRITER_OUT", dir.path("g-%p.json").to_str().unwrap()),
            ("FERRUM_TRACE_OUT", ignored.to_str().unwrap()),
        ],
    );
    assert!(!ignored.exists());
    // Set but empty: tracing off, not the seed's variable.
    child(
        "child_global_disabled",
        &[("TRACEWRITER_OUT", ""), ("FERRUM_TRACE_OUT", ignored.to_str().unwrap())],
    );
    assert!(!ignored.exists());
    child(
        "child_ferrum_bad_path",
        &[("FERRUM_TRACE_OUT", dir.path("no/such/dir.json").to_str().unwrap())],
    );
}

/// The child's side of tracks_are_named_and_the_process_name_is_on_the_pid:
/// the process-wide writer opened by a worker's first push.
#[test]
#[ignore = "run by tracks_are_named_and_the_process_name_is_on_the_pid in a child"]
fn child_global_first_push_from_a_worker() {
    let worker = std::thread::spawn(|| {
        global_trace().push("first", "layer", 0.5, 1);
        global_trace().thread_name(1, "layer 1");
        extern "C" {
            fn gettid() -> i32;
        }
        // SAFETY: gettid has no preconditions.
        unsafe { gettid() }
    })
    .join()
    .unwrap();
    println!("worker tid {}", worker);
    global_trace().thread_name(2, "stream \"2\"");
    // Enough to rotate a few times (rotate=4KiB): every new file begins
    // with the process name on the pid and the tracks' names.
    for i in 0..120 {
        global_trace().push("matmul", "gemm", 0.25, 1 + (i % 2));
    }
    global_trace().push("last", "layer", 0.5, 1);
}

/// The head of a file: its process_name records (tid) and its
/// thread_name records (tid, name) before its first complete event.
fn head_names(events: &[J]) -> (Vec<i64>, Vec<(i64, String)>) {
    let head = events.iter().take_while(|e| e.ph() == "M");
    let mut process = Vec::new();
    let mut threads = Vec::new();
    for e in head {
        match e.name() {
            "process_name" => process.push(e.at("tid").i64()),
            "thread_name" => threads.push((e.at("tid").i64(), e.at("args").at("name").str().to_string())),
            other => panic!("unexpected metadata {}", other),
        }
    }
    (process, threads)
}

#[test]
fn tracks_are_named_and_the_process_name_is_on_the_pid() {
    let dir = TempDir::new("tracknames");
    let out = child(
        "child_global_first_push_from_a_worker",
        &[
            ("TRACEWRITER_OUT", dir.path("t-%p.json").to_str().unwrap()),
            ("TRACEWRITER_OPTIONS", "buffer=1KiB,rotate=4KiB"),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let worker: i64 = stdout
        .lines()
        .find_map(|l| l.split("worker tid ").nth(1))
        .expect("the child prints its worker's tid")
        .trim()
        .parse()
        .unwrap();
    let mut files: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 3, "no rotation: {:?}", files);
    let mut first_docs = 0;
    let mut xs = 0;
    let mut last_names = None;
    for f in &files {
        let all = load(f);
        let pid = all[0].at("pid").i64();
        assert_ne!(pid, worker);
        for e in &all {
            assert_eq!(e.at("pid").i64(), pid, "{:?}", e);
        }
        let name = all[0].at("args").at("name").str().to_string();
        let (process, threads) = head_names(&all);
        if process[0] == worker {
            // The document begun by the worker's first push: the
            // library's first record on the worker, and ours on the pid
            // among the records of the worker (its order is the
            // worker's, not the file's).
            first_docs += 1;
            let ours = all[1..]
                .iter()
                .filter(|e| e.ph() == "M" && e.name() == "process_name")
                .count();
            assert_eq!(ours, 1);
        } else {
            // A rotated file: the process named on the pid alone, first.
            assert_eq!(process, [pid], "{}", f.display());
            assert_eq!(threads.len(), 2, "{}: tracks unnamed", f.display());
        }
        for e in &all[1..] {
            match (e.ph(), e.name()) {
                ("M", "process_name") => {
                    assert_eq!(e.at("tid").i64(), pid);
                    assert_eq!(e.at("args").at("name").str(), name);
                }
                ("M", "thread_name") => assert!([1, 2].contains(&e.at("tid").i64()), "{:?}", e),
                ("X", _) => {
                    assert!([1, 2].contains(&e.at("tid").i64()), "{:?}", e);
                    xs += 1;
                }
                _ => panic!("unexpected record {:?}", e),
            }
        }
        if !threads.is_empty() && process == [pid] {
            last_names = Some(threads);
        }
    }
    assert_eq!(first_docs, 1);
    assert_eq!(xs, 122);
    // The rotated files' heads name both tracks (the names were given
    // before the first commit, so before any rotation).
    let mut names = last_names.expect("a rotated file");
    names.sort();
    assert_eq!(
        names,
        [(1, "layer 1".to_string()), (2, "stream \"2\"".to_string())]
    );
}

#[test]
fn thread_name_on_an_owned_or_disabled_writer() {
    TraceWriter::disabled().thread_name(3, "nothing");
    let dir = TempDir::new("ownednames");
    let path = dir.path("owned.json");
    let w = TraceWriter::enabled(path.clone());
    w.thread_name(3, "layer 3");
    w.push("attn", "layer", 0.5, 3);
    drop(w);
    let all = load(&path);
    let ev = events_after_head(&all);
    let got: Vec<(&str, &str, i64)> = ev
        .iter()
        .map(|e| (e.ph(), e.name(), e.at("tid").i64()))
        .collect();
    assert_eq!(got, [("M", "thread_name", 3), ("X", "attn", 3)]);
    assert_eq!(ev[0].at("args").at("name").str(), "layer 3");
    assert_eq!(ev[0].at("args").keys(), ["name"]);
}
