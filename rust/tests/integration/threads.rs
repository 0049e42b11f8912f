//! Threads: one writer shared by several threads, each thread's events in
//! the order it emitted them; the types are Send and Sync.


use crate::common::{events_after_head, load, Rng, TempDir};
use std::collections::HashMap;
use std::sync::Arc;
use tracewriter::compat::TraceWriter;
use tracewriter::{Arg, Error, Options, Scope, Writer};

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn handles_are_send_and_sync() {
    assert_send_sync::<Writer>();
    assert_send_sync::<Options>();
    assert_send_sync::<Error>();
    assert_send_sync::<TraceWriter>();
    assert_send_sync::<tracewriter::Span<'static>>();
}

/// THREADS threads emit PER_THREAD events each on one writer with small
/// buffers (many commits, some by each thread); every event is in the
/// file, and per thread its sequence numbers are 0, 1, 2... in file order.
fn run(opts: &str, mut rng: Rng) {
    const THREADS: usize = 4;
    let per_thread = rng.range(1000, 3000) as i64;
    let dir = TempDir::new("threads");
    let path = dir.path("threads.json");
    let w = Writer::open(&path, &Options::parse(opts).unwrap()).unwrap();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let w = &w;
            s.spawn(move || {
                w.thread_name(&format!("worker {}", t)).unwrap();
                for seq in 0..per_thread {
                    let args = [Arg::new("thread", t), Arg::new("seq", seq)];
                    if seq % 3 == 0 {
                        let span = w.span("work", "span");
                        span.end_with(&args).unwrap();
                    } else {
                        w.instant("work", "tick", Scope::Thread, &args).unwrap();
                    }
                    if seq % 500 == 0 {
                        w.flush().unwrap();
                    }
                }
            });
        }
    });
    // Also through an Arc and a thread that outlives no borrow.
    let w = Arc::new(w);
    let w2 = Arc::clone(&w);
    std::thread::spawn(move || {
        w2.instant("arc", "from another thread", Scope::Process, &[])
            .unwrap()
    })
    .join()
    .unwrap();
    let w = Arc::try_unwrap(w).unwrap();
    w.close().unwrap();

    let all = load(&path);
    let ev = events_after_head(&all);
    let mut next_seq: HashMap<i64, (i64, i64)> = HashMap::new(); // tid -> (thread, next seq)
    let mut named = 0;
    for e in ev {
        let tid = e.at("tid").i64();
        match e.name() {
            "thread_name" => {
                assert_eq!(e.ph(), "M");
                assert!(e.at("args").at("name").str().starts_with("worker "));
                named += 1;
            }
            "span" | "tick" => {
                let a = e.at("args");
                let (thread, seq) = (a.at("thread").i64(), a.at("seq").i64());
                let slot = next_seq.entry(tid).or_insert((thread, 0));
                assert_eq!(slot.0, thread, "two threads share tid {}", tid);
                assert_eq!(seq, slot.1, "thread {} out of order", thread);
                assert_eq!(e.ph(), if seq % 3 == 0 { "X" } else { "I" });
                slot.1 += 1;
            }
            "from another thread" => {}
            other => panic!("unexpected event {:?}", other),
        }
    }
    assert_eq!(named, THREADS);
    assert_eq!(next_seq.len(), THREADS, "one tid per thread");
    for (thread, n) in next_seq.values() {
        assert_eq!(*n, per_thread, "thread {} lost events", thread);
    }
}

#[test]
fn threads_keep_their_order_inline() {
    run(
        "buffer=4KiB,commit=inline",
        Rng::new("threads_keep_their_order_inline"),
    );
}

#[test]
fn threads_keep_their_order_background() {
    run(
        "buffer=4KiB,commit=background,buffers=2",
        Rng::new("threads_keep_their_order_background"),
    );
}

#[test]
fn threads_keep_their_order_mmap() {
    run(
        "mmap,chunk=64KiB",
        Rng::new("threads_keep_their_order_mmap"),
    );
}
