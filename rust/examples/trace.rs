//! Write a small trace: `cargo run --example trace -- out.json`, then open
//! out.json at https://ui.perfetto.dev.

use tracewriter::{Arg, Options, Scope, Writer};

fn main() -> Result<(), tracewriter::Error> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "trace.json".to_string());
    let w = Writer::open(&path, &Options::parse("flush=1s")?)?;
    w.thread_name("main")?;
    std::thread::scope(|s| {
        for worker in 0..2 {
            let w = &w;
            s.spawn(move || {
                let _ = w.thread_name(&format!("worker {}", worker));
                for request in 0..5u64 {
                    let id = worker * 100 + request;
                    let _span = w.span("server", "request");
                    let _ = w.async_begin("server", "queued", id, &[Arg::new("worker", worker)]);
                    let _ = w.async_end("server", "queued", id, &[]);
                    let _ = w.counter("server", "queue", &[Arg::new("depth", 5 - request)]);
                }
            });
        }
    });
    w.instant("server", "done", Scope::Global, &[])?;
    w.close()?;
    println!("wrote {}", path);
    Ok(())
}
