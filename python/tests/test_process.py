"""Processes: a writer killed by SIGKILL leaves a valid or repairable file,
crash=commit on SIGTERM, fork, the global writer from the environment,
and finding the library."""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

from support import (PACKAGE_PARENT, TraceTest, built, child_env,
                     parse_strict, read_bytes, run_python, run_tool,
                     tracewriter, unittest, user_events)


def seqs(events):
    return [e["args"]["seq"] for e in events if e.get("name") == "e"]


# A child that writes events forever and prints, on a line, the seq of the
# last event of each commit it makes (file and gzip sinks: at each flush;
# mmap: every record is committed, so every event is printed; with
# crash=commit, every event is printed: the crash hook commits them).
WRITER = """if True:
    import random, sys, tracewriter
    path, seed, every, options = sys.argv[1], int(sys.argv[2]), \\
        int(sys.argv[3]), sys.argv[4]
    rng = random.Random(seed)
    w = tracewriter.open(path, options=options, buffer="4KiB")
    print("open", flush=True)
    i = 0
    while True:
        w.instant("e", seq=i, pad="x" * rng.randrange(200))
        if every and i % every == every - 1:
            w.flush()
        if not every or i % every == every - 1:
            print(i, flush=True)
        i += 1
"""


class TestKill(TraceTest):

    def kill_child(self, path, options, every, sig, seed):
        """Start the writer child, let it commit a random number of times,
        kill it with sig; returns the last seq it said was committed."""
        rng = random.Random(seed)
        target = rng.randrange(1, 60)
        child = subprocess.Popen(
            [sys.executable, "-B", "-c", WRITER, path, str(seed), str(every),
             options], env=child_env(), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        try:
            self.assertEqual(child.stdout.readline(), "open\n")
            last = -1
            for _ in range(target):
                line = child.stdout.readline()
                if not line:
                    self.fail("seed %d: the child died: %s"
                              % (seed, child.stderr.read()))
                last = int(line)
            child.send_signal(sig)
            child.wait(60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(60)
            child.stdout.close()
            child.stderr.close()
        self.assertEqual(child.returncode, -sig)
        return last

    def check_valid_or_repaired(self, path, last, seed):
        """The trace holds a strictly valid prefix of the events 0, 1, ...
        up to at least last, as it is or after tools/tracewriter repair.
        Returns whether it needed the repair."""
        repaired = False
        try:
            events = self.load(path)
        except (ValueError, EOFError) as e:   # cut inside a commit
            repaired = True
            tool = built("tools/tracewriter")
            if not tool:
                self.skipTest("tools/tracewriter is not built")
            r = run_tool([tool, "repair", path])
            self.assertEqual(r.returncode, 0, "seed %d: %s / repair: %s"
                             % (seed, e, r.stdout + r.stderr))
            events = self.load(path)
        got = seqs(user_events(events))
        self.assertEqual(got, list(range(len(got))), "seed %d" % seed)
        self.assertGreaterEqual(len(got), last + 1, "seed %d" % seed)
        return repaired

    def kills(self, name, options, every, sig=signal.SIGKILL, n=4):
        base = int(os.environ.get("TW_TEST_SEED", time.time_ns() % 2**32))
        print("\n%s: seeds %d.. (TW_TEST_SEED=%d to replay)" % (
            self.id(), base, base))
        repaired = 0
        for k in range(n):
            seed = base + k
            path = self.path(name)
            last = self.kill_child(path, options, every, sig, seed)
            repaired += self.check_valid_or_repaired(path, last, seed)
        print("%d of %d traces needed tools/tracewriter repair"
              % (repaired, n))

    def test_cut_trace_is_repaired(self):
        # What a kill inside a commit leaves, made on purpose: the branch
        # of check_valid_or_repaired that the kills above rarely reach.
        seed = int(os.environ.get("TW_TEST_SEED", time.time_ns() % 2**32))
        print("\n%s: seed %d" % (self.id(), seed))
        rng = random.Random(seed)
        for name in ("cut.json", "cut.json.gz"):
            path = self.path(name)
            with tracewriter.open(path) as w:
                for i in range(200):
                    w.instant("e", seq=i)
                    if i == 99:
                        w.flush()
            size = os.path.getsize(path)
            with open(path, "r+b") as f:
                f.truncate(rng.randrange(size * 3 // 4, size - 8))
            self.assertTrue(self.check_valid_or_repaired(path, -1, seed),
                            name)

    def test_sigkill_file(self):
        self.kills("trace.json", "", 25)

    def test_sigkill_gzip(self):
        self.kills("trace.json.gz", "", 25)

    def test_sigkill_mmap(self):
        self.kills("trace.json", "sink=mmap,chunk=4KiB", 0)

    def test_sigterm_crash_commit(self):
        # No flush at all: the crash hook commits what is buffered.
        self.kills("trace.json", "crash=commit", 0, signal.SIGTERM)
        self.kills("trace.json.gz", "crash=commit", 0, signal.SIGTERM, 2)


class TestFork(TraceTest):

    def test_child_of_fork_writes_nothing(self):
        code = """if True:
            import os, sys, tracewriter
            w = tracewriter.open(sys.argv[1])
            w.instant("e", seq=0)
            pid = os.fork()
            if pid == 0:
                try:
                    w.instant("e", seq=99)
                    os._exit(1)
                except tracewriter.Error as e:
                    if e.code != tracewriter.EFORKED:
                        os._exit(2)
                w.close()               # frees the copy, writes nothing
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            w.instant("e", seq=1)
            w.close()
            print(os.waitstatus_to_exitcode(status))
        """
        r = subprocess.run([sys.executable, "-B", "-c", code, self.path()],
                           env=child_env(), capture_output=True, text=True,
                           timeout=120)
        self.assertEqual((r.returncode, r.stdout), (0, "0\n"), r.stderr)
        self.assertEqual(seqs(self.events(self.path())), [0, 1])


class TestGlobalWriter(TraceTest):

    def test_from_the_environment(self):
        code = """if True:
            import json, os, tracewriter
            w = tracewriter.global_writer()
            assert w is tracewriter.global_writer()
            w.thread_name("main")
            w.instant("e", seq=0)
            w.close()                   # commits; stays open
            w.instant("e", seq=1)
            with w.span("e", seq=2):
                pass
            pid = os.fork()
            if pid == 0:                # %p: the child gets its own file
                w.instant("e", seq=100)
                ok = tracewriter.global_writer() is w and w.enabled
                w.flush()
                os._exit(0 if ok else 1)
            _, status = os.waitpid(pid, 0)
            print(json.dumps({"pid": os.getpid(), "child": pid,
                              "status": status, "enabled": w.enabled,
                              "closed": w.closed}))
        """
        r = run_python(code,
                       TRACEWRITER_OUT=os.path.join(self.dir, "g-%p.json"),
                       TRACEWRITER_OPTIONS="format=object,buffer=1KiB")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = json.loads(r.stdout)
        self.assertEqual((out["status"], out["enabled"], out["closed"]),
                         (0, True, False))
        path = self.path("g-%d.json" % out["pid"])
        self.assertIsInstance(parse_strict(read_bytes(path)), dict)
        events = self.load(path)
        self.assertEqual(seqs(events), [0, 1, 2])
        self.assertIn({"name": "main"}, [e["args"] for e in events
                                         if e["name"] == "thread_name"])
        self.assertEqual(
            seqs(self.load(self.path("g-%d.json" % out["child"]))), [100])

    def test_fork_without_pid_turns_tracing_off_in_the_child(self):
        code = """if True:
            import os, tracewriter
            w = tracewriter.global_writer()
            w.instant("e", seq=0)
            pid = os.fork()
            if pid == 0:
                w.instant("e", seq=100)     # nothing, and no error
                c = tracewriter.global_writer()
                c.instant("e", seq=101)
                os._exit(0 if not w.enabled and not c.enabled else 1)
            _, status = os.waitpid(pid, 0)
            w.instant("e", seq=1)
            print(status)
        """
        r = run_python(code, TRACEWRITER_OUT=self.path("g.json"))
        self.assertEqual((r.returncode, r.stdout), (0, "0\n"), r.stderr)
        self.assertEqual(seqs(self.load(self.path("g.json"))), [0, 1])

    def test_off_needs_no_library(self):
        # Every kind of span too, through the compiled path when it is
        # there (it must not need the library to be loaded).
        code = """if True:
            import asyncio, tracewriter
            w = tracewriter.global_writer()
            w.instant("e", seq=0)
            with w.span("s", k=1) as s:
                s.set(m=2)

            @w.span("d", k=1)
            def d(x):
                return x + 1

            @w.span
            async def a():
                async with w.span("inner"):
                    return d(1)
            assert asyncio.run(a()) == 2
            w.close()
            print(w.enabled, w.stats().events)
        """
        for out in (None, ""):
            r = run_python(code, TRACEWRITER_OUT=out,
                           TRACEWRITER_LIB="/nonexistent/libtracewriter.so")
            self.assertEqual((r.returncode, r.stdout), (0, "False 0\n"),
                             r.stderr)
        self.assertEqual(os.listdir(self.dir), [])

    def test_bad_options_raise(self):
        code = """if True:
            import tracewriter
            try:
                tracewriter.global_writer()
            except tracewriter.Error as e:
                print(e.code, e.message)
        """
        r = run_python(code, TRACEWRITER_OUT=self.path(),
                       TRACEWRITER_OPTIONS="colour=red")
        self.assertEqual(r.returncode, 0, r.stderr)
        code, message = r.stdout.split(" ", 1)
        self.assertEqual(int(code), tracewriter.EOPTION)
        self.assertIn("colour", message)

    def test_missing_library_when_asked_for(self):
        code = """if True:
            import tracewriter
            try:
                tracewriter.global_writer()
            except tracewriter.LibraryNotFoundError as e:
                print(e)
        """
        r = run_python(code, TRACEWRITER_OUT=self.path(),
                       TRACEWRITER_LIB="/nonexistent/libtracewriter.so")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("/nonexistent/libtracewriter.so (TRACEWRITER_LIB): "
                      "no such file", r.stdout)


SOURCE_PYTHON = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TestFindingTheLibrary(TraceTest):
    """A copy of the package outside the source tree, so that only the
    environment and the install locations can point at the library."""

    CODE = """if True:
        import tracewriter
        try:
            print("loaded", tracewriter.library_path())
        except tracewriter.LibraryNotFoundError as e:
            print(e)
    """

    def run_copy(self, **env):
        # self.dir plays the source tree: python/tracewriter in it, and
        # python/tracewriter_build.py beside it.
        parent = os.path.join(self.dir, "python")
        shutil.copytree(os.path.join(PACKAGE_PARENT, "tracewriter"),
                        os.path.join(parent, "tracewriter"),
                        dirs_exist_ok=True)
        shutil.copy(os.path.join(SOURCE_PYTHON, "tracewriter_build.py"),
                    parent)
        env.setdefault("TRACEWRITER_LIB", None)
        r = subprocess.run([sys.executable, "-B", "-c", self.CODE],
                           cwd=self.dir, env=dict(child_env(**env),
                                                  PYTHONPATH=parent),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_top_builddir(self):
        top = os.environ.get("top_builddir")
        if not top:
            self.skipTest("top_builddir is not set")
        out = self.run_copy(top_builddir=top)
        self.assertEqual(out, "loaded %s\n" % os.path.join(
            top, ".libs", "libtracewriter.so"))

    def test_error_lists_what_was_tried(self):
        out = self.run_copy(top_builddir=None,
                            LD_LIBRARY_PATH=None)
        if out.startswith("loaded"):
            self.skipTest("a libtracewriter is installed: " + out)
        self.assertIn("cannot load libtracewriter; tried:", out)
        self.assertIn(os.path.join(self.dir, "python", "tracewriter",
                                   "libtracewriter.so") +
                      " (package): no such file", out)
        self.assertIn(os.path.join(self.dir, ".libs", "libtracewriter.so") +
                      " (build tree): no such file", out)
        self.assertIn("/usr/local/lib/libtracewriter.so.0 (lib dir)", out)
        self.assertIn("find_library('tracewriter'): not found", out)
        self.assertIn("TRACEWRITER_LIB", out)

    def test_installed_copy_has_no_build_tree(self):
        # A package outside a source tree (site-packages, as pip puts it)
        # tries its own library first and no build tree: issue 30 saw
        # <venv>/lib/python3.11/.libs tried.
        site = os.path.join(self.dir, "lib", "python3", "site-packages")
        shutil.copytree(os.path.join(PACKAGE_PARENT, "tracewriter"),
                        os.path.join(site, "tracewriter"))
        r = subprocess.run([sys.executable, "-B", "-c", self.CODE],
                           cwd=self.dir, env=dict(
                               child_env(TRACEWRITER_LIB=None,
                                         top_builddir=None,
                                         LD_LIBRARY_PATH=None),
                               PYTHONPATH=site),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        if r.stdout.startswith("loaded"):
            self.skipTest("a libtracewriter is installed: " + r.stdout)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[1], "  %s (package): no such file" %
                         os.path.join(site, "tracewriter",
                                      "libtracewriter.so"))
        self.assertNotIn("(build tree)", r.stdout)
        self.assertNotIn(".libs", r.stdout)

    def test_env_path_that_is_not_a_library(self):
        bogus = self.path("libbogus.so")
        with open(bogus, "w") as f:
            f.write("not ELF\n")
        out = self.run_copy(TRACEWRITER_LIB=bogus)
        self.assertIn(bogus + " (TRACEWRITER_LIB): ", out)
        self.assertNotIn("(lib dir)", out)       # nothing else was tried


if __name__ == "__main__":
    unittest.main()
