"""make bench-python: the cost of a span written from Python.

The same events -- one complete ('X') event per span, with and without
two args -- written three ways, in the same run, interleaved (each
repetition runs every method once, in a rotating order), medians of the
repetitions:

  tracewriter with    `with w.span(...)` through this binding (file sink)
  tracewriter deco    a function decorated with @w.span(...)
  dumps+write         json.dumps of each event and file.write of it
                      (buffered), the way a hand-rolled tracer writes
                      incrementally (its file is valid only once closed)
  list+dump           the events kept in a list and json.dump'ed at exit,
                      as most tracers do (all of it lost on a crash; the
                      memory grows with every event)
  floor: with         the same loop around `with` on a C-implemented
                      context manager (a threading.Lock) that writes
                      nothing: what the interpreter alone costs a span
  floor: call         the same loop calling an empty function

Each time is the whole run -- the spans, then closing the writer,
flushing the file or dumping the list -- divided by the number of spans.
Environment: BENCH_N spans per run (default 200000), BENCH_REPS
repetitions (5), BENCH_DIR where the files go (/dev/shm if it exists).
Then the targets, with PASS or MISS: `with w.span()` at most 300 ns and a
decorated call at most 250 ns without arguments, both at most 600 ns with
two.  Not a test: it fails nothing, whatever the times.
"""

import json
import os
import statistics
import sys
import tempfile
import threading
import time

# The package of the source tree, or the copy with the compiled fast path
# that make bench-python builds (BENCH_PACKAGE_PARENT).
sys.path.insert(0, os.environ.get("BENCH_PACKAGE_PARENT") or
                os.path.dirname(os.path.abspath(__file__)))
import tracewriter  # noqa: E402

N = int(os.environ.get("BENCH_N", "200000"))
REPS = int(os.environ.get("BENCH_REPS", "5"))
DIR = os.environ.get("BENCH_DIR") or (
    "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir())
PID = os.getpid()
TID = threading.get_native_id()
now_ns = tracewriter.now_ns


def tracewriter_with(path, with_args):
    w = tracewriter.open(path)
    span = w.span
    if with_args:
        for i in range(N):
            with span("step", cat="bench", i=i, layer="attn"):
                pass
    else:
        for i in range(N):
            with span("step", cat="bench"):
                pass
    w.close()


def tracewriter_deco(path, with_args):
    w = tracewriter.open(path)
    if with_args:
        @w.span("step", cat="bench", i=1, layer="attn")
        def step():
            pass
    else:
        @w.span("step", cat="bench")
        def step():
            pass
    for i in range(N):
        step()
    w.close()


def floor_with(path, with_args):
    """The interpreter's share of `with w.span()`: the same loop and
    `with` on a context manager written in C that does nothing."""
    lock = threading.Lock()
    for i in range(N):
        with lock:
            pass


def floor_call(path, with_args):
    """The interpreter's share of a decorated call: an empty call."""
    def step():
        pass
    for i in range(N):
        step()


def _event(t0, t1, i, with_args):
    ev = {"ph": "X", "name": "step", "cat": "bench", "ts": t0 / 1000,
          "dur": (t1 - t0) / 1000, "pid": PID, "tid": TID}
    if with_args:
        ev["args"] = {"i": i, "layer": "attn"}
    return ev


def dumps_write(path, with_args):
    dumps = json.dumps
    with open(path, "w", encoding="utf-8") as f:
        f.write("[\n")
        sep = ""
        for i in range(N):
            t0 = now_ns()
            t1 = now_ns()
            f.write(sep + dumps(_event(t0, t1, i, with_args)))
            sep = ",\n"
        f.write("\n]")


def list_dump(path, with_args):
    events = []
    append = events.append
    for i in range(N):
        t0 = now_ns()
        t1 = now_ns()
        append(_event(t0, t1, i, with_args))
    with open(path, "w", encoding="utf-8") as f:
        json.dump(events, f)


METHODS = [("tracewriter with", tracewriter_with),
           ("tracewriter deco", tracewriter_deco),
           ("dumps+write", dumps_write),
           ("list+dump", list_dump),
           ("floor: with", floor_with),
           ("floor: call", floor_call)]
FLOORS = {"tracewriter with": "floor: with", "tracewriter deco": "floor: call"}


def check(path, with_args):
    """The file holds N spans (the benchmark's outputs are real)."""
    with open(path, encoding="utf-8") as f:
        events = json.load(f)
    spans = [e for e in events if e["ph"] == "X"]
    assert len(spans) == N, (path, len(spans))
    assert ("args" in spans[-1]) == with_args, path


# ns per span: (method, with_args) -> target
TARGETS = {("tracewriter with", False): 300, ("tracewriter deco", False): 250,
           ("tracewriter with", True): 600, ("tracewriter deco", True): 600}


def main():
    print("make bench-python: %d spans per run, %d interleaved repetitions, "
          "files in %s" % (N, REPS, DIR))
    print("python %s, libtracewriter %s (%s), spans through %s" % (
        sys.version.split()[0], tracewriter.library_version(),
        tracewriter.library_path(),
        "the compiled fast path" if tracewriter.speedups() else
        "ctypes alone"))
    medians = {}
    for with_args in (False, True):
        times = {name: [] for name, _ in METHODS}
        for rep in range(REPS):
            k = rep % len(METHODS)
            for name, fn in METHODS[k:] + METHODS[:k]:
                path = os.path.join(DIR, "tw-bench-%d-%s.json" % (
                    PID, name.replace(" ", "-").replace("+", "-")))
                t0 = time.perf_counter_ns()
                fn(path, with_args)
                times[name].append((time.perf_counter_ns() - t0) / N)
                if name.startswith("floor"):
                    continue
                if rep == 0:
                    check(path, with_args)
                os.unlink(path)
        print()
        print("spans %s args: ns per span, median of %d (min..max)"
              % ("with 2" if with_args else "without", REPS))
        base = statistics.median(times["tracewriter with"])
        for name, _ in METHODS:
            t = times[name]
            med = statistics.median(t)
            medians[(name, with_args)] = med
            print("  %-17s %7.0f  (%5.0f..%5.0f)  %5.2fx tracewriter with"
                  % (name, med, min(t), max(t), med / base))

    print()
    print("targets (median ns per span; beside it, the same run's median "
          "less its floor):")
    for (name, with_args), target in TARGETS.items():
        med = medians[(name, with_args)]
        print("  %-17s %-10s %6.0f <= %4d  %s   (%.0f above %s)" % (
            name, "2 args" if with_args else "no args", med, target,
            "PASS" if med <= target else "MISS",
            med - medians[(FLOORS[name], with_args)], FLOORS[name]))


if __name__ == "__main__":
    main()
