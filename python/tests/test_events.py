"""Every phase through the binding, read back strictly and compared field
by field; arguments of every type."""

import asyncio
import enum
import fractions
import math
import numbers
import os
import threading

from support import TraceTest, tracewriter, us_to_ns, unittest
from tracewriter import now_ns

PID = os.getpid()


class EventTest(TraceTest):
    """Opens self.w on a fresh trace; self.written() closes it and returns
    the user events."""

    options = {}

    def setUp(self):
        super().setUp()
        self.w = tracewriter.open(self.path(), **self.options)
        self.addCleanup(self.w.close)

    def written(self):
        self.w.close()
        return self.events(self.path())

    def assertHere(self, ev):
        """The event has this process's pid and the calling thread's
        kernel tid (the defaults)."""
        self.assertEqual(ev["pid"], PID)
        self.assertEqual(ev["tid"], threading.get_native_id())


class TestSpans(EventTest):

    def test_context_manager(self):
        before = now_ns()
        with self.w.span("prefill", cat="llm", tokens=512) as s:
            inside = now_ns()
            s.set(cached=7)
        after = now_ns()
        (ev,) = self.written()
        self.assertEqual(ev["ph"], "X")
        self.assertEqual(ev["name"], "prefill")
        self.assertEqual(ev["cat"], "llm")
        self.assertEqual(ev["args"], {"tokens": 512, "cached": 7})
        self.assertHere(ev)
        ts, dur = us_to_ns(ev["ts"]), us_to_ns(ev["dur"])
        self.assertLessEqual(before, ts)
        self.assertLessEqual(ts, inside)
        self.assertLessEqual(inside, ts + dur)
        self.assertLessEqual(ts + dur, after)

    def test_context_manager_body_raises(self):
        with self.assertRaises(KeyError):
            with self.w.span("failing"):
                raise KeyError("body")
        (ev,) = self.written()
        self.assertEqual(ev["name"], "failing")

    def test_span_error_does_not_hide_the_body_exception(self):
        # A bad argument fails the span, but the body's exception wins.
        with self.assertRaises(KeyError):
            with self.w.span("s", bad=object()):
                raise KeyError("body")
        with self.assertRaises(TypeError):
            with self.w.span("s", bad=object()):
                pass
        self.assertEqual(self.written(), [])

    def test_decorator(self):
        calls = []

        @self.w.span(cat="app", kind="handler")
        def handle(x, y=2):
            """Doc."""
            calls.append((x, y))
            return x + y

        @self.w.span("named")
        def other():
            raise ValueError("inside")

        @self.w.span
        def bare():
            return "bare"

        self.assertEqual(handle.__name__, "handle")
        self.assertEqual(handle.__doc__, "Doc.")
        self.assertEqual(handle(1), 3)
        self.assertEqual(handle(5, y=6), 11)
        self.assertRaises(ValueError, other)
        self.assertEqual(bare(), "bare")
        self.assertEqual(calls, [(1, 2), (5, 6)])
        evs = self.written()
        qual = "TestSpans.test_decorator.<locals>."
        self.assertEqual([(e["ph"], e["name"]) for e in evs],
                         [("X", qual + "handle"), ("X", qual + "handle"),
                          ("X", "named"), ("X", qual + "bare")])
        self.assertEqual(evs[0]["cat"], "app")
        self.assertEqual(evs[0]["args"], {"kind": "handler"})
        self.assertNotIn("cat", evs[2])
        for ev in evs:
            self.assertHere(ev)

    def test_decorator_args_checked_once(self):
        with self.assertRaises(TypeError):
            @self.w.span("bad", arg=object())
            def f():
                pass

        @self.w.span("good", s="text", n=1)
        def g(i):
            return i

        self.assertEqual([g(i) for i in range(3)], [0, 1, 2])
        evs = self.written()
        self.assertEqual([e["args"] for e in evs], [{"s": "text", "n": 1}] * 3)

    def test_decorator_nested_spans_nest_in_time(self):
        @self.w.span("outer")
        def outer():
            inner()

        @self.w.span("inner")
        def inner():
            pass

        outer()
        inner_ev, outer_ev = self.written()       # inner ends first
        self.assertEqual((inner_ev["name"], outer_ev["name"]),
                         ("inner", "outer"))
        o0, o1 = us_to_ns(outer_ev["ts"]), us_to_ns(outer_ev["dur"])
        i0, i1 = us_to_ns(inner_ev["ts"]), us_to_ns(inner_ev["dur"])
        self.assertLessEqual(o0, i0)
        self.assertLessEqual(i0 + i1, o0 + o1)

    def assertAsyncPairs(self, events):
        """Every async record is a 'b' then an 'e' of one id, with the
        same name and cat, on this process; returns {id: (b, e)} in the
        order the begins were written."""
        pairs = {}
        for ev in events:
            if ev["ph"] not in "be":
                continue
            self.assertEqual(ev["pid"], PID)
            id = ev["id"]
            if ev["ph"] == "b":
                self.assertNotIn(id, pairs, "two begins of id %s" % id)
                pairs[id] = [ev, None]
            else:
                self.assertIn(id, pairs, "an end before its begin: %r" % ev)
                b = pairs[id][0]
                self.assertIsNone(pairs[id][1], "two ends of id %s" % id)
                self.assertEqual((ev["name"], ev["cat"]),
                                 (b["name"], b["cat"]))
                self.assertLessEqual(us_to_ns(b["ts"]), us_to_ns(ev["ts"]))
                pairs[id][1] = ev
        for id, (b, e) in pairs.items():
            self.assertIsNotNone(e, "no end of id %s" % id)
        return {id: tuple(p) for id, p in pairs.items()}

    def test_async(self):
        w = self.w

        @w.span("coro", cat="aio", model="m")
        async def coro(n):
            await asyncio.sleep(0)
            return n * 2

        async def main():
            async with w.span("block", tokens=3) as s:
                self.assertIsInstance(s.id, int)
                r = await coro(21)
                s.set(result=r)
            self.assertIsNone(s.id)
            return r

        before = now_ns()
        self.assertEqual(asyncio.run(main()), 42)
        after = now_ns()
        events = self.written()
        self.assertEqual([(e["ph"], e["name"]) for e in events],
                         [("b", "block"), ("b", "coro"), ("e", "coro"),
                          ("e", "block")])
        block_b, coro_b, coro_e, block_e = events
        # The coroutine called inside the block nests under it: the same
        # async track, its id and its cat (test_async.py has more).
        self.assertEqual({(e["id"], e["cat"]) for e in events},
                         {(block_b["id"], "default")})
        # The arguments known at the start on the begin, set() on the end.
        self.assertEqual(block_b["args"], {"tokens": 3})
        self.assertEqual(block_e["args"], {"tokens": 3, "result": 42})
        self.assertEqual(coro_b["args"], {"model": "m"})
        self.assertNotIn("args", coro_e)
        for ev in events:
            self.assertHere(ev)
            self.assertLessEqual(before, us_to_ns(ev["ts"]))
            self.assertLessEqual(us_to_ns(ev["ts"]), after)
        self.assertLessEqual(us_to_ns(block_b["ts"]), us_to_ns(coro_b["ts"]))
        self.assertLessEqual(us_to_ns(coro_e["ts"]), us_to_ns(block_e["ts"]))

    def test_async_raises_and_cancelled(self):
        w = self.w

        @w.span("fails")
        async def fails():
            await asyncio.sleep(0)
            raise KeyError("k")

        @w.span("forever")
        async def forever(started):
            started.set()
            await asyncio.Event().wait()

        async def main():
            with self.assertRaises(KeyError):
                await fails()
            with self.assertRaises(ZeroDivisionError):
                async with w.span("body raises"):
                    1 / 0
            started = asyncio.Event()
            task = asyncio.ensure_future(forever(started))
            await started.wait()
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task

        asyncio.run(main())
        events = self.written()
        pairs = self.assertAsyncPairs(events)
        self.assertEqual([b["name"] for b, e in pairs.values()],
                         ["fails", "body raises", "forever"])
        self.assertEqual(len(events), 6)

    def test_async_same_span_twice_open(self):
        w = self.w
        s = w.span("once")

        async def main():
            async with s:
                with self.assertRaises(RuntimeError):
                    async with s:
                        pass
            with self.assertRaises(TypeError):
                async with w.span():
                    pass

        asyncio.run(main())
        self.assertEqual([e["ph"] for e in self.written()], ["b", "e"])

    def test_ten_coroutines_in_flight_nest_record_by_record(self):
        """Ten requests in flight on one event loop: each request is its
        own async track (b/e with an id), and each step inside a request,
        and the plain function called from it, is on that track and lies
        within that request's begin and end."""
        w = self.w
        n, steps = 10, 6

        @w.span(cat="tokenizer")
        def tokenize(i, k):
            return i * k

        @w.span("request", cat="serve")
        async def request(i):
            for k in range(steps):
                async with w.span("step", cat="serve", req=i, k=k):
                    await asyncio.sleep(0)       # the others run here
                    tokenize(i, k)
                    await asyncio.sleep(0)
            return i

        async def main():
            return await asyncio.gather(*(request(i) for i in range(n)))

        self.assertEqual(asyncio.run(main()), list(range(n)))
        tokenize_name = tokenize.__qualname__
        events = self.written()
        self.assertEqual(len(events), 2 * n + 4 * n * steps)
        # The steps and tokenize calls of request i on its track: the
        # pairs are the requests' only.
        pairs = self.assertAsyncPairs(
            [e for e in events if e["name"] == "request"])
        self.assertEqual(len(pairs), n)
        track = {e["args"]["req"]: e["id"] for e in events
                 if e["ph"] == "b" and e["name"] == "step"}
        self.assertEqual(len(set(track.values())), n)
        loop_tid = threading.get_native_id()
        for ev in events:
            self.assertEqual(ev["tid"], loop_tid)
            self.assertIn(ev["ph"], "be")
        # The requests, in the order gather started them.
        requests = [p for p in pairs.values() if p[0]["name"] == "request"]
        self.assertEqual(len(requests), n)
        for i, (b, e) in enumerate(requests):
            self.assertEqual(track[i], b["id"])

        def span(pair):
            return us_to_ns(pair[0]["ts"]), us_to_ns(pair[1]["ts"])

        # They were in flight at once: intervals that overlap without one
        # holding the other, which as 'X' on one thread would misnest.
        r = [span(p) for p in requests]
        self.assertTrue(any(a0 < b0 < a1 < b1 for a0, a1 in r
                            for b0, b1 in r))
        # On each request's track, record by record: its begin, each
        # step holding its tokenize call, its end; the times nested.
        for i, (req_b, req_e) in enumerate(requests):
            mine = [e for e in events if e["id"] == req_b["id"]]
            self.assertEqual(
                [(e["ph"], e["name"]) for e in mine],
                [("b", "request")] + [("b", "step"), ("b", tokenize_name),
                                      ("e", tokenize_name), ("e", "step")]
                * steps + [("e", "request")])
            self.assertEqual({e["cat"] for e in mine}, {"serve"})
            self.assertEqual([e["args"]["k"] for e in mine
                              if e["ph"] == "b" and e["name"] == "step"],
                             list(range(steps)))
            stack = []
            for e in mine:
                t = us_to_ns(e["ts"])
                if stack:
                    self.assertLessEqual(stack[-1], t)
                if e["ph"] == "b":
                    stack.append(t)
                else:
                    stack.pop()

    def test_with_needs_a_name(self):
        with self.assertRaises(TypeError):
            with self.w.span():
                pass

    def test_complete(self):
        self.w.complete("step", 1234567891, 2000, cat="c", i=1)
        self.w.complete("zero", 0, 0)
        a, b = self.written()
        self.assertEqual((a["ph"], a["name"], a["cat"]), ("X", "step", "c"))
        self.assertEqual(str(a["ts"]), "1234567.891")
        self.assertEqual(us_to_ns(a["dur"]), 2000)
        self.assertEqual(a["args"], {"i": 1})
        self.assertHere(a)
        self.assertEqual((us_to_ns(b["ts"]), us_to_ns(b["dur"])), (0, 0))

    def test_complete_bad_times(self):
        self.assertRaises(OverflowError, self.w.complete, "x", -1, 5)
        self.assertRaises(OverflowError, self.w.complete, "x", 1, 2**64)
        self.assertRaises(TypeError, self.w.complete, "x", 1.5, 5)
        self.assertEqual(self.written(), [])

    def test_begin_end(self):
        self.w.begin("B1", cat="c", k="v")
        self.w.end()
        self.w.end("B2", cat="c")
        b, e1, e2 = self.written()
        self.assertEqual((b["ph"], b["name"], b["cat"], b["args"]),
                         ("B", "B1", "c", {"k": "v"}))
        self.assertEqual(e1["ph"], "E")
        self.assertNotIn("name", e1)
        self.assertEqual((e2["ph"], e2["name"]), ("E", "B2"))
        self.assertLessEqual(us_to_ns(b["ts"]), us_to_ns(e1["ts"]))
        for ev in (b, e1, e2):
            self.assertHere(ev)


class TestPhases(EventTest):

    def test_instant_scopes(self):
        before = now_ns()
        self.w.instant("t0")
        self.w.instant("t1", scope="t")
        self.w.instant("p", scope="p", cat="c")
        self.w.instant("g", scope="g", n=1)
        self.assertRaises(ValueError, self.w.instant, "bad", scope="x")
        evs = self.written()
        self.assertEqual([(e["ph"], e["name"], e["s"]) for e in evs],
                         [("I", "t0", "t"), ("I", "t1", "t"),
                          ("I", "p", "p"), ("I", "g", "g")])
        self.assertEqual(evs[2]["cat"], "c")
        self.assertEqual(evs[3]["args"], {"n": 1})
        self.assertLessEqual(before, us_to_ns(evs[0]["ts"]))
        for ev in evs:
            self.assertHere(ev)

    def test_counter_series(self):
        self.w.counter("kv_cache", cat="mem", used=0.25, blocks=1210,
                       big=2**64 - 1)
        self.w.counter("one", name=3)
        a, b = self.written()
        self.assertEqual((a["ph"], a["name"], a["cat"]),
                         ("C", "kv_cache", "mem"))
        self.assertEqual(list(a["args"]), ["used", "blocks", "big"])
        self.assertEqual(float(a["args"]["used"]), 0.25)
        self.assertEqual(a["args"]["blocks"], 1210)
        self.assertEqual(float(a["args"]["big"]), 2.0**64)  # nearest double
        self.assertEqual(b["args"], {"name": 3})

    def test_counter_refuses_non_numbers(self):
        self.assertError(tracewriter.EEVENT, self.w.counter, "c", s="x")
        self.assertError(tracewriter.EEVENT, self.w.counter, "c", b=True)
        self.assertError(tracewriter.EEVENT, self.w.counter, "c", n=2**64)
        self.assertError(tracewriter.EEVENT, self.w.counter, "c")
        self.assertEqual(self.w.stats().rejected, 4)
        self.assertEqual(self.written(), [])

    def test_async(self):
        self.w.async_begin("request", 0x1F, cat="http", path="/v1")
        self.w.async_instant("first_token", 0x1F, cat="http")
        self.w.async_end("request", 0x1F, cat="http", status=200)
        self.w.async_begin("max", 2**64 - 1)
        self.assertRaises(OverflowError, self.w.async_end, "x", 2**64)
        self.assertRaises(OverflowError, self.w.async_end, "x", -1)
        self.assertRaises(TypeError, self.w.async_end, "x", "id")
        b, n, e, m = self.written()
        self.assertEqual([(x["ph"], x["name"], x["id"], x["cat"])
                          for x in (b, n, e)],
                         [("b", "request", "0x1f", "http"),
                          ("n", "first_token", "0x1f", "http"),
                          ("e", "request", "0x1f", "http")])
        self.assertEqual(b["args"], {"path": "/v1"})
        self.assertEqual(e["args"], {"status": 200})
        self.assertEqual(m["id"], "0xffffffffffffffff")

    def test_flows(self):
        self.w.flow_start("handoff", 9, cat="q")
        self.w.flow_step("handoff", 9, cat="q")
        self.w.flow_end("handoff", 9, cat="q")
        s, t, f = self.written()
        self.assertEqual([(x["ph"], x["name"], x["id"], x["cat"])
                          for x in (s, t, f)],
                         [("s", "handoff", "0x9", "q"),
                          ("t", "handoff", "0x9", "q"),
                          ("f", "handoff", "0x9", "q")])
        self.assertNotIn("bp", s)
        self.assertEqual(f["bp"], "e")

    def test_metadata(self):
        self.w.process_name("vllm-server")
        self.w.thread_name()
        self.w.thread_name("scheduler")
        self.w.process_sort_index(-3)
        self.w.thread_sort_index(4)
        self.w.process_labels("gpu0,tp=2")
        evs = self.written()
        self.assertEqual([(e["ph"], e["name"], e["args"]) for e in evs], [
            ("M", "process_name", {"name": "vllm-server"}),
            ("M", "thread_name", {"name": threading.current_thread().name}),
            ("M", "thread_name", {"name": "scheduler"}),
            ("M", "process_sort_index", {"sort_index": -3}),
            ("M", "thread_sort_index", {"sort_index": 4}),
            ("M", "process_labels", {"labels": "gpu0,tp=2"})])
        for ev in evs:
            self.assertHere(ev)

    def test_mark(self):
        self.w.mark("checkpoint", cat="c")
        (ev,) = self.written()
        self.assertEqual((ev["ph"], ev["name"], ev["cat"], ev["s"]),
                         ("I", "checkpoint", "c", "g"))

    def test_emit_every_field(self):
        self.w.emit("X", "full", "c", ts=1000, dur=2000, tts=3000,
                    tdur=4000, pid=5, tid=2**32 - 1, bind_id=0xAB,
                    flow_in=True, flow_out=True, cname="good", k=1)
        self.w.emit("N", "obj", id=7, id_scope="s", id2="local")
        self.w.emit("O", "obj", id=7, id2="global", args={"snapshot": {}})
        self.w.emit("D", "obj", id=7)
        self.w.emit("c", "clock_sync", sync_id="abc")
        self.w.emit("f", "flow", id=3, bp="e")
        self.w.emit("i", "inst", scope="p")
        x, n, o, d, c, f, i = self.written()
        self.assertEqual((x["ph"], x["name"], x["cat"]), ("X", "full", "c"))
        self.assertEqual([us_to_ns(x[k]) for k in ("ts", "dur", "tts",
                                                    "tdur")],
                         [1000, 2000, 3000, 4000])
        self.assertEqual((x["pid"], x["tid"]), (5, 2**32 - 1))
        self.assertEqual(x["bind_id"], "0xab")
        self.assertIs(x["flow_in"], True)
        self.assertIs(x["flow_out"], True)
        self.assertEqual(x["cname"], "good")
        self.assertEqual(x["args"], {"k": 1})
        self.assertEqual((n["ph"], n["id2"], n["scope"]),
                         ("N", {"local": "0x7"}, "s"))
        self.assertNotIn("id", n)
        self.assertEqual((o["ph"], o["id2"], o["args"]),
                         ("O", {"global": "0x7"}, {"snapshot": {}}))
        self.assertEqual((d["ph"], d["id"]), ("D", "0x7"))
        self.assertEqual((c["ph"], c["args"]), ("c", {"sync_id": "abc"}))
        self.assertEqual((f["ph"], f["bp"]), ("f", "e"))
        self.assertEqual((i["ph"], i["s"]), ("I", "p"))
        for ev in (n, o, d, c, f, i):
            self.assertHere(ev)

    def test_emit_refusals(self):
        w = self.w
        self.assertError(tracewriter.EEVENT, w.emit, "b", "no id")
        self.assertError(tracewriter.EEVENT, w.emit, "X")      # no name
        self.assertError(tracewriter.EEVENT, w.emit, "Q", "bad phase")
        self.assertError(tracewriter.EEVENT, w.emit, "X", "x", id2="local")
        self.assertRaises(ValueError, w.emit, "XX", "x")
        self.assertRaises(ValueError, w.emit, "X", "x", id2="other")
        self.assertRaises(ValueError, w.emit, "f", "x", id=1, bp="x")
        self.assertRaises(OverflowError, w.emit, "X", "x", pid=2**63)
        self.assertEqual(w.stats().rejected, 4)
        self.assertEqual(self.written(), [])


class TestArgs(EventTest):

    def args_of(self, **kwargs):
        self.w.instant("a", **kwargs)
        (ev,) = self.written()
        return ev["args"]

    def test_ints(self):
        values = {"zero": 0, "neg": -1, "min": -2**63, "max": 2**63 - 1,
                  "u": 2**63, "umax": 2**64 - 1, "big": 2**64,
                  "bigneg": -2**63 - 1, "huge": 10**30}
        args = self.args_of(**values)
        # From 2**63 to 2**64 - 1 (a C uint64), the nearest double.
        self.assertEqual((float(args.pop("u")), float(args.pop("umax"))),
                         (2.0**63, 2.0**64))
        del values["u"], values["umax"]
        self.assertEqual(args, values)

    def test_bool_before_int(self):
        args = self.args_of(t=True, f=False, one=1)
        self.assertIs(args["t"], True)
        self.assertIs(args["f"], False)
        self.assertEqual(args["one"], 1)
        self.assertIsNot(args["one"], True)

    def test_floats(self):
        values = [1.5, 0.1, -0.0, 1e300, 5e-324, 2.0**53 + 2, 1 / 3]
        args = self.args_of(**{"f%d" % i: v for i, v in enumerate(values)})
        self.assertEqual([float(args["f%d" % i]) for i in range(len(values))],
                         values)

    def test_nonfinite_null_by_default(self):
        args = self.args_of(nan=math.nan, inf=math.inf, ninf=-math.inf,
                            nested={"a": [1.0, math.nan]})
        self.assertEqual(args, {"nan": None, "inf": None, "ninf": None,
                                "nested": {"a": [1, None]}})

    def test_strings(self):
        s = 'quote " backslash \\ newline \n tab \t nul \0 ctl \x01 é 猫 🐈'
        args = self.args_of(s=s, empty="", b="bytes é".encode())
        self.assertEqual(args, {"s": s, "empty": "", "b": "bytes é"})

    def test_invalid_utf8_replaced_by_default(self):
        args = self.args_of(lone="a\udc80b", raw=b"x\xffy")
        self.assertEqual(args, {"lone": "a\ufffd\ufffd\ufffdb",
                                "raw": "x\ufffdy"})

    def test_none_and_json(self):
        nested = {"list": [1, "two", None, True, {"x": 2**70}],
                  "tuple": (1, 2), "s": "é\n", "empty": {}}
        args = self.args_of(none=None, nested=nested, lst=[1, [2, [3]]])
        self.assertIsNone(args["none"])
        self.assertEqual(args["nested"], {"list": [1, "two", None, True,
                                                   {"x": 2**70}],
                                          "tuple": [1, 2], "s": "é\n",
                                          "empty": {}})
        self.assertEqual(args["lst"], [1, [2, [3]]])

    def test_subclasses(self):
        class Color(enum.IntEnum):
            RED = 3

        class Name(str):
            pass

        class Ratio(float):
            pass

        class Int64:                    # as numpy.int64: registered, not
            def __init__(self, v):      # a subclass of int
                self.v = v

            def __int__(self):
                return self.v

        numbers.Integral.register(Int64)

        args = self.args_of(color=Color.RED, name=Name("n"), r=Ratio(0.5),
                            flag=True, frac=fractions.Fraction(3, 4),
                            i64=Int64(-7))
        self.assertEqual(args, {"color": 3, "name": "n", "r": 0.5,
                                "flag": True, "frac": 0.75, "i64": -7})

    def test_args_dict_for_clashing_names(self):
        args = self.args_of(args={"cat": 2, "scope": 3, "args": 5}, x=4,
                            name=1)
        self.assertEqual(args, {"cat": 2, "scope": 3, "args": 5, "x": 4,
                                "name": 1})

    def test_unwritable_values(self):
        w = self.w
        self.assertRaises(TypeError, w.instant, "a", obj=object())
        self.assertRaises(TypeError, w.instant, "a", s={1, 2})
        self.assertRaises(TypeError, w.instant, "a", args={None: 1})
        self.assertRaises(TypeError, w.instant, "a", args={1: 1})
        self.assertRaises(ValueError, w.instant, "a", args={"n\0": 1})
        cycle = []
        cycle.append(cycle)
        self.assertRaises(ValueError, w.instant, "a", c=cycle)
        self.assertRaises(ValueError, w.instant, "nul\0name")
        self.assertRaises(TypeError, w.instant, 42)
        self.assertError(tracewriter.ETOOMANY, w.instant, "a",
                         args={"k%d" % i: i for i in range(1025)})
        self.assertEqual(self.written(), [])

    def test_many_args_in_order(self):
        args = {"k%d" % i: i for i in range(1024)}
        self.assertEqual(list(self.args_of(args=args).items()),
                         list(args.items()))

    def test_unicode_names(self):
        self.w.instant("événement ✓", cat="猫", args={"clé \"q\"": 1})
        (ev,) = self.written()
        self.assertEqual((ev["name"], ev["cat"], ev["args"]),
                         ("événement ✓", "猫", {"clé \"q\"": 1}))

    def test_many_distinct_names(self):
        # Past the name cache's size, names are still right.
        n = tracewriter._NAMES_MAX + 100
        for i in range(n):
            self.w.instant("name-%d" % i, args={"arg-%d" % i: i})
        evs = self.written()
        self.assertEqual(len(evs), n)
        for i, ev in enumerate(evs):
            self.assertEqual((ev["name"], ev["args"]),
                             ("name-%d" % i, {"arg-%d" % i: i}))


class TestStrictOptions(EventTest):
    options = {"nonfinite": "reject", "utf8": "reject", "long": "reject",
               "max_string": 64}

    def test_nonfinite_rejected(self):
        self.assertError(tracewriter.ENONFINITE, self.w.instant, "a",
                         x=math.nan)
        self.assertError(tracewriter.ENONFINITE, self.w.instant, "a",
                         x={"y": [math.inf]})
        self.assertEqual(self.written(), [])

    def test_utf8_rejected(self):
        self.assertError(tracewriter.EUTF8, self.w.instant, "a", s="\udc80")
        self.assertError(tracewriter.EUTF8, self.w.instant, "\ud800")
        self.assertError(tracewriter.EUTF8, self.w.instant, "a", s=b"\xff")
        self.assertEqual(self.w.stats().rejected, 3)
        self.assertEqual(self.written(), [])

    def test_long_rejected(self):
        self.w.instant("a", s="x" * 64)
        self.assertError(tracewriter.ETOOLONG, self.w.instant, "a",
                         s="x" * 65)
        (ev,) = self.written()
        self.assertEqual(ev["args"], {"s": "x" * 64})


class TestDefaultsReplace(EventTest):
    options = {"max_string": 64}

    def test_long_cut_and_counted(self):
        self.w.instant("a", s="é" * 40)         # 80 bytes: cut at 64
        self.w.instant("b", s="\udc80")
        st = self.w.stats()
        self.assertEqual((st.strings_truncated, st.utf8_replaced), (1, 1))
        a, b = self.written()
        self.assertEqual(a["args"], {"s": "é" * 32})
        self.assertEqual(b["args"], {"s": "\ufffd" * 3})


if __name__ == "__main__":
    unittest.main()
