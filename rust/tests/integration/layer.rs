//! The tracing layer (the `tracing` feature): spans entered once are one
//! "X"; spans of futures that live across .await points, polled here by
//! hand, are one async b/e pair with an id of their own; events are
//! instants with their fields; threads are named.  Every file is read
//! back strictly and compared field by field.
#![cfg(feature = "tracing")]


use crate::common::{events_after_head, load, TempDir, J};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
use tracewriter::layer::{AsyncSpans, ChromeLayer, LANE_TID_BASE};
use tracewriter::{Options, Writer};
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

/// A waker that does nothing: the tests poll by hand.
fn noop_waker() -> Waker {
    fn clone(_: *const ()) -> RawWaker {
        RawWaker::new(std::ptr::null(), &VTABLE)
    }
    fn noop(_: *const ()) {}
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
    // SAFETY: the vtable's functions ignore the data pointer.
    unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) }
}

/// A future that is pending `n` times, then ready with `value`: each
/// poll enters and exits the span it is instrumented with.
struct Yields {
    left: u32,
    value: u32,
}

impl Future for Yields {
    type Output = u32;
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<u32> {
        if self.left == 0 {
            tracing::info!(value = self.value, "ready");
            Poll::Ready(self.value)
        } else {
            self.left -= 1;
            Poll::Pending
        }
    }
}

fn poll<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    Pin::new(f).poll(&mut cx)
}

/// A writer on a fresh file and a dispatcher with the layer over it.
fn setup(dir: &TempDir) -> (std::path::PathBuf, Arc<Writer>, tracing::Dispatch) {
    let path = dir.path("layer.json");
    let w = Arc::new(Writer::open(&path, &Options::new()).unwrap());
    let sub = tracing_subscriber::registry().with(ChromeLayer::new(w.clone()));
    (path, w, tracing::Dispatch::new(sub))
}

fn tids_of_thread_names(ev: &[J]) -> Vec<(String, i64)> {
    ev.iter()
        .filter(|e| e.ph() == "M" && e.name() == "thread_name")
        .map(|e| (e.at("args").at("name").str().to_string(), e.at("tid").i64()))
        .collect()
}

#[test]
fn a_span_entered_once_is_one_complete_event() {
    let dir = TempDir::new("layer-sync");
    let (path, w, dispatch) = setup(&dir);
    let before = tracewriter::now_ns();
    std::thread::Builder::new()
        .name("worker-1".to_string())
        .spawn(move || {
            tracing::dispatcher::with_default(&dispatch, || {
                let outer = tracing::info_span!("prefill", tokens = 512u64, model = "m");
                let _g = outer.enter();
                {
                    let inner = tracing::debug_span!("attn", layer = -3i64, ratio = 0.5);
                    let _g = inner.enter();
                    tracing::warn!(block = 7u64, full = true, "kv cache full");
                }
                outer.record("tokens", 513u64);
                tracing::info!(queue = ?vec![1, 2]);
                tracing::info_span!("never entered");
            })
        })
        .unwrap()
        .join()
        .unwrap();
    let after = tracewriter::now_ns();
    // The dispatcher went with the thread: this is the last reference.
    Arc::try_unwrap(w).ok().expect("the only reference").close().unwrap();
    let all = load(&path);
    let ev = events_after_head(&all);
    let names = tids_of_thread_names(ev);
    assert_eq!(names.len(), 1);
    assert_eq!(names[0].0, "worker-1");
    let tid = names[0].1;
    let rec: Vec<&J> = ev.iter().filter(|e| e.ph() != "M").collect();
    let phases: Vec<&str> = rec.iter().map(|e| e.ph()).collect();
    // Spans are written when they close: the inner one first.
    assert_eq!(phases, ["I", "X", "I", "X"]);
    assert_eq!(rec[0].name(), "kv cache full"); // the message
    assert_eq!(rec[1].name(), "attn");
    // An event with no message is named by tracing ("event FILE:LINE").
    assert!(rec[2].name().starts_with(&format!("event {}:", file!())), "{}", rec[2].name());
    assert_eq!(rec[3].name(), "prefill");
    for e in &rec {
        assert_eq!(e.at("tid").i64(), tid);
        assert_eq!(e.at("cat").str(), module_path!()); // the target
    }
    let (warn, attn, queue, prefill) = (rec[0], rec[1], rec[2], rec[3]);
    assert_eq!(warn.at("s").str(), "t");
    assert_eq!(warn.at("args").keys(), ["block", "full"]);
    assert_eq!(warn.at("args").at("block").u64(), 7);
    assert_eq!(warn.at("args").at("full"), &J::Bool(true));
    assert_eq!(queue.at("args").at("queue").str(), "[1, 2]");
    assert_eq!(attn.at("args").at("layer").i64(), -3);
    assert_eq!(attn.at("args").at("ratio").f64(), 0.5);
    assert_eq!(prefill.at("args").at("tokens").u64(), 513);
    assert_eq!(prefill.at("args").at("model").str(), "m");
    // The inner span inside the outer one, both inside the run.
    let (p0, p1) = (prefill.at("ts").ns(), prefill.at("ts").ns() + prefill.at("dur").ns());
    let (a0, a1) = (attn.at("ts").ns(), attn.at("ts").ns() + attn.at("dur").ns());
    assert!(before <= p0 && p0 <= a0 && a0 <= a1 && a1 <= p1 && p1 <= after);
    let w0 = warn.at("ts").ns();
    assert!(a0 <= w0 && w0 <= a1);
}

#[test]
fn futures_across_awaits_are_one_async_pair_each() {
    let dir = TempDir::new("layer-async");
    let (path, w, dispatch) = setup(&dir);
    let n = 10u32;
    // Ten requests in flight, polled by hand in turn: each is entered at
    // every poll (four polls each), on two threads.
    let mut futs: Vec<_> = tracing::dispatcher::with_default(&dispatch, || {
        (0..n)
            .map(|i| {
                Yields { left: 3, value: i }
                    .instrument(tracing::info_span!("request", req = u64::from(i)))
            })
            .collect()
    });
    tracing::dispatcher::with_default(&dispatch, || {
        for _ in 0..2 {
            for f in futs.iter_mut() {
                assert!(poll(f).is_pending());
            }
        }
    });
    let d2 = dispatch.clone();
    let futs = std::thread::spawn(move || {
        tracing::dispatcher::with_default(&d2, || {
            for f in futs.iter_mut() {
                assert!(poll(f).is_pending());
            }
            for (i, f) in futs.iter_mut().enumerate() {
                assert_eq!(poll(f), Poll::Ready(i as u32));
            }
        });
        futs
    })
    .join()
    .unwrap();
    tracing::dispatcher::with_default(&dispatch, || drop(futs)); // the spans close
    drop(dispatch); // the layer's reference to the writer
    Arc::try_unwrap(w).ok().expect("the only reference").close().unwrap();

    let all = load(&path);
    let ev = events_after_head(&all);
    let main_tid = all[0].at("tid").i64();
    let rec: Vec<&J> = ev.iter().filter(|e| e.ph() != "M").collect();
    // No X, no fragment per poll: one b, one e per request, and the
    // instant each wrote when ready.
    assert_eq!(rec.iter().filter(|e| e.ph() == "X").count(), 0);
    let begins: Vec<&J> = rec.iter().copied().filter(|e| e.ph() == "b").collect();
    let ends: Vec<&J> = rec.iter().copied().filter(|e| e.ph() == "e").collect();
    let instants: Vec<&J> = rec.iter().copied().filter(|e| e.ph() == "I").collect();
    assert_eq!((begins.len(), ends.len(), instants.len()), (10, 10, 10));
    assert_eq!(rec.len(), 30);
    let mut ids = Vec::new();
    for (b, e) in begins.iter().zip(&ends) {
        // Written together at close: b then its e.
        assert_eq!((b.name(), e.name()), ("request", "request"));
        assert_eq!(b.at("cat").str(), module_path!()); // the target
        assert_eq!(b.at("id"), e.at("id"));
        assert!(b.at("ts").ns() <= e.at("ts").ns());
        // Began on the main thread, ended on the other.
        assert_eq!(b.at("tid").i64(), main_tid);
        assert_ne!(e.at("tid").i64(), main_tid);
        ids.push(b.at("id").str().to_string());
    }
    let req: Vec<u64> = begins.iter().map(|b| b.at("args").at("req").u64()).collect();
    assert_eq!(req, (0..10).collect::<Vec<u64>>());
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 10, "an id per span");
    // Each "ready" instant lies within its request's pair, on the thread
    // that polled it last.
    for (i, inst) in instants.iter().enumerate() {
        assert_eq!(inst.name(), "ready");
        assert_eq!(inst.at("args").at("value").u64(), i as u64);
        let t = inst.at("ts").ns();
        assert!(begins[i].at("ts").ns() <= t && t <= ends[i].at("ts").ns());
        assert_eq!(inst.at("tid").i64(), ends[i].at("tid").i64());
    }
}

#[test]
fn the_global_layer_writes_nothing_when_tracing_is_off() {
    if std::env::var_os("TRACEWRITER_OUT").is_some() {
        return; // the environment chose otherwise
    }
    let sub = tracing_subscriber::registry().with(ChromeLayer::global());
    tracing::subscriber::with_default(sub, || {
        let _g = tracing::info_span!("off").entered();
        tracing::info!("nothing");
    });
    assert!(tracewriter::global().is_none());
}

/// The complete events of a lanes trace by lane: (lane number, ts, end,
/// name, event), after checking that every lane used is named "requests
/// lane N" once and that on a lane two events are apart or one holds the
/// other.
fn by_lane(ev: &[J]) -> Vec<(i64, u64, u64, String, J)> {
    let names = tids_of_thread_names(ev);
    let mut out = Vec::new();
    for e in ev.iter().filter(|e| e.ph() == "X") {
        let tid = e.at("tid").i64();
        let n = tid - LANE_TID_BASE;
        assert!(n >= 1, "not on a lane: {:?}", e);
        let named: Vec<_> = names.iter().filter(|(_, t)| *t == tid).collect();
        assert_eq!(named.len(), 1, "lane {} named {:?}", n, named);
        assert_eq!(named[0].0, format!("requests lane {}", n));
        let ts = e.at("ts").ns();
        out.push((n, ts, ts + e.at("dur").ns(), e.name().to_string(), e.clone()));
    }
    for a in &out {
        for b in &out {
            if a.0 != b.0 || std::ptr::eq(a, b) {
                continue;
            }
            let apart = a.2 <= b.1 || b.2 <= a.1;
            let nested = (a.1 <= b.1 && b.2 <= a.2) || (b.1 <= a.1 && a.2 <= b.2);
            assert!(apart || nested, "overlap on lane {}: {:?} {:?}", a.0, a.3, b.3);
        }
    }
    out
}

#[test]
fn lanes_give_each_request_in_flight_a_named_lane() {
    let dir = TempDir::new("layer-lanes");
    let path = dir.path("lanes.json");
    let w = Arc::new(Writer::open(&path, &Options::new()).unwrap());
    let layer = ChromeLayer::new(w.clone()).async_spans(AsyncSpans::Lanes);
    let dispatch = tracing::Dispatch::new(tracing_subscriber::registry().with(layer));
    let request = |i: u32| {
        Box::pin(
            async move {
                let a = Yields { left: 2, value: i }
                    .instrument(tracing::info_span!("step", k = 0u64))
                    .await;
                let b = Yields { left: 1, value: i }
                    .instrument(tracing::info_span!("step", k = 1u64))
                    .await;
                a + b
            }
            .instrument(tracing::info_span!("request", req = u64::from(i))),
        )
    };
    tracing::dispatcher::with_default(&dispatch, || {
        // Three requests in flight, polled in turn, then a fourth alone.
        let mut futs: Vec<_> = (0..3).map(request).collect();
        let mut done = vec![None; 3];
        while done.iter().any(Option::is_none) {
            for (f, d) in futs.iter_mut().zip(done.iter_mut()) {
                if d.is_none() {
                    if let Poll::Ready(v) = poll(f) {
                        *d = Some(v);
                    }
                }
            }
        }
        assert_eq!(done, [Some(0), Some(2), Some(4)]);
        drop(futs); // the request spans close
        let mut last = request(3);
        while poll(&mut last).is_pending() {}
        drop(last);
        // A span entered once, outside any request: a lane too.
        tracing::info_span!("startup").in_scope(|| ());
    });
    drop(dispatch);
    Arc::try_unwrap(w).ok().expect("the only reference").close().unwrap();

    let all = load(&path);
    let ev = events_after_head(&all);
    // Complete events and the lanes' names; instants stay on the thread.
    for e in ev {
        assert!(matches!(e.ph(), "X" | "M" | "I"), "{:?}", e);
    }
    let x = by_lane(ev);
    assert_eq!(x.len(), 4 + 8 + 1);
    let lanes: std::collections::BTreeSet<i64> = x.iter().map(|e| e.0).collect();
    assert_eq!(lanes.into_iter().collect::<Vec<_>>(), [1, 2, 3]);
    // Three lanes named; the test's thread too (its instants).
    let names = tids_of_thread_names(ev);
    let lane_names = names.iter().filter(|(_, t)| *t > LANE_TID_BASE).count();
    assert_eq!((names.len(), lane_names), (4, 3));
    let requests: Vec<_> = x.iter().filter(|e| e.3 == "request").collect();
    let mut reqs: Vec<(u64, i64)> = requests
        .iter()
        .map(|r| (r.4.at("args").at("req").u64(), r.0))
        .collect();
    reqs.sort();
    // In flight at once: a lane each; the fourth reuses the first lane.
    assert_eq!(reqs, [(0, 1), (1, 2), (2, 3), (3, 1)]);
    for r in &requests {
        let inside: Vec<_> = x
            .iter()
            .filter(|e| e.0 == r.0 && r.1 <= e.1 && e.2 <= r.2 && e.3 == "step")
            .map(|e| e.4.at("args").at("k").u64())
            .collect();
        assert_eq!(inside, [0, 1], "request {:?}", r.4);
    }
    let startup: Vec<_> = x.iter().filter(|e| e.3 == "startup").collect();
    assert_eq!(startup.len(), 1);
    assert_eq!(startup[0].0, 1);
}
