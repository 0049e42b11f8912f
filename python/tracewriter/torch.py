"""The PyTorch profiler's trace on a tracewriter timeline.

    import tracewriter, tracewriter.torch

    w = tracewriter.open("engine.json")
    with tracewriter.torch.profile(w) as prof:   # torch.profiler.profile
        with w.span("step"):
            model(x)
    prof.export_chrome_trace("torch.json")
    w.close()

    $ tracewriter merge -o run.json engine.json torch.json

profile(w, **kwargs) is torch.profiler.profile(**kwargs) (a subclass of
it: schedule, on_trace_ready, step() and the rest work as there; torch is
imported only when it is called).  Each time the profiler starts
recording, it ties the profiler's clock to ours: it runs a
record_function named "tracewriter.torch.sync" (ANCHOR), which the
profiler records, between two reads of tracewriter.now_ns(), and reads
the wall clock's offset from that clock.  Its export_chrome_trace(path)
(which on_trace_ready handlers such as tensorboard_trace_handler call
too) writes the profiler's trace with, before "traceEvents", the member
"baseTimeNanoseconds" that makes ts + baseTimeNanoseconds the wall clock
-- what `tracewriter merge` reads in a Kineto trace -- and a member
"tracewriter" saying how it was found.  So merge puts the profiler's
events on our timeline with no --offset:

  - Kineto (PyTorch 2.x): ts are microseconds of the wall clock since a
    base that Kineto writes after the events (2.4 to 2.6), before them
    (2.7 on) or not at all (up to 2.3, ts since the epoch); the export
    writes one baseTimeNanoseconds, before the events, in every case.
  - No Kineto (Debian's python3-torch 1.13): the profiler writes a bare
    array whose ts are microseconds since it started recording; the
    export makes it an object with the events as traceEvents.

baseTimeNanoseconds comes from the anchor when the trace holds it (to a
few microseconds: the two reads around it; 1 us for the legacy
profiler's whole-microsecond ts), else from Kineto's own base, else (no
Kineto, no CPU activity recorded) from the profiler's start time.  The
writer w, if given, gets a span "torch.profiler" (cat "tracewriter.torch")
over each time the profiler recorded.

tie_trace(src, dst, sync) is the rewriting alone, for a trace exported
by torch itself.
"""

import decimal
import gzip
import json
import json.decoder
import os
import re
import tempfile
import time

__all__ = ["profile", "tie_trace", "sync_with", "wall_offset_ns", "Sync",
           "ANCHOR"]

#: The name of the record_function that ties the profiler's clock to ours.
ANCHOR = "tracewriter.torch.sync"
# A record_function run before the profiler records, to warm its path up.
WARMUP = "tracewriter.torch.warmup"


class Sync:
    """What ties one recording of the profiler to our clock: the anchor
    ran between start_ns and end_ns on tracewriter.now_ns()'s clock
    (CLOCK_MONOTONIC), whose readings plus wall_offset_ns are the wall
    clock (time.time_ns()); trace_start_us is the profiler's own start
    time on the wall clock, in microseconds, when it says (None if not).
    windows is every run of the anchor, (start_ns, end_ns) in the order
    they ran: start_ns and end_ns are the narrowest of them."""

    __slots__ = ("start_ns", "end_ns", "wall_offset_ns", "trace_start_us",
                 "windows")

    def __init__(self, start_ns, end_ns, wall_offset_ns,
                 trace_start_us=None, windows=None):
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.wall_offset_ns = wall_offset_ns
        self.trace_start_us = trace_start_us
        self.windows = list(windows) if windows else [(start_ns, end_ns)]

    def __repr__(self):
        return ("Sync(start_ns=%r, end_ns=%r, wall_offset_ns=%r, "
                "trace_start_us=%r, windows=%r)"
                % (self.start_ns, self.end_ns, self.wall_offset_ns,
                   self.trace_start_us, self.windows))


# A reading whose bracket is this narrow is taken at once; a wider one
# (the thread was preempted inside it: a loaded machine) is tried again.
NARROW_NS = 50_000
TRIES = 5


def wall_offset_ns():
    """The wall clock less the monotonic clock, now, in nanoseconds: the
    monotonic clock read on either side of the wall clock, the narrowest
    of up to TRIES such readings."""
    best = None
    for _ in range(TRIES):
        m0 = time.monotonic_ns()
        real = time.time_ns()
        m1 = time.monotonic_ns()
        if best is None or m1 - m0 < best[0]:
            best = (m1 - m0, real - (m0 + m1) // 2)
        if m1 - m0 <= NARROW_NS:
            break
    return best[1]


def sync_with(record_function, anchor=ANCHOR):
    """Run the anchor, record_function(anchor), between two reads of our
    clock, again (up to TRIES runs) while that bracket is wider than
    NARROW_NS; returns the Sync of the narrowest run (tie_trace finds
    its event among the anchors by their order).  Each record_function
    object is made before the first read (its first construction takes
    hundreds of microseconds)."""
    offset = wall_offset_ns()
    windows = []
    for _ in range(TRIES):
        rf = record_function(anchor)
        start = time.monotonic_ns()
        rf.__enter__()
        rf.__exit__(None, None, None)
        end = time.monotonic_ns()
        windows.append((start, end))
        if end - start <= NARROW_NS:
            break
    start, end = min(windows, key=lambda w: w[1] - w[0])
    return Sync(start, end, offset, windows=windows)


# ------------------------------------------------------ reading a trace

_WS = re.compile(r"[ \t\n\r]*")


class _Scan:
    """One pass of json's C scanner over a document, keeping nothing but
    the anchor events (ph "X", name anchor): every other object is
    dropped as soon as it is parsed, so a large trace costs little
    memory."""

    def __init__(self, anchor):
        self.anchor = anchor
        self.found = []
        self.decoder = json.JSONDecoder(object_pairs_hook=self._object,
                                        parse_float=decimal.Decimal)

    def _object(self, pairs):
        for key, value in pairs:
            if key == "name":
                if value == self.anchor:
                    event = dict(pairs)
                    if event.get("ph") == "X" and "ts" in event:
                        self.found.append(event)
                break
        return None

    def value(self, text, i):
        """The value at text[i:] (after blanks): (value, its start, its
        end); objects read as None."""
        i = _WS.match(text, i).end()
        value, end = self.decoder.raw_decode(text, i)
        return value, i, end


def _members(text, scan):
    """The top-level document text: ("array", [(None, start, end)]) or
    ("object", [(key, start, end, value)...]) with each member's span
    (its key through its value).  Raises ValueError if it is not one JSON
    array or object."""
    i = _WS.match(text).end()
    if text.startswith("[", i):
        _, start, end = scan.value(text, i)
        members = [(None, start, end, None)]
        kind = "array"
    elif text.startswith("{", i):
        kind, members = "object", []
        i = _WS.match(text, i + 1).end()
        if not text.startswith("}", i):
            while True:
                if not text.startswith('"', i):
                    raise ValueError("expected a member name at offset %d"
                                     % i)
                key, j = json.decoder.scanstring(text, i + 1)
                j = _WS.match(text, j).end()
                if not text.startswith(":", j):
                    raise ValueError("expected ':' at offset %d" % j)
                value, _, end = scan.value(text, j + 1)
                members.append((key, i, end, value))
                i = _WS.match(text, end).end()
                if text.startswith(",", i):
                    i = _WS.match(text, i + 1).end()
                    continue
                if text.startswith("}", i):
                    break
                raise ValueError("expected ',' or '}' at offset %d" % i)
        end = i + 1
    else:
        raise ValueError("not a JSON array or object")
    rest = _WS.match(text, end).end()
    if rest != len(text):
        raise ValueError("data after the document at offset %d" % rest)
    return kind, members


def _int(value):
    if isinstance(value, bool) or not isinstance(value, (int,
                                                         decimal.Decimal)):
        raise ValueError("not a number: %r" % (value,))
    if value != int(value):
        raise ValueError("not an integer: %r" % (value,))
    return int(value)


def _anchor_event(found, sync):
    """The anchor event the profiler recorded on the CPU (Kineto mirrors
    a user annotation on a GPU stream as "gpu_user_annotation") for
    sync's narrowest run: the runs are recorded in the order they ran;
    when the trace does not hold one event per run, the first."""
    cpu = [e for e in found
           if not str(e.get("cat", "")).startswith("gpu")]
    if not cpu:
        return None
    windows = getattr(sync, "windows", None) or []
    if len(cpu) == len(windows) > 1:
        cpu.sort(key=lambda e: decimal.Decimal(e["ts"]))
        return cpu[windows.index((sync.start_ns, sync.end_ns))]
    return cpu[0]


def _read_text(path):
    """The whole file as a str (gunzipped if it is gzip), strict UTF-8."""
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    opener = gzip.open if gz else open
    with opener(path, "rt", encoding="utf-8", errors="strict",
                newline="") as f:
        return f.read()


def tie_trace(src, dst, sync=None, anchor=ANCHOR):
    """Write the profiler trace src (as torch's export_chrome_trace wrote
    it; gzip is read too) to dst (gzip-compressed if its name ends in
    .gz), with "baseTimeNanoseconds" and "tracewriter" members before
    "traceEvents", so that ts + baseTimeNanoseconds is the wall clock and
    `tracewriter merge` places it with no --offset.  The events are
    copied as they are.  sync (a Sync) ties the anchor event, when the
    trace holds it, to our clock.  Returns the "tracewriter" member, a
    dict: "rule" ("anchor", "kineto", "kineto-epoch" or "trace-start"),
    "baseTimeNanoseconds", and what it came from.  Raises ValueError when
    src is not a trace or nothing ties it to the wall clock (dst is then
    not written).  Memory: about twice the size of the JSON text (a
    64 MB trace, 140 MB; about 2 s)."""
    text = _read_text(src)
    scan = _Scan(anchor)
    kind, members = _members(text, scan)
    head = {m[0]: m[3] for m in members if m[0] is not None}
    if kind == "object" and "traceEvents" not in head:
        raise ValueError("%s: an object without traceEvents" % src)
    event = _anchor_event(scan.found, sync)
    info = {}
    if event is not None and sync is not None:
        ts_ns = decimal.Decimal(event["ts"]) * 1000
        dur_ns = decimal.Decimal(event.get("dur", 0)) * 1000
        torch_mid = ts_ns + dur_ns / 2
        ours_mid = decimal.Decimal(sync.start_ns + sync.end_ns) / 2
        base = int((ours_mid + sync.wall_offset_ns - torch_mid)
                   .to_integral_value(decimal.ROUND_HALF_EVEN))
        info = {"rule": "anchor", "anchor": anchor,
                "anchor_monotonic_ns": int(ours_mid),
                "anchor_window_ns": sync.end_ns - sync.start_ns,
                "wall_offset_ns": sync.wall_offset_ns}
        if "baseTimeNanoseconds" in head:
            info["kinetoBaseTimeNanoseconds"] = _int(
                head["baseTimeNanoseconds"])
    elif "baseTimeNanoseconds" in head:
        base = _int(head["baseTimeNanoseconds"])
        info = {"rule": "kineto"}
    elif "schemaVersion" in head:
        base = 0
        info = {"rule": "kineto-epoch"}
    elif sync is not None and sync.trace_start_us is not None:
        base = int(sync.trace_start_us) * 1000
        info = {"rule": "trace-start",
                "trace_start_us": int(sync.trace_start_us)}
    else:
        raise ValueError(
            "%s: nothing ties it to the wall clock: no %r event%s, no "
            "baseTimeNanoseconds, no schemaVersion (record it with "
            "tracewriter.torch.profile)"
            % (src, anchor, "" if sync is None else
               " (was the CPU activity recorded?)"))
    info["baseTimeNanoseconds"] = base
    head_text = ('"baseTimeNanoseconds": %d,\n  "tracewriter": %s'
                 % (base, json.dumps(info, sort_keys=True)))
    # Pieces of the output: strings, and (start, end) spans of text,
    # written a MiB at a time (no copy of the events).
    if kind == "array":
        _, start, end, _ = members[0]
        pieces = ["{\n  ", head_text, ',\n  "traceEvents": ',
                  (start, end), "\n}\n"]
    else:
        pieces = ["{"]
        for key, start, end, _ in members:
            if key in ("baseTimeNanoseconds", "tracewriter"):
                continue
            if len(pieces) > 1:
                pieces.append(",")
            if key == "traceEvents":
                pieces += ["\n  ", head_text, ","]
            pieces += ["\n  ", (start, end)]
        pieces.append("\n}\n")
    _write_atomically(dst, _chunks(text, pieces))
    return info


def _chunks(text, pieces, size=1 << 20):
    for piece in pieces:
        if isinstance(piece, str):
            yield piece
        else:
            for i in range(piece[0], piece[1], size):
                yield text[i:min(i + size, piece[1])]


def _write_atomically(path, pieces):
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tracewriter-", suffix=".tmp",
                               dir=directory)
    try:
        with os.fdopen(fd, "wb") as raw:
            if path.endswith(".gz"):
                with gzip.GzipFile(fileobj=raw, mode="wb") as z:
                    for piece in pieces:
                        z.write(piece.encode("utf-8"))
            else:
                for piece in pieces:
                    raw.write(piece.encode("utf-8"))
        os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ------------------------------------------------------------ profiling

_PROFILE = None


def _profile_class():
    """The subclass of torch.profiler.profile, made at the first call
    (importing torch)."""
    global _PROFILE
    if _PROFILE is not None:
        return _PROFILE
    import torch.profiler
    from torch.autograd.profiler import record_function

    class Profile(torch.profiler.profile):
        __doc__ = profile.__doc__

        def __init__(self, w=None, **kwargs):
            self.tracewriter_writer = w
            self.tracewriter_sync = None
            self._tracewriter_start = None
            super().__init__(**kwargs)

        def start_trace(self):
            # A record_function's first use is slow: not in the anchor's
            # bracket (the profiler does not record this one yet).
            with record_function(WARMUP):
                pass
            self._tracewriter_start = time.monotonic_ns()
            super().start_trace()
            self.tracewriter_sync = sync_with(record_function)

        def stop_trace(self):
            super().stop_trace()
            end = time.monotonic_ns()
            sync = self.tracewriter_sync
            if sync is not None:
                try:
                    sync.trace_start_us = int(
                        self.profiler.kineto_results.trace_start_us())
                except Exception:
                    sync.trace_start_us = None
            w, start = self.tracewriter_writer, self._tracewriter_start
            if w is not None and start is not None:
                w.complete("torch.profiler", start, end - start,
                           cat="tracewriter.torch")

        def export_chrome_trace(self, path):
            """Export the last recording's trace to path (gzip if it
            ends in .gz), on our timeline (see tracewriter.torch);
            returns tie_trace's dict, which says how it was tied."""
            path = os.fspath(path)
            directory = os.path.dirname(os.path.abspath(path))
            fd, tmp = tempfile.mkstemp(prefix=".torch-", suffix=".json",
                                       dir=directory)
            os.close(fd)
            try:
                super().export_chrome_trace(tmp)
                return tie_trace(tmp, path, self.tracewriter_sync)
            finally:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    _PROFILE = Profile
    return Profile


def profile(w=None, **kwargs):
    """torch.profiler.profile(**kwargs), whose export_chrome_trace(path)
    writes a trace that `tracewriter merge` puts on the timeline of
    tracewriter's traces with no --offset; w, a tracewriter Writer or
    None, gets a span "torch.profiler" over each recording.  Imports
    torch (ImportError without it).  See tracewriter.torch."""
    return _profile_class()(w, **kwargs)
