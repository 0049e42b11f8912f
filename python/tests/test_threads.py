"""Several Python threads on one writer: every event written, each
thread's in the order it emitted them, on its own kernel tid."""

import os
import random
import threading
import time

from support import TraceTest, tracewriter, unittest


class TestThreads(TraceTest):

    def run_threads(self, nthreads, per_thread, name="trace.json",
                    **options):
        seed = int(os.environ.get("TW_TEST_SEED", time.time_ns() % 2**32))
        print("\ntest_threads seed %d (TW_TEST_SEED=%d to replay)" % (seed, seed))
        tids = {}
        start = threading.Barrier(nthreads)
        errors = []

        def work(t):
            rng = random.Random(seed + t)
            try:
                tids[t] = threading.get_native_id()
                w.thread_name("worker-%d" % t)
                start.wait(60)
                for i in range(per_thread):
                    kind = rng.randrange(3)
                    if kind == 0:
                        w.instant("e", thread=t, seq=i)
                    elif kind == 1:
                        with w.span("e", thread=t, seq=i):
                            pass
                    else:
                        w.counter("e", thread=t, seq=i)
                    if rng.randrange(500) == 0:
                        w.flush()
            except Exception as e:               # reported below
                errors.append(e)

        path = self.path(name)
        with tracewriter.open(path, **options) as w:
            before = w.stats().events
            threads = [threading.Thread(target=work, args=(t,))
                       for t in range(nthreads)]
            for th in threads:
                th.start()
            for th in threads:
                th.join(300)
            stats = w.stats()
        self.assertEqual(errors, [])
        self.assertEqual(stats.events - before, nthreads * (per_thread + 1))
        events = self.events(path)
        by_thread = {t: [] for t in range(nthreads)}
        names = {}
        for ev in events:
            if ev["ph"] == "M":
                names[ev["tid"]] = ev["args"]["name"]
                continue
            t = ev["args"]["thread"]
            self.assertEqual(ev["tid"], tids[t])
            self.assertEqual(ev["pid"], os.getpid())
            by_thread[t].append(ev["args"]["seq"])
        for t in range(nthreads):
            self.assertEqual(by_thread[t], list(range(per_thread)),
                             "thread %d" % t)
            self.assertEqual(names[tids[t]], "worker-%d" % t)
        self.assertEqual(len(set(tids.values())), nthreads)

    def test_file_sink(self):
        self.run_threads(8, 3000)

    def test_background_commit_small_buffers(self):
        self.run_threads(4, 3000, commit="background", buffer="1KiB")

    def test_mmap_sink(self):
        self.run_threads(4, 3000, sink="mmap", chunk="64KiB")

    def test_gzip_sink(self):
        self.run_threads(4, 3000, name="trace.json.gz")


if __name__ == "__main__":
    unittest.main()
