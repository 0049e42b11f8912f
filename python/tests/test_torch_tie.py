"""tracewriter.torch without torch: the profiler traces of every shape
PyTorch writes, made here the way it writes them, tied to our timeline
and merged by `tracewriter merge` with no --offset.

The shapes (pytorch/kineto, libkineto/src/output_json.cpp, and
torch/autograd/profiler_util.py for the legacy profiler):

  - Kineto of PyTorch 2.4 to 2.6: ts are microseconds ("{}.{:03}") of
    the wall clock since a base, the wall clock floored to 7889238 s
    (ChromeTraceBaseTime); "baseTimeNanoseconds" is written after
    traceEvents, with traceName and displayTimeUnit;
  - Kineto of PyTorch 2.7 on: the same, baseTimeNanoseconds and
    displayTimeUnit before traceEvents;
  - Kineto up to PyTorch 2.3: ts are microseconds since the epoch, no
    base;
  - no Kineto (Debian's python3-torch 1.13): a bare array, pid "CPU
    functions", ts whole microseconds since the profiler started.

tests/test_torch.sh runs the same with the real torch (torch_check.py).
"""

import gzip
import os
import subprocess
import sys
import time
import types

from support import (TraceTest, built, parse_strict, read_bytes, run_tool,
                     tracewriter, unittest)

import tracewriter.torch as twt  # noqa: E402

MS = 1_000_000
KINETO_PERIOD_NS = 7889238 * 1_000_000_000    # ChromeTraceBaseTime


def fmt_ts(ns):
    """output_json.cpp's fmtTs: "us.fraction"."""
    return "%d.%03d" % (ns // 1000, ns % 1000)


class KinetoFile:
    """A trace written as libkineto's ChromeTraceLogger writes it, era
    "2.4" (08fcb941^: the base after the events), "2.7" (the base before)
    or "2.3" (327ac505^: ts since the epoch, no base).  Times given are
    wall-clock ns."""

    def __init__(self, era, wall_now_ns, trace_name="/tmp/rank0.json"):
        self.era = era
        self.base = 0 if era == "2.3" else (
            wall_now_ns // KINETO_PERIOD_NS * KINETO_PERIOD_NS)
        self.trace_name = trace_name
        self.parts = []
        if era == "2.7":
            self.parts.append(
                ' {\n    "schemaVersion": 1,\n    "deviceProperties": [],'
                '\n    \n      "record_shapes": 1,'
                '\n    "displayTimeUnit": "ms",\n'
                '    "baseTimeNanoseconds": %d,\n    "traceEvents": [\n    '
                % self.base)
        else:
            self.parts.append('\n{\n  "schemaVersion": 1,'
                              '\n  "deviceProperties": [\n  ],'
                              '\n  "record_shapes": 1,'
                              '\n  "traceEvents": [')

    def rel(self, wall_ns):
        return max(0, wall_ns - self.base)

    def meta(self, name, pid, tid, key, value, wall_ns):
        ts = fmt_ts(self.rel(wall_ns))
        if self.era == "2.7":
            self.parts.append(
                '\n  {\n    "ph": "M",\n    "name": "%s",\n    "ts": %s,\n'
                '    "pid": %s,\n    "tid": %s,\n    "args": {\n'
                '      "%s": %s\n    }\n  },'
                % (name, ts, pid, tid, key, value))
        else:
            self.parts.append(
                '\n  {\n    "name": "%s", "ph": "M", "ts": %s, "pid": %s, '
                '"tid": %s,\n    "args": {\n      "%s": %s\n    }\n  },'
                % (name, ts, pid, tid, key, value))

    def complete(self, cat, name, pid, tid, wall_ns, dur_ns, args=""):
        ts, dur = fmt_ts(self.rel(wall_ns)), fmt_ts(dur_ns)
        args = (',\n    "args": {\n      %s\n    }' % args) if args else ""
        if self.era == "2.7":
            self.parts.append(
                '\n  {\n    "ph": "X",\n    "cat": "%s",\n    "name": "%s",'
                '\n    "pid": %s,\n    "tid": %s,\n    "ts": %s,\n'
                '    "dur": %s\n    %s\n  },'
                % (cat, name, pid, tid, ts, dur, args))
        else:
            self.parts.append(
                '\n  {\n    "ph": "X", "cat": "%s", "name": "%s", "pid": %s,'
                ' "tid": %s,\n    "ts": %s, "dur": %s%s\n  },'
                % (cat, name, pid, tid, ts, dur, args))

    def finish(self, wall_end_ns):
        end = fmt_ts(self.rel(wall_end_ns))
        if self.era == "2.7":
            self.parts.append(
                '\n  {\n    "ph": "i",\n    \n    "s": "g",\n'
                '    "name": "Record Window End",\n    "pid": "",\n'
                '    "tid": "",\n    "ts": %s\n    \n  }' % end)
            self.parts.append('\n  ],"traceName": "%s" }' % self.trace_name)
        else:
            self.parts.append(
                '\n  {\n    "name": "Record Window End", "ph": "i", '
                '"s": "g",\n    "pid": "", "tid": "", "ts": %s\n  }\n  ],'
                % end)
            if self.era == "2.4":
                self.parts.append(
                    '\n  "traceName": "%s",\n  "displayTimeUnit": "ms",\n'
                    '  "baseTimeNanoseconds": %d\n}'
                    % (self.trace_name, self.base))
            else:
                self.parts.append('\n  "traceName": "%s",\n'
                                  '  "displayTimeUnit": "ns"\n}'
                                  % self.trace_name)
        return "".join(self.parts)


def legacy_file(events, start_wall_ns):
    """torch 1.13's EventList.export_chrome_trace: a bare array, whole
    microseconds since the profiler started."""
    out = "["
    for name, wall_ns, dur_ns in events:
        out += ('{"name": "%s", "ph": "X", "ts": %d, "dur": %d, "tid": 1, '
                '"pid": "CPU functions", "args": {}}, '
                % (name, (wall_ns - start_wall_ns) // 1000, dur_ns // 1000))
    return out[:-2] + "]"


class Run:
    """Our spans "step" i, written by a real writer at monotonic times,
    and the wall-clock times of the torch events inside each: the
    record_function "torch step i" from 0.5 ms into the span for 4 ms,
    and two ops inside it."""

    def __init__(self, test, steps=3, **options):
        self.test = test
        self.engine = test.path("engine.json")
        self.offset = twt.wall_offset_ns()      # wall - monotonic
        w = tracewriter.open(self.engine, **options)
        t = tracewriter.now_ns() - 200 * MS
        self.spans = []
        for i in range(steps):
            start = t + i * 20 * MS
            w.complete("step", start, 5 * MS, cat="engine", i=i)
            self.spans.append(start)
        self.anchor_mono = t - 10 * MS           # before the first step
        w.close()
        self.pid = os.getpid()

    def wall(self, mono):
        return mono + self.offset

    def torch_events(self):
        """(cat, name, wall_ns, dur_ns) of every torch event."""
        evs = []
        for i, start in enumerate(self.spans):
            w0 = self.wall(start) + MS // 2
            evs.append(("user_annotation", "torch step %d" % i, w0, 4 * MS))
            evs.append(("cpu_op", "aten::mm", w0 + 100_000, 1_500_000))
            evs.append(("cpu_op", "aten::tanh", w0 + 2 * MS, 1 * MS))
        return evs

    def sync(self):
        """The Sync of an anchor run at anchor_mono for 10 us, bracketed
        by 2 us on either side."""
        return twt.Sync(self.anchor_mono - 2000, self.anchor_mono + 12_000,
                        self.offset)

    def kineto(self, era, anchor=True):
        k = KinetoFile(era, self.wall(self.spans[0]))
        k.meta("process_name", self.pid, 0, "name", '"python3"',
               self.wall(self.anchor_mono))
        k.meta("thread_name", self.pid, self.pid, "name", '"thread 1"',
               self.wall(self.anchor_mono))
        if anchor:
            wa = self.wall(self.anchor_mono)
            k.complete("user_annotation", twt.ANCHOR, self.pid, self.pid,
                       wa, 10_000, '"External id": 1,"Record function id": '
                       '0, "Ev Idx": 0')
            # Kineto's copy of an annotation on a GPU stream: 1 ns
            # earlier, 2 ns longer, on the device's pid.
            k.complete("gpu_user_annotation", twt.ANCHOR, 0, 7,
                       wa + 3 * MS - 1, 10_002, '"External id": 1')
        for n, (cat, name, wall_ns, dur_ns) in enumerate(
                self.torch_events(), 2):
            k.complete(cat, name, self.pid, self.pid, wall_ns, dur_ns,
                       '"External id": %d,"Record function id": 0, '
                       '"Ev Idx": %d' % (n, n))
        # A GPU kernel of the last step, on device 0, stream 7.
        k.complete("kernel", "void gemm<float>(...)", 0, 7,
                   self.wall(self.spans[-1]) + 2 * MS, 500_000,
                   '"queued": 0, "device": 0, "stream": 7, '
                   '"correlation": 9, "External id": 3')
        return k.finish(self.wall(self.spans[-1]) + 10 * MS), k.base

    def legacy(self, anchor=True):
        start = self.wall(self.anchor_mono) - 3 * MS
        evs = [(name, wall_ns, dur_ns)
               for _, name, wall_ns, dur_ns in self.torch_events()]
        if anchor:
            evs.insert(0, (twt.ANCHOR, self.wall(self.anchor_mono), 10_000))
        return legacy_file(evs, start), start

    def check_merged(self, profile, slack_ns=MS):
        """merge engine.json profile with no --offset: every torch event
        of step i is inside our span i within slack_ns, and where it was
        put (0.5 ms into the span) within 50 us."""
        tool = self.test.tool
        out = self.test.path("merged.json")
        r = run_tool([tool, "merge", "--explain", "-o", out, self.engine,
                      profile])
        self.test.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.test.assertNotIn("merged as it is", r.stderr)
        doc = parse_strict(read_bytes(out))
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        ours = {e["args"]["i"]: e for e in events
                if e.get("name") == "step" and e.get("pid") == self.pid}
        self.test.assertEqual(sorted(ours), list(range(len(self.spans))))
        checked = 0
        for i, span in ours.items():
            lo = int(span["ts"] * 1000)
            hi = lo + int(span["dur"] * 1000)
            (marker,) = [e for e in events
                         if e.get("name") == "torch step %d" % i]
            m_lo = int(marker["ts"] * 1000)
            self.test.assertLess(abs(m_lo - (lo + MS // 2)), 50_000,
                                 (span, marker))
            names = ("torch step %d" % i, "aten::mm", "aten::tanh")
            inside = [e for e in events if e.get("ph") == "X" and
                      e.get("name") in names and
                      m_lo <= e["ts"] * 1000 < m_lo + 4 * MS]
            self.test.assertEqual(len(inside), 3, inside)
            for e in inside:
                self.test.assertLessEqual(lo - slack_ns, e["ts"] * 1000)
                self.test.assertLessEqual(
                    (e["ts"] + e["dur"]) * 1000, hi + slack_ns)
                checked += 1
        return checked


class TestTieTrace(TraceTest):

    def setUp(self):
        super().setUp()
        self.tool = built("tools/tracewriter")
        if not self.tool:
            self.skipTest("tools/tracewriter is not built")

    def write(self, name, text):
        path = self.path(name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def tie(self, src, sync=None, dst="tied.json"):
        dst = self.path(dst)
        info = twt.tie_trace(src, dst, sync)
        doc = parse_strict(read_bytes(dst))     # one of each key
        keys = list(doc)
        self.assertLess(keys.index("baseTimeNanoseconds"),
                        keys.index("traceEvents"), keys)
        self.assertEqual(doc["baseTimeNanoseconds"],
                         info["baseTimeNanoseconds"])
        self.assertEqual(doc["tracewriter"], info)
        return dst, doc, info

    def test_kineto_2_4_base_after_the_events_with_the_anchor(self):
        run = Run(self)
        text, base = run.kineto("2.4")
        src = self.write("rank0.pt.trace.json", text)
        self.assertLess(text.index("traceEvents"),
                        text.index("baseTimeNanoseconds"))
        dst, doc, info = self.tie(src, run.sync())
        self.assertEqual(info["rule"], "anchor")
        self.assertEqual(info["kinetoBaseTimeNanoseconds"], base)
        # The anchor's middle (wall - base + 5 us) is ours (+ 5 us).
        mid_torch = run.wall(run.anchor_mono) - base + 5000
        mid_ours = run.anchor_mono + 5000
        self.assertEqual(info["baseTimeNanoseconds"],
                         mid_ours + run.offset - mid_torch)
        # Kineto's own base and the anchor's agree here.
        self.assertEqual(info["baseTimeNanoseconds"], base)
        # Every member kept, in order, the events as they were.
        original = parse_strict(text.encode())
        self.assertEqual([k for k in doc if k not in
                          ("baseTimeNanoseconds", "tracewriter")],
                         [k for k in original
                          if k != "baseTimeNanoseconds"])
        self.assertEqual(doc["traceEvents"], original["traceEvents"])
        self.assertEqual(run.check_merged(dst), 9)

    def test_the_anchor_is_what_ties_it(self):
        # A profiler whose wall clock was 30 ms off ours: the anchor, run
        # on our clock, puts its events where they happened.
        run = Run(self)
        run_off = Run.__new__(Run)
        run_off.__dict__.update(run.__dict__)
        run_off.offset = run.offset + 30 * MS
        text, base = run_off.kineto("2.4")
        src = self.write("skewed.json", text)
        dst, _, info = self.tie(src, run.sync())
        self.assertEqual(info["rule"], "anchor")
        self.assertEqual(info["baseTimeNanoseconds"], base - 30 * MS)
        self.assertEqual(run.check_merged(dst), 9)

    def test_the_narrowest_of_several_anchor_runs(self):
        # sync_with ran the anchor twice (preempted in the first run's
        # bracket, whose middle is 0.5 ms early): the second, narrow one
        # ties the trace, found by its order among the anchor events.
        run = Run(self)
        first = run.anchor_mono - 2 * MS
        text, _ = run.legacy()
        ev = ('{"name": "%s", "ph": "X", "ts": %d, "dur": 10, "tid": 1, '
              '"pid": "CPU functions", "args": {}}, '
              % (twt.ANCHOR, (run.wall(first) - (run.wall(run.anchor_mono)
                                                 - 3 * MS)) // 1000))
        text = text.replace("[", "[" + ev, 1)
        src = self.write("two-anchors.json", text)
        narrow = (run.anchor_mono - 2000, run.anchor_mono + 12_000)
        wide = (first - 1500 * 1000, first + 500 * 1000 + 10_000)
        sync = twt.Sync(narrow[0], narrow[1], run.offset,
                        windows=[wide, narrow])
        dst, _, info = self.tie(src, sync)
        self.assertEqual(info["anchor_window_ns"], 14_000)
        self.assertEqual(run.check_merged(dst), 9)
        # Taken for the first run's event, it would be 0.5 ms off.
        bad = twt.Sync(wide[0], wide[1], run.offset, windows=[wide, narrow])
        dst, _, _ = self.tie(src, bad, dst="off.json")
        with self.assertRaises(AssertionError):
            run.check_merged(dst)

    def test_kineto_2_4_without_the_anchor_keeps_its_base(self):
        run = Run(self)
        text, base = run.kineto("2.4", anchor=False)
        src = self.write("rank0.json", text)
        dst, doc, info = self.tie(src)
        self.assertEqual(info, {"rule": "kineto",
                                "baseTimeNanoseconds": base})
        self.assertEqual(run.check_merged(dst), 9)

    def test_kineto_2_7_base_before_the_events(self):
        run = Run(self)
        text, base = run.kineto("2.7", anchor=False)
        src = self.write("rank0.json", text)
        self.assertLess(text.index("baseTimeNanoseconds"),
                        text.index("traceEvents"))
        dst, doc, info = self.tie(src)
        self.assertEqual(info["rule"], "kineto")
        self.assertEqual(doc["baseTimeNanoseconds"], base)
        self.assertEqual(run.check_merged(dst), 9)
        # With the anchor too, gzip in and out.
        text, base = run.kineto("2.7")
        src = self.path("rank0.json.gz")
        with gzip.open(src, "wt", encoding="utf-8") as f:
            f.write(text)
        dst, doc, info = self.tie(src, run.sync(), "tied.json.gz")
        self.assertEqual(info["rule"], "anchor")
        with open(dst, "rb") as f:
            self.assertEqual(f.read(2), b"\x1f\x8b")
        self.assertEqual(run.check_merged(dst), 9)

    def test_kineto_2_3_epoch_microseconds(self):
        run = Run(self)
        text, base = run.kineto("2.3", anchor=False)
        self.assertEqual(base, 0)
        src = self.write("old.json", text)
        dst, doc, info = self.tie(src)
        self.assertEqual(info, {"rule": "kineto-epoch",
                                "baseTimeNanoseconds": 0})
        self.assertEqual(run.check_merged(dst), 9)

    def test_legacy_bare_array(self):
        run = Run(self)
        text, start = run.legacy()
        src = self.write("legacy.json", text)
        dst, doc, info = self.tie(src, run.sync())
        self.assertEqual(info["rule"], "anchor")
        self.assertEqual(doc["traceEvents"], parse_strict(text.encode()))
        # Whole microseconds: within 1 us of the start.
        self.assertLessEqual(abs(info["baseTimeNanoseconds"] - start), 1000)
        self.assertEqual(run.check_merged(dst), 9)

    def test_legacy_without_the_anchor(self):
        run = Run(self)
        text, start = run.legacy(anchor=False)
        src = self.write("legacy.json", text)
        sync = run.sync()
        sync.trace_start_us = start // 1000
        dst, doc, info = self.tie(src, sync)
        self.assertEqual(info["rule"], "trace-start")
        self.assertEqual(info["baseTimeNanoseconds"], start // 1000 * 1000)
        self.assertEqual(run.check_merged(dst), 9)
        # Nothing at all ties it: an error, and nothing written.
        with self.assertRaisesRegex(ValueError, "nothing ties it"):
            twt.tie_trace(src, self.path("none.json"))
        self.assertFalse(os.path.exists(self.path("none.json")))

    def test_not_a_trace(self):
        for text in ('[{"ph": "X"', '{"traceEvents": []} x', '"x"',
                     '{"schemaVersion": 1}', '{"a" 1}'):
            src = self.write("bad.json", text)
            with self.assertRaises(ValueError, msg=text):
                twt.tie_trace(src, self.path("out.json"), None)
            self.assertFalse(os.path.exists(self.path("out.json")))
        self.assertEqual(os.listdir(self.dir), ["bad.json"])


# ------------------------------------------- the helper on a fake torch 2.x

class FakeTorch:
    """The part of PyTorch 2.x that tracewriter.torch.profile uses:
    torch.profiler.profile (start_trace, stop_trace, export_chrome_trace,
    called as torch's own __enter__, __exit__ and on_trace_ready do;
    self.profiler.kineto_results.trace_start_us()) and
    torch.autograd.profiler.record_function, whose spans the fake
    profiler records while it runs and exports in the shape of Kineto of
    PyTorch 2.4 to 2.6."""

    def __init__(self, clock_error_ns=0):
        fake = self
        self.recording = None
        self.clock_error_ns = clock_error_ns   # its wall clock less ours

        def now():
            return time.time_ns() + fake.clock_error_ns

        class record_function:
            def __init__(self, name):
                self.name = name

            def __enter__(self):
                self.start = now()
                return self

            def __exit__(self, *exc):
                if fake.recording is not None:
                    fake.recording.append((self.name, self.start,
                                           now() - self.start))

        class KinetoResults:
            def __init__(self, start_us):
                self.start_us = start_us

            def trace_start_us(self):
                return self.start_us

        class profile:
            def __init__(self, *, activities=None, schedule=None,
                         on_trace_ready=None, record_shapes=False):
                self.on_trace_ready = on_trace_ready
                self.profiler = None
                self.events = None

            def __enter__(self):
                self.start_trace()
                return self

            def __exit__(self, *exc):
                self.stop_trace()
                if self.on_trace_ready:
                    self.on_trace_ready(self)

            def start_trace(self):
                fake.recording = self.events = []
                self.profiler = types.SimpleNamespace(
                    kineto_results=KinetoResults(now() // 1000))

            def stop_trace(self):
                fake.recording = None
                self.end = now()

            def export_chrome_trace(self, path):
                k = KinetoFile("2.4", self.end)
                for name, start, dur in self.events:
                    k.complete("cpu_op" if name.startswith("aten::")
                               else "user_annotation", name, os.getpid(),
                               os.getpid(), start, dur)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(k.finish(self.end))

        self.modules = {
            "torch": types.ModuleType("torch"),
            "torch.profiler": types.ModuleType("torch.profiler"),
            "torch.autograd": types.ModuleType("torch.autograd"),
            "torch.autograd.profiler":
                types.ModuleType("torch.autograd.profiler"),
        }
        self.modules["torch.profiler"].profile = profile
        self.modules["torch.autograd.profiler"].record_function = \
            record_function
        self.modules["torch"].profiler = self.modules["torch.profiler"]
        self.modules["torch"].autograd = self.modules["torch.autograd"]
        self.modules["torch.autograd"].profiler = \
            self.modules["torch.autograd.profiler"]
        self.record_function = record_function

    def __enter__(self):
        self.saved = {k: sys.modules.get(k) for k in self.modules}
        sys.modules.update(self.modules)
        twt._PROFILE = None
        return self

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
        twt._PROFILE = None


class TestProfileHelper(TraceTest):

    def setUp(self):
        super().setUp()
        self.tool = built("tools/tracewriter")
        if not self.tool:
            self.skipTest("tools/tracewriter is not built")

    def profile_steps(self, clock_error_ns):
        engine = self.path("engine.json")
        exported = []
        with FakeTorch(clock_error_ns) as torch:
            w = tracewriter.open(engine)
            rf = torch.record_function

            def ready(prof):
                exported.append(prof.export_chrome_trace(
                    self.path("torch.json")))

            with twt.profile(w, on_trace_ready=ready) as prof:
                self.assertIsInstance(prof, torch.modules[
                    "torch.profiler"].profile)
                for i in range(3):
                    with w.span("step", cat="engine", i=i):
                        with rf("torch step %d" % i):
                            with rf("aten::mm"):
                                time.sleep(0.001)
                            with rf("aten::tanh"):
                                time.sleep(0.001)
                    time.sleep(0.005)
            w.close()
        return engine, exported

    def check(self, engine, tolerance_ns=MS):
        out = self.path("merged.json")
        r = run_tool([self.tool, "merge", "-o", out, engine,
                      self.path("torch.json")])
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = parse_strict(read_bytes(out))
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        pid = os.getpid()
        ours = [e for e in events if e.get("name") == "step"]
        theirs = [e for e in events if e.get("pid") != pid and
                  e.get("ph") == "X"]
        self.assertEqual(len(ours), 3)
        for span in ours:
            i = span["args"]["i"]
            (marker,) = [e for e in theirs
                         if e["name"] == "torch step %d" % i]
            inside = [e for e in theirs
                      if marker["ts"] <= e["ts"] and
                      e["ts"] + e["dur"] <= marker["ts"] + marker["dur"]]
            self.assertEqual(len(inside), 3, inside)
            for e in inside:
                self.assertLessEqual((span["ts"] * 1000) - tolerance_ns,
                                     e["ts"] * 1000, (span, e))
                self.assertLessEqual((e["ts"] + e["dur"]) * 1000,
                                     (span["ts"] + span["dur"]) * 1000 +
                                     tolerance_ns, (span, e))
        return [e for e in events if e.get("name") == "torch.profiler"]

    def test_kineto_shape_through_the_helper(self):
        engine, exported = self.profile_steps(0)
        (info,) = exported
        self.assertEqual(info["rule"], "anchor")
        self.assertLess(info["anchor_window_ns"], MS)
        (window,) = self.check(engine)
        self.assertEqual(window["cat"], "tracewriter.torch")

    def test_kineto_shape_with_a_skewed_wall_clock(self):
        # Its wall clock 40 ms ahead of ours (another clock source):
        # the anchor ties it anyway.
        engine, exported = self.profile_steps(40 * MS)
        self.assertEqual(exported[0]["rule"], "anchor")
        self.check(engine)


class TestImport(TraceTest):

    def test_importing_does_not_import_torch(self):
        r = subprocess.run(
            [sys.executable, "-B", "-c",
             "import sys, tracewriter.torch; print('torch' in sys.modules)"],
            env=dict(os.environ, PYTHONPATH=os.path.dirname(
                os.path.dirname(tracewriter.__file__))),
            capture_output=True, text=True, timeout=60)
        self.assertEqual((r.returncode, r.stdout), (0, "False\n"), r.stderr)

    def test_profile_without_torch(self):
        import importlib.util
        if importlib.util.find_spec("torch") is not None:
            self.skipTest("torch is installed")
        twt._PROFILE = None
        with self.assertRaises(ImportError):
            twt.profile(None)


if __name__ == "__main__":
    unittest.main()
