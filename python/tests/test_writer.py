"""Writers: options, sinks, the lifecycle, errors and counters."""

import datetime
import errno
import gc
import gzip
import json
import os
import pickle
import stat
import subprocess
import sys
import threading
import warnings

from support import (TraceTest, child_env, parse_strict, read_bytes,
                     run_python, tracewriter, unittest, user_events)
from tracewriter import _lib


def seqs(events, name="e"):
    return [e["args"]["seq"] for e in events if e.get("name") == name]


class TestOptions(TraceTest):

    def test_format_object_and_process_name(self):
        with tracewriter.open(self.path(), format="object",
                              process_name="srv 1") as w:
            w.instant("e", seq=0)
        doc = parse_strict(read_bytes(self.path()))
        self.assertIsInstance(doc, dict)
        events = doc["traceEvents"]
        self.load(self.path())                   # and jsonlint
        self.assertEqual(events[0]["args"], {"name": "srv 1"})
        self.assertEqual(seqs(events), [0])

    def test_file_mode(self):
        umask = os.umask(0o022)
        os.umask(umask)
        with tracewriter.open(self.path(), file_mode=0o600):
            pass
        mode = stat.S_IMODE(os.stat(self.path()).st_mode)
        self.assertEqual(mode, 0o600 & ~umask)

    def test_buffer_size_makes_commits(self):
        with tracewriter.open(self.path(), buffer="1KiB") as w:
            for i in range(200):
                w.instant("e", seq=i, pad="x" * 50)
            commits = w.stats().commits
        self.assertGreaterEqual(commits, 10)
        self.assertEqual(seqs(self.events(self.path())), list(range(200)))

    def test_value_kinds(self):
        # int, str, True (a bare key), False and None (left out), a
        # timedelta (a duration), and the options string.
        with tracewriter.open(self.path(), options="format=object",
                              buffer=4096, sync=True, crash=False,
                              rotate=None,
                              flush=datetime.timedelta(milliseconds=250)) \
                as w:
            w.instant("e", seq=1)
        self.assertIsInstance(parse_strict(read_bytes(self.path())), dict)

    def test_bad_key_names_it(self):
        e = self.assertError(tracewriter.EOPTION, tracewriter.open,
                             self.path(), colour="red")
        self.assertIn("colour", e.message)
        self.assertIn("colour", str(e))
        self.assertEqual(e.name, "TW_EOPTION")

    def test_bad_value_names_it(self):
        e = self.assertError(tracewriter.EOPTION, tracewriter.open,
                             self.path(), flush="soon")
        self.assertIn("soon", e.message)
        e = self.assertError(tracewriter.EOPTION, tracewriter.open,
                             self.path(), options="buffer=12")
        self.assertIn("buffer", e.message)

    def test_values_cannot_inject_keys(self):
        e = self.assertError(tracewriter.EOPTION, tracewriter.open,
                             self.path(), flush="1s,sync")
        self.assertIn("flush", e.message)
        self.assertError(tracewriter.EOPTION, tracewriter.open,
                         self.path(), format=["object"])
        self.assertFalse(os.path.exists(self.path()))


class TestSinks(TraceTest):

    def check_live_and_closed(self, path, **options):
        """Valid while open after a flush, and after close, with every
        event, for a sink."""
        with tracewriter.open(path, **options) as w:
            for i in range(100):
                w.instant("e", seq=i)
            w.flush()
            self.assertEqual(seqs(self.events(path)), list(range(100)))
            for i in range(100, 150):
                w.instant("e", seq=i)
        self.assertEqual(seqs(self.events(path)), list(range(150)))

    def test_file(self):
        self.check_live_and_closed(self.path())

    def test_mmap(self):
        self.check_live_and_closed(self.path(), sink="mmap")

    def test_mmap_every_record_committed(self):
        with tracewriter.open(self.path(), sink="mmap", chunk="4KiB") as w:
            for i in range(300):
                w.instant("e", seq=i)
            # No flush: the mmap sink commits each record.
            self.assertEqual(seqs(self.events(self.path())),
                             list(range(300)))

    def test_gzip(self):
        path = self.path("trace.json.gz")
        self.check_live_and_closed(path)
        with open(path, "rb") as f:
            self.assertEqual(f.read(2), b"\x1f\x8b")
        with gzip.open(path, "rt", encoding="utf-8") as f:
            # 150 events, process_name and the clock record
            self.assertEqual(len(json.load(f)), 152)

    def test_gzip_level_on_any_name(self):
        with tracewriter.open(self.path(), gzip=9) as w:
            w.instant("e", seq=0)
        with open(self.path(), "rb") as f:
            data = gzip.decompress(f.read())
        self.assertEqual(seqs(user_events(parse_strict(data))), [0])

    def test_rotation(self):
        with tracewriter.open(self.path(), rotate="4KiB", buffer="1KiB",
                              keep="all") as w:
            for i in range(500):
                w.instant("e", seq=i, pad="x" * 40)
            rotations = w.stats().rotations
        numbered = sorted(f for f in os.listdir(self.dir)
                          if f.startswith("trace.0"))
        self.assertGreaterEqual(rotations, 2)
        self.assertEqual(len(numbered), rotations)
        self.assertEqual(numbered[0], "trace.000001.json")
        got = []
        for name in numbered + ["trace.json"]:
            events = self.load(os.path.join(self.dir, name))
            self.assertEqual(events[0]["name"], "process_name")
            got += seqs(events)
        self.assertEqual(got, list(range(500)))

    def test_open_fd_regular_file(self):
        fd = os.open(self.path(), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            w = tracewriter.open_fd(fd)
            w.instant("e", seq=0)
            w.flush()
            self.assertEqual(seqs(self.events(self.path())), [0])
            w.close()
            os.fstat(fd)                 # still open: the caller's
        finally:
            os.close(fd)

    def test_open_fd_pipe_streams(self):
        r, wfd = os.pipe()
        chunks = []
        reader = threading.Thread(target=lambda: chunks.extend(
            iter(lambda: os.read(r, 65536), b"")))
        reader.start()
        try:
            w = tracewriter.open_fd(wfd)
            for i in range(1000):
                w.instant("e", seq=i)
            w.close()
        finally:
            os.close(wfd)
            reader.join(60)
            os.close(r)
        self.assertEqual(seqs(user_events(parse_strict(b"".join(chunks)))),
                         list(range(1000)))

    def test_open_fd_refusals(self):
        r, wfd = os.pipe()
        try:
            self.assertError(tracewriter.ESINK, tracewriter.open_fd, wfd,
                             sink="mmap")
            self.assertError(tracewriter.EOPTION, tracewriter.open_fd, wfd,
                             rotate="1MiB")
        finally:
            os.close(r)
            os.close(wfd)


class TestLifecycle(TraceTest):

    def test_context_manager_closes(self):
        with tracewriter.open(self.path()) as w:
            self.assertTrue(w.enabled)
            self.assertFalse(w.closed)
            self.assertIn("open", repr(w))
        self.assertTrue(w.closed)
        self.assertFalse(w.enabled)
        self.assertIn("closed", repr(w))
        w.close()                                # twice: nothing
        self.assertEqual(w.errcode, 0)

    def test_closed_writer_refuses(self):
        w = tracewriter.open(self.path())
        w.close()
        for call in (lambda: w.instant("x"), w.flush, w.stats,
                     lambda: w.span("x").__exit__(None, None, None),
                     lambda: w.complete("x", 1, 1), lambda: w.thread_name(),
                     lambda: w.emit("X", "x", dur=1)):
            self.assertRaises((ValueError, RuntimeError), call)
        with self.assertRaises(ValueError):
            with w:
                pass
        self.assertEqual(self.events(self.path()), [])

    def test_body_exception_propagates_and_file_is_complete(self):
        with self.assertRaises(ZeroDivisionError):
            with tracewriter.open(self.path()) as w:
                w.instant("e", seq=0)
                1 / 0
        self.assertTrue(w.closed)
        self.assertEqual(seqs(self.events(self.path())), [0])

    def test_unclosed_writer_is_closed_by_gc(self):
        w = tracewriter.open(self.path())
        w.instant("e", seq=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            del w
            gc.collect()
        self.assertEqual([str(c.message) for c in caught
                          if issubclass(c.category, ResourceWarning)],
                         ["unclosed <tracewriter.Writer open %r>"
                          % self.path()])
        self.assertEqual(seqs(self.events(self.path())), [0])

    def test_exit_commits_open_writers(self):
        code = ("import sys, tracewriter\n"
                "w = tracewriter.open(sys.argv[1] if len(sys.argv) > 1 "
                "else %r)\n"
                "w.instant('e', seq=0)\n"
                "w.instant('e', seq=1)\n" % self.path())
        r = run_python(code)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(seqs(self.events(self.path())), [0, 1])
        # os._exit runs nothing: the file keeps its last commit (the
        # head), still a valid trace.
        r = run_python(code + "import os; os._exit(0)\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.events(self.path()), [])

    def test_stats(self):
        with tracewriter.open(self.path(), buffer="1KiB") as w:
            s0 = w.stats()
            for i in range(100):
                w.instant("e", seq=i)
            self.assertError(tracewriter.EEVENT, w.counter, "c", s="x")
            w.flush()
            s = w.stats()
        self.assertIsInstance(s, tracewriter.Stats)
        self.assertEqual(s.events - s0.events, 100)
        self.assertEqual(s.rejected, 1)
        self.assertGreater(s.commits, s0.commits)
        self.assertGreater(s.bytes, s0.bytes)
        # Every byte but the tail's few.
        size = os.path.getsize(self.path())
        self.assertLessEqual(s.output_bytes, size)
        self.assertGreater(s.output_bytes, size - 8)
        self.assertEqual((s.dropped, s.error, s.rotations), (0, 0, 0))
        with self.assertRaises(Exception):
            s.events = 0                         # frozen

    def test_now_ns_is_the_library_clock(self):
        lib = _lib.get()
        for _ in range(100):
            a = tracewriter.now_ns()
            c = lib.now_ns()
            b = tracewriter.now_ns()
            self.assertLessEqual(a, c)
            self.assertLessEqual(c, b)

    def test_library_found_in_the_build_tree(self):
        if os.environ.get("TRACEWRITER_LIB"):
            self.skipTest("TRACEWRITER_LIB is set")
        top = os.environ.get("top_builddir")
        if not top:
            self.skipTest("top_builddir is not set")
        self.assertEqual(
            os.path.realpath(tracewriter.library_path()),
            os.path.realpath(os.path.join(top, ".libs", "libtracewriter.so")))
        self.assertRegex(tracewriter.library_version(), r"^\d+\.\d+\.\d+$")


class TestErrors(TraceTest):

    def test_open_missing_directory(self):
        path = os.path.join(self.dir, "no", "such", "t.json")
        e = self.assertError(-errno.ENOENT, tracewriter.open, path)
        self.assertEqual(e.errno, errno.ENOENT)
        self.assertEqual(e.name, "ENOENT")
        self.assertIn(path, str(e))
        self.assertEqual(e.message, os.strerror(errno.ENOENT))

    def test_library_codes_have_no_errno(self):
        e = tracewriter.Error(tracewriter.EEVENT)
        self.assertIsNone(e.errno)
        self.assertEqual(e.message, tracewriter.strerror(tracewriter.EEVENT))

    def test_error_pickles_whole(self):
        e = tracewriter.Error(tracewriter.EOPTION, "bad key 'x'", "open")
        f = pickle.loads(pickle.dumps(e))
        self.assertEqual((f.code, f.name, f.message, f.context, str(f)),
                         (e.code, "TW_EOPTION", "bad key 'x'", "open",
                          str(e)))

    def test_sticky_io_error(self):
        # A child limited to a small file size (RLIMIT_FSIZE) fills it:
        # the commit fails with EFBIG, every later call fails fast, close
        # reports it, and the file keeps its last commit.
        code = """if True:
            import errno, json, resource, signal, sys, tracewriter
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))
            committed = -1
            notes = None
            try:
                with tracewriter.open(sys.argv[1], buffer=256) as w:
                    try:
                        for i in range(100000):
                            w.instant("e", seq=i)
                            if i % 10 == 9:
                                w.flush()
                                committed = i
                    except tracewriter.Error as e:
                        first = e.code
                    codes = [w.errcode]
                    for call in (lambda: w.instant("e", seq=-1), w.flush):
                        try:
                            call()
                            codes.append(0)
                        except tracewriter.Error as e:
                            codes.append(e.code)
                    raise KeyError("body")
            except KeyError as e:
                # close failed too: noted on the body's exception
                notes = getattr(e, "__notes__", None)
            try:
                w.close()               # closed already: nothing
                codes.append(0)
            except tracewriter.Error as e:
                codes.append(e.code)
            print(json.dumps({"first": first, "codes": codes,
                              "committed": committed, "notes": notes}))
        """
        r = subprocess.run([sys.executable, "-B", "-c", code, self.path()],
                           env=child_env(), capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = json.loads(r.stdout)
        self.assertEqual(out["first"], -errno.EFBIG)
        self.assertEqual(out["codes"], [-errno.EFBIG] * 3 + [0])
        if sys.version_info >= (3, 11):
            self.assertEqual(len(out["notes"]), 1)
            self.assertIn("close failed", out["notes"][0])
            self.assertIn("EFBIG", out["notes"][0])
        got = seqs(self.events(self.path()))
        self.assertGreater(out["committed"], 0)
        self.assertEqual(got[:out["committed"] + 1],
                         list(range(out["committed"] + 1)))
        self.assertEqual(got, list(range(len(got))))


class TestDisabledWriter(TraceTest):

    def test_every_call_is_a_no_op(self):
        w = tracewriter._DISABLED
        self.assertFalse(w.enabled)
        self.assertFalse(w.closed)
        w.instant("x", a=object())               # not even looked at
        w.counter("c", s="x")
        with w.span("s"):
            pass

        @w.span
        def f():
            return 1
        self.assertEqual(f(), 1)
        w.flush()
        w.close()
        self.assertFalse(w.closed)
        self.assertEqual(w.errcode, 0)
        self.assertEqual(w.stats(), tracewriter.Stats(*[0] * 10))


if __name__ == "__main__":
    unittest.main()
