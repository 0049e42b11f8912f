"""Requests: spans inside an async span nest under it (the same async
track: cat and id), or, with async_spans="lanes", go as complete events on
named lanes that never overlap; the decorator's call_args.  Every trace is
read back strictly, and replayed as Perfetto's JSON importer does it
(src/trace_processor/importers/json/: a nestable async track per pid, cat
and id; 'b' pushes a slice, 'e' closes the innermost one)."""

import asyncio
import os
import threading
from types import SimpleNamespace

from support import tracewriter, us_to_ns, unittest
from test_events import EventTest

PID = os.getpid()
LANE_TID_BASE = 0x7FFF0000


def replay_async(test, events):
    """The slices of the async events as Perfetto builds them: a list of
    dicts (name, cat, id, ts, end, args, depth, parent index), checking
    that each 'e' closes the innermost open slice of its track, with its
    name, and that every slice is closed."""
    stacks = {}
    slices = []
    for ev in events:
        if ev["ph"] not in "be":
            continue
        test.assertEqual(ev["pid"], PID)
        key = (ev["cat"], ev["id"])
        stack = stacks.setdefault(key, [])
        if ev["ph"] == "b":
            s = {"name": ev["name"], "cat": ev["cat"], "id": ev["id"],
                 "ts": us_to_ns(ev["ts"]), "end": None,
                 "args": dict(ev.get("args", {})), "depth": len(stack),
                 "parent": stack[-1] if stack else None}
            slices.append(s)
            stack.append(len(slices) - 1)
        else:
            test.assertTrue(stack, "an end with no open slice: %r" % ev)
            s = slices[stack.pop()]
            test.assertEqual(s["name"], ev["name"], "ends misnest")
            s["end"] = us_to_ns(ev["ts"])
            s["args"].update(ev.get("args", {}))
            test.assertLessEqual(s["ts"], s["end"])
    for key, stack in stacks.items():
        test.assertEqual(stack, [], "open slices left on %r" % (key,))
    for s in slices:
        if s["parent"] is not None:
            p = slices[s["parent"]]
            test.assertLessEqual(p["ts"], s["ts"])
            test.assertLessEqual(s["end"], p["end"])
    return slices


def root_of(slices, s):
    while s["parent"] is not None:
        s = slices[s["parent"]]
    return s


class TestNesting(EventTest):

    def serve(self, n):
        """n requests at once, each with spans of every kind inside."""
        w = self.w

        @w.span("tokenize", cat="tok")
        def tokenize(text):
            return len(text)

        @w.span("fetch", cat="kv")
        async def fetch(k):
            await asyncio.sleep(0)
            return k

        @w.span("handle", cat="http", call_args=["req.id"])
        async def handle(req):
            async with w.span("prefill", cat="llm", step=1):
                await asyncio.sleep(0)          # the others run here
                tokenize(req.text)
            with w.span("decode", cat="llm") as s:
                await fetch(req.id)
                s.set(tokens=2)
            return req.id

        async def main():
            reqs = [SimpleNamespace(id=100 + i, text="x" * i)
                    for i in range(n)]
            return await asyncio.gather(*(handle(r) for r in reqs))

        return asyncio.run(main())

    def test_spans_inside_a_request_nest_under_it(self):
        n = 4
        self.assertEqual(self.serve(n), [100 + i for i in range(n)])
        events = self.written()
        self.assertEqual({e["ph"] for e in events}, {"b", "e"})
        slices = replay_async(self, events)
        roots = [s for s in slices if s["depth"] == 0]
        # One track per request, and nothing else at the top.
        self.assertEqual([r["name"] for r in roots], ["handle"] * n)
        self.assertEqual(sorted(r["args"]["req.id"] for r in roots),
                         [100 + i for i in range(n)])
        self.assertEqual(len({(r["cat"], r["id"]) for r in roots}), n)
        # The requests overlapped: on one thread as 'X' they would misnest.
        self.assertTrue(any(a["ts"] < b["ts"] < a["end"] < b["end"]
                            for a in roots for b in roots))
        for r in roots:
            inside = [s for s in slices if root_of(slices, s) is r]
            self.assertEqual(
                sorted((s["depth"], s["name"]) for s in inside),
                [(0, "handle"), (1, "decode"), (1, "prefill"),
                 (2, "fetch"), (2, "tokenize")])
            for s in inside:
                # The request's track: its id and its cat, for each.
                self.assertEqual((s["cat"], s["id"]), (r["cat"], r["id"]))
            by_name = {s["name"]: s for s in inside}
            self.assertEqual(by_name["prefill"]["args"], {"step": 1})
            self.assertEqual(by_name["decode"]["args"], {"tokens": 2})
            self.assertEqual(slices[by_name["fetch"]["parent"]]["name"],
                             "decode")
            self.assertEqual(slices[by_name["tokenize"]["parent"]]["name"],
                             "prefill")

    def test_siblings_at_once_get_a_track_each(self):
        w = self.w

        @w.span("part")
        async def part(i):
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            return i

        async def main():
            async with w.span("request", cat="http"):
                return await asyncio.gather(part(1), part(2))

        self.assertEqual(asyncio.run(main()), [1, 2])
        slices = replay_async(self, self.written())
        self.assertEqual([(s["name"], s["depth"]) for s in slices],
                         [("request", 0), ("part", 1), ("part", 0)])
        # The first goes under the request; the second, running at the
        # same time, on a track of its own (one track cannot hold two
        # slices that overlap without nesting).
        self.assertEqual(slices[1]["id"], slices[0]["id"])
        self.assertNotEqual(slices[2]["id"], slices[0]["id"])

    def test_outside_a_request_spans_stay_complete_on_their_thread(self):
        w = self.w
        gate = asyncio.Event

        async def main():
            release = gate()

            async def request():
                async with w.span("request"):
                    await release.wait()

            task = asyncio.ensure_future(request())
            await asyncio.sleep(0)          # the request is open now
            with w.span("outside", k=1):
                pass
            release.set()
            await task

        asyncio.run(main())
        events = self.written()
        xs = [e for e in events if e["ph"] == "X"]
        self.assertEqual([(e["name"], e["args"]) for e in xs],
                         [("outside", {"k": 1})])
        self.assertEqual(xs[0]["tid"], threading.get_native_id())
        self.assertEqual([s["name"] for s in replay_async(self, events)],
                         ["request"])

    def test_another_writers_request_is_not_a_parent(self):
        other = tracewriter.open(self.path("other.json"))
        self.addCleanup(other.close)

        async def main():
            async with other.span("theirs"):
                with self.w.span("ours"):
                    pass

        asyncio.run(main())
        (ev,) = self.written()
        self.assertEqual((ev["ph"], ev["name"]), ("X", "ours"))
        other.close()
        self.assertEqual([e["ph"] for e in self.events(
            self.path("other.json"))], ["b", "e"])


class TestLanes(EventTest):

    options = {"async_spans": "lanes"}

    def lanes(self, events):
        """{tid: [(ts, end, name, args)]} of the 'X' events, after
        checking the lanes' thread_name records; and {tid: name}."""
        names = {}
        for e in events:
            if e["ph"] == "M" and e["name"] == "thread_name":
                self.assertNotIn(e["tid"], names)
                names[e["tid"]] = e["args"]["name"]
        lanes = {}
        for e in events:
            if e["ph"] != "X":
                continue
            self.assertEqual(e["pid"], PID)
            self.assertIn(e["tid"], names, "a lane with no name")
            ts = us_to_ns(e["ts"])
            lanes.setdefault(e["tid"], []).append(
                (ts, ts + us_to_ns(e["dur"]), e["name"], e.get("args", {})))
        for tid, name in names.items():
            self.assertEqual(name, "requests lane %d" % (tid - LANE_TID_BASE))
        # On one lane, two events are apart or one holds the other.
        for tid, evs in lanes.items():
            for a in evs:
                for b in evs:
                    if a is b:
                        continue
                    apart = a[1] <= b[0] or b[1] <= a[0]
                    nested = (a[0] <= b[0] and b[1] <= a[1]) or \
                             (b[0] <= a[0] and a[1] <= b[1])
                    self.assertTrue(apart or nested, (tid, a, b))
        return lanes, names

    def test_each_request_on_a_lane_of_its_own(self):
        w = self.w
        n = 3

        @w.span("handle", cat="http", call_args=lambda req: {"rid": req})
        async def handle(req):
            async with w.span("prefill", cat="llm"):
                await asyncio.sleep(0)
                with w.span("tokenize"):
                    pass
            await asyncio.sleep(0)
            return req

        async def main():
            first = await asyncio.gather(*(handle(i) for i in range(n)))
            # A second wave reuses the lanes the first left free.
            second = await asyncio.gather(*(handle(n + i) for i in range(2)))
            return first + second

        self.assertEqual(asyncio.run(main()), list(range(n + 2)))
        events = self.written()
        self.assertEqual({e["ph"] for e in events}, {"M", "X"})
        lanes, names = self.lanes(events)
        self.assertEqual(sorted(names),
                         [LANE_TID_BASE + k for k in range(1, n + 1)])
        self.assertEqual(sorted(names.values()),
                         ["requests lane %d" % k for k in range(1, n + 1)])
        seen = []
        for tid, evs in lanes.items():
            handles = [e for e in evs if e[2] == "handle"]
            for h in handles:
                seen.append(h[3]["rid"])
                inside = sorted(e[2] for e in evs
                                if h[0] <= e[0] and e[1] <= h[1])
                self.assertEqual(inside, ["handle", "prefill", "tokenize"])
        self.assertEqual(sorted(seen), list(range(n + 2)))
        # Requests 0..n-1 were in flight at once: n lanes, each used.
        self.assertEqual(len(lanes), n)

    def test_a_task_that_outlives_its_request_moves_to_another_lane(self):
        w = self.w

        async def main():
            release = asyncio.Event()

            async def background():
                async with w.span("background"):
                    await release.wait()

            async with w.span("request"):
                task = asyncio.ensure_future(background())
                await asyncio.sleep(0)      # background is open, above us
            async with w.span("next request"):
                await asyncio.sleep(0)
            release.set()
            await task

        asyncio.run(main())
        lanes, names = self.lanes(self.written())
        where = {e[2]: tid for tid, evs in lanes.items() for e in evs}
        self.assertEqual(sorted(where), ["background", "next request",
                                         "request"])
        self.assertNotEqual(where["background"], where["request"])
        self.assertNotEqual(where["background"], where["next request"])

    def test_option_values(self):
        with self.assertRaises(ValueError):
            tracewriter.open(self.path("bad.json"), async_spans="threads")
        self.assertEqual(self.w.async_spans, "lanes")
        w = tracewriter.open(self.path("default.json"))
        self.addCleanup(w.close)
        self.assertEqual(w.async_spans, "async")


class TestCallArgs(EventTest):

    def test_names_attributes_and_a_function(self):
        w = self.w

        @w.span("handle", call_args=["req.id", "req.user.name", "mode"])
        def handle(req, mode="fast"):
            return req.id

        @w.span("parse", cat="p", fixed=1,
                call_args=lambda text, n=0: {"len": len(text), "n": n})
        def parse(text, n=0):
            return text

        req = SimpleNamespace(id=7, user=SimpleNamespace(name="ann"))
        self.assertEqual(handle(req), 7)
        self.assertEqual(handle(req, mode="slow"), 7)
        self.assertEqual(parse("abc", n=2), "abc")
        events = self.written()
        self.assertEqual([(e["ph"], e["name"], e["args"]) for e in events], [
            ("X", "handle", {"req.id": 7, "req.user.name": "ann",
                             "mode": "fast"}),
            ("X", "handle", {"req.id": 7, "req.user.name": "ann",
                             "mode": "slow"}),
            ("X", "parse", {"fixed": 1, "len": 3, "n": 2})])
        for e in events:
            self.assertEqual(e["tid"], threading.get_native_id())

    def test_async_request_carries_them_on_its_begin(self):
        w = self.w

        @w.span("handle", cat="http", call_args="req.id")
        async def handle(req):
            await asyncio.sleep(0)

        asyncio.run(handle(SimpleNamespace(id=41)))
        b, e = self.written()
        self.assertEqual((b["ph"], b["args"]), ("b", {"req.id": 41}))
        self.assertEqual((e["ph"], e["id"], e["cat"]),
                         ("e", b["id"], "http"))
        self.assertNotIn("args", e)

    def test_bad_specs(self):
        w = self.w
        with self.assertRaises(TypeError):
            @w.span("x", call_args=["nope"])
            def f(req):
                pass
        with self.assertRaises(TypeError):
            @w.span("x", call_args=[3])
            def g(req):
                pass

        @w.span("x", call_args=lambda req: ["not", "a", "dict"])
        def h(req):
            pass
        with self.assertRaises(TypeError):
            h(1)


if __name__ == "__main__":
    unittest.main()
