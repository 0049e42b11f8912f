"""The PyTorch profiler's trace on our timeline, with the real torch (run
by tests/test_torch.sh, which says SKIP without it; not a unittest module
of the binding's suite, which must not need torch).

CPU ops under tracewriter.torch.profile, each step inside one of our
spans; the profiler's trace exported by the helper; `tracewriter merge
engine.json torch.json` with no --offset; then each of our spans must
enclose its step's torch events within 1 ms.  Three ways:

  - the default schedule, the writer on the monotonic clock;
  - a schedule of two cycles (wait, warmup, two active steps) with
    on_trace_ready exporting each cycle's trace (.json.gz), the writer
    with timebase=kineto;
  - a torch export that did not go through the helper, tied afterwards
    with tie_trace.
"""

import os
import time

from support import (TraceTest, built, parse_strict, read_bytes, run_tool,
                     tracewriter, unittest)

import torch  # noqa: E402  (test_torch.sh made sure it imports)
import tracewriter.torch as twt  # noqa: E402
from torch.autograd.profiler import record_function  # noqa: E402

MS = 1_000_000           # ns
TOLERANCE_NS = 1 * MS    # issue 30: within 1 ms


def work(x):
    """CPU ops: a few ms of matrix products."""
    for _ in range(3):
        x = torch.tanh(x @ x / x.shape[0])
    return x


def ns(us):
    """A merged ts or dur (microseconds, as written) in ns."""
    from decimal import Decimal
    return int(Decimal(str(us)) * 1000)


class TestTorchOnOurTimeline(TraceTest):

    def setUp(self):
        super().setUp()
        self.tool = built("tools/tracewriter")
        if not self.tool:
            self.skipTest("tools/tracewriter is not built")
        torch.set_num_threads(1)
        self.x = torch.rand(160, 160)

    def merge(self, engine, profile):
        out = self.path("merged-%s.json" % os.path.basename(profile))
        r = run_tool([self.tool, "merge", "--explain", "-o", out, engine,
                      profile])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn("--offset", r.stderr)          # no warning
        self.assertNotIn("merged as it is", r.stderr)
        doc = parse_strict(read_bytes(out))
        return doc["traceEvents"] if isinstance(doc, dict) else doc

    def check_enclosed(self, events, steps, pid):
        """Our span "step" i encloses the torch events of step i: the
        record_function "torch step i" and every op inside it."""
        ours = {e["args"]["i"]: e for e in events
                if e.get("name") == "step" and e.get("pid") == pid}
        torch_events = [e for e in events
                        if e.get("ph") == "X" and e.get("pid") != pid]
        checked = 0
        for i in steps:
            span = ours[i]
            lo, hi = ns(span["ts"]), ns(span["ts"]) + ns(span["dur"])
            (marker,) = [e for e in torch_events
                         if e["name"] == "torch step %d" % i]
            m_lo = ns(marker["ts"])
            m_hi = m_lo + ns(marker["dur"])
            inside = [e for e in torch_events
                      if m_lo <= ns(e["ts"]) and
                      ns(e["ts"]) + ns(e["dur"]) <= m_hi]
            self.assertGreater(len(inside), 3, inside)   # marker and ops
            for e in inside:
                t_lo, t_hi = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
                self.assertLessEqual(lo - TOLERANCE_NS, t_lo,
                                     (span, e, (lo - t_lo) / 1e6))
                self.assertLessEqual(t_hi, hi + TOLERANCE_NS,
                                     (span, e, (t_hi - hi) / 1e6))
                checked += 1
        return checked

    def step(self, w, i):
        with w.span("step", cat="engine", i=i):
            with record_function("torch step %d" % i):
                work(self.x)
        time.sleep(0.01)          # 10 ms between steps: a clear gap

    def test_default_schedule(self):
        engine = self.path("engine.json")
        w = tracewriter.open(engine)
        with twt.profile(w) as prof:
            for i in range(4):
                self.step(w, i)
        info = prof.export_chrome_trace(self.path("torch.json"))
        w.close()
        self.assertEqual(info["rule"], "anchor", info)
        self.assertLess(info["anchor_window_ns"], TOLERANCE_NS, info)
        events = self.merge(engine, self.path("torch.json"))
        self.assertGreater(self.check_enclosed(events, range(4),
                                               os.getpid()), 10)
        # The writer's span over the recording encloses every step.
        (window,) = [e for e in self.events(engine)
                     if e["name"] == "torch.profiler"]
        self.assertEqual(window["cat"], "tracewriter.torch")

    def test_schedule_with_two_cycles_and_a_kineto_timebase(self):
        engine = self.path("engine.json")
        exported = []

        def ready(prof):
            path = self.path("cycle%d.json.gz" % len(exported))
            exported.append((path, prof.export_chrome_trace(path)))

        w = tracewriter.open(engine, timebase="kineto")
        schedule = torch.profiler.schedule(wait=1, warmup=1, active=2,
                                           repeat=2)
        with twt.profile(w, schedule=schedule, on_trace_ready=ready) as p:
            for i in range(8):
                self.step(w, i)
                p.step()
        w.close()
        self.assertEqual(len(exported), 2, exported)
        # Steps 2, 3 in the first cycle, 6, 7 in the second; each cycle's
        # legacy ts count from its own start.
        for (path, info), steps in zip(exported, ((2, 3), (6, 7))):
            self.assertEqual(info["rule"], "anchor", info)
            events = self.merge(engine, path)
            self.assertGreater(self.check_enclosed(events, steps,
                                                   os.getpid()), 5)
        # (Read as it is: support's checks of the clock record are for
        # the monotonic timebase.)
        windows = [e for e in parse_strict(read_bytes(engine))
                   if e.get("name") == "torch.profiler"]
        self.assertEqual(len(windows), 2)

    def test_tie_a_plain_export(self):
        # What torch itself wrote, tied afterwards: the anchor run by hand.
        engine = self.path("engine.json")
        w = tracewriter.open(engine)
        with torch.profiler.profile() as prof:
            sync = twt.sync_with(record_function)
            for i in range(2):
                self.step(w, i)
        w.close()
        raw = self.path("raw.json")
        prof.export_chrome_trace(raw)
        info = twt.tie_trace(raw, self.path("tied.json"), sync)
        self.assertEqual(info["rule"], "anchor")
        events = self.merge(engine, self.path("tied.json"))
        self.assertGreater(self.check_enclosed(events, range(2),
                                               os.getpid()), 5)
        # The same without the tie: merge cannot place it.
        r = run_tool([self.tool, "merge", "-o", self.path("untied.json"),
                      engine, raw])
        self.assertIn("merged as it is", r.stderr)


if __name__ == "__main__":
    print("torch %s, Kineto %s" % (torch.__version__,
                                    torch.autograd.kineto_available()))
    unittest.main()
