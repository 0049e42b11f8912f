"""The compiled fast path (tracewriter/_speedups.c) against the ctypes
path: test_python.sh runs every test twice, once through each, and these
compare the two on the same writer record by record."""

import asyncio
import os
import threading
import unittest

from support import TraceTest, tracewriter, us_to_ns

FAST = tracewriter.speedups()

_OFF = tracewriter.global_writer()      # disabled: TRACEWRITER_OUT unset


@_OFF.span("module level")
def module_level(x):
    return x + 1


class TestWhichPath(unittest.TestCase):

    def test_the_path_asked_for(self):
        want = os.environ.get("TW_PY_EXPECT_SPEEDUPS")
        if want is None:
            self.skipTest("run by test_python.sh")
        self.assertEqual(FAST, want == "1")
        self.assertEqual(tracewriter.speedups(), FAST)


class TestDecoratedLikeAFunction(unittest.TestCase):
    """Both paths: a decorated module-level function pickles by name (as
    multiprocessing needs) and keeps the function's attributes."""

    def test_pickles_by_name(self):
        import pickle
        self.assertIs(pickle.loads(pickle.dumps(module_level)), module_level)
        self.assertEqual(module_level(1), 2)
        self.assertEqual(module_level.__name__, "module_level")
        self.assertEqual(module_level.__wrapped__(2), 3)


def _without_times(ev):
    return {k: v for k, v in ev.items() if k not in ("ts", "dur")}


@unittest.skipUnless(FAST, "the compiled fast path is not in use")
class TestSameRecords(TraceTest):
    """The same spans through the compiled path and through the Python
    one (Writer._span_py, the Span class) give the same records."""

    def setUp(self):
        super().setUp()
        self.w = tracewriter.open(self.path())
        self.addCleanup(self.w.close)

    def written(self):
        self.w.close()
        return self.events(self.path())

    def test_with_span_every_simple_argument(self):
        w = self.w
        cases = [("plain", None, {}),
                 ("cat", "llm", {}),
                 ("args", "llm", {"i": -5, "f": 0.25, "b": True, "n": None,
                                  "s": "q\"\n\u00e9", "big": 2**63 - 1}),
                 # Left to Python by the fast path: the records are the same.
                 ("other", "c", {"d": {"a": [1]}, "u": 2**64 - 1,
                                 "nan": float("nan"), "sur": "\ud800"})]
        before = tracewriter.now_ns()
        for name, cat, args in cases:
            s = w.span(name, cat=cat, **args)
            self.assertIs(type(s), tracewriter._speedups.Span)
            with s as inside:
                self.assertIs(inside, s)
                inside.set(late=1)
            with w._span_py(name, cat=cat, **args) as p:
                self.assertIs(type(p), tracewriter.Span)
                p.set(late=1)
        after = tracewriter.now_ns()
        events = self.written()
        self.assertEqual(len(events), 2 * len(cases))
        for fast, slow in zip(events[0::2], events[1::2]):
            self.assertEqual(_without_times(fast), _without_times(slow))
            self.assertEqual(fast["ph"], "X")
            self.assertEqual(fast["tid"], threading.get_native_id())
            t0 = us_to_ns(fast["ts"])
            t1 = t0 + us_to_ns(fast["dur"])
            self.assertTrue(before <= t0 <= t1 <= after,
                            (before, t0, t1, after))
        self.assertEqual(events[4]["args"]["s"], "q\"\n\u00e9")
        self.assertEqual(events[6]["args"]["d"], {"a": [1]})

    def test_decorated(self):
        w = self.w

        @w.span(cat="deco", k=3, s="v")
        def add(a, b=1):
            """doc"""
            return a + b

        class Model:
            @w.span
            def forward(self, x):
                return x * 2

        self.assertIs(type(add), tracewriter._speedups.Decorated)
        self.assertEqual((add.__name__, add.__doc__), ("add", "doc"))
        self.assertEqual(add.__wrapped__(1), 2)
        self.assertEqual(add(1, b=2), 3)
        self.assertEqual(Model().forward(4), 8)

        @w.span("raises")
        def raises():
            raise KeyError("k")

        with self.assertRaises(KeyError):
            raises()
        events = self.written()
        self.assertEqual(
            [(e["name"], e.get("cat"), e.get("args")) for e in events],
            [(add.__qualname__, "deco", {"k": 3, "s": "v"}),
             (Model.forward.__qualname__, None, None),
             ("raises", None, None)])
        self.assertTrue(add.__qualname__.endswith("test_decorated.<locals>.add"))

    def test_disabled_closed_and_refused(self):
        off = tracewriter.global_writer()           # TRACEWRITER_OUT unset
        self.assertFalse(off.enabled)
        with off.span("nothing", a=1):
            pass

        @off.span("nothing")
        def f():
            return 7
        self.assertEqual(f(), 7)

        w = tracewriter.open(self.path("small.json"), max_string=64,
                             long="reject")
        with self.assertRaises(tracewriter.Error) as cm:
            with w.span("x", s="x" * 65):
                pass
        self.assertEqual(cm.exception.code, tracewriter.ETOOLONG)
        # Not when the body raised: its exception goes on.
        with self.assertRaises(ZeroDivisionError):
            with w.span("x", s="x" * 65):
                1 / 0

        @w.span("g")
        def g():
            return 1
        w.close()
        with self.assertRaises(ValueError):
            with w.span("after close"):
                pass
        with self.assertRaises(ValueError):
            g()
        self.assertEqual(self.events(self.path("small.json")), [])

    def test_async_with_goes_to_python(self):
        w = self.w

        async def main():
            async with w.span("a", cat="aio", k=1) as s:
                self.assertIsInstance(s, tracewriter.Span)
                self.assertIsInstance(s.id, int)
        asyncio.run(main())
        events = self.written()
        self.assertEqual([(e["ph"], e["name"]) for e in events],
                         [("b", "a"), ("e", "a")])
        self.assertEqual(events[0]["args"], {"k": 1})


if __name__ == "__main__":
    unittest.main()
