"""tracewriter: Chrome Trace Event Format JSON, written incrementally.

A Python binding, over ctypes (spans through a compiled fast path,
tracewriter._speedups, when it was built), of libtracewriter: the trace
file is a complete, strictly valid JSON document again at every commit,
so a server that is killed leaves a trace that Perfetto
(https://ui.perfetto.dev), chrome://tracing and DevTools open, and memory
stays bounded however long it runs.

    import tracewriter

    with tracewriter.open("trace.json", flush="1s") as w:
        w.thread_name("main")
        with w.span("prefill", cat="llm", tokens=512):
            ...
        w.counter("kv_cache", used=0.42, blocks=1210)

    @w.span("decode", cat="llm")       # as a decorator, on every call
    def decode(batch): ...

Errors raise tracewriter.Error, which carries the library's code and
message.  The manual of the C library (man 7 tracewriter) describes the
file, the options and the guarantees; python/README.md this binding.
"""

import atexit
import contextvars
import functools
import inspect
import itertools
import json
import math
import numbers
import os
import threading
import time
import struct
import warnings
import weakref
from ctypes import (addressof, byref, c_char_p, c_int, c_void_p, cast,
                    create_string_buffer, sizeof)
from dataclasses import dataclass

from . import _lib
from ._lib import LibraryNotFoundError

# The compiled fast path (tracewriter/_speedups.c), when it was built;
# else, or with TRACEWRITER_SPEEDUPS=0 in the environment, everything
# goes through ctypes.  Importing never fails either way.
if os.environ.get("TRACEWRITER_SPEEDUPS", "1") != "0":
    try:
        from . import _speedups
    except ImportError:
        _speedups = None
else:
    _speedups = None

__all__ = [
    "open", "open_fd", "global_writer", "now_ns", "Writer", "Span", "Stats",
    "Error", "LibraryNotFoundError", "library_path", "library_version",
    "strerror", "err_name", "speedups",
    "EOPTION", "EVERSION", "EEVENT", "EUTF8", "ENONFINITE", "ETOOLONG",
    "ETOOBIG", "EJSON", "ETOOMANY", "EFORKED", "ESINK", "EZLIB", "EDROPPED",
    "EBUSY",
]

__version__ = "0.1.0"

# The library's own error codes (TW_ERRNO_MAP in tracewriter.h); system
# errors are negated errno values.
EOPTION = -1001
EVERSION = -1002
EEVENT = -1003
EUTF8 = -1004
ENONFINITE = -1005
ETOOLONG = -1006
ETOOBIG = -1007
EJSON = -1008
ETOOMANY = -1009
EFORKED = -1010
ESINK = -1011
EZLIB = -1012
EDROPPED = -1013
EBUSY = -1014

_ARG_INT, _ARG_UINT, _ARG_DOUBLE, _ARG_BOOL = (
    _lib.ARG_INT, _lib.ARG_UINT, _lib.ARG_DOUBLE, _lib.ARG_BOOL)
_ARG_STRING, _ARG_NULL, _ARG_JSON = (
    _lib.ARG_STRING, _lib.ARG_NULL, _lib.ARG_JSON)
_Arg = _lib.Arg
# A tw_event is packed in two pieces (most events need only the first and
# zeros): ph, instant_scope, has, flags, name, cat, ts, dur; then tts,
# tdur, pid, tid, id, bind_id, id_scope, cname, args, nargs, reserved[2].
_pack_head = _lib.struct_of(_lib.Event, None, "tts").pack
_pack_tail = _lib.struct_of(_lib.Event, "tts", None).pack
_ZERO_TAIL = bytes(_lib.struct_of(_lib.Event, "tts", None).size)
_HAS_TS, _HAS_ID = _lib.HAS_TS, _lib.HAS_ID

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1

#: The current time in nanoseconds on the clock of the library's
#: tw_now_ns() (CLOCK_MONOTONIC), the default timestamp of every event.
#: It is time.monotonic_ns, which reads that clock without a foreign call.
now_ns = time.monotonic_ns


def library_path():
    """The path libtracewriter was loaded from (loading it if needed)."""
    return _lib.get().path


def library_version():
    """The version of the loaded libtracewriter, as "MAJOR.MINOR.PATCH"."""
    return _lib.get().version().decode()


def strerror(code):
    """The library's message for an error code (tw_strerror)."""
    return _lib.get().strerror(code).decode()


def err_name(code):
    """The symbolic name of an error code: "TW_EEVENT", "ENOSPC"..."""
    return _lib.get().err_name(code).decode()


class Error(Exception):
    """An error of libtracewriter.

    code is the library's negative code (a TW_E* value such as
    tracewriter.EEVENT, or a negated errno such as -errno.ENOSPC), name
    its symbolic name ("TW_EEVENT", "ENOSPC") and message the explanation:
    tw_strerror's, or tw_options_parse's naming the bad key or value."""

    def __init__(self, code, message=None, context=None):
        self.code = code
        try:
            self.name = err_name(code)
            if message is None:
                message = strerror(code)
        except LibraryNotFoundError:
            self.name = str(code)
        self.message = message or ""
        self.context = context
        text = "%s (%s)" % (self.message, self.name)
        super().__init__("%s: %s" % (context, text) if context else text)

    @property
    def errno(self):
        """The errno of a system error (-code), else None."""
        return -self.code if -1000 < self.code < 0 else None

    def __reduce__(self):               # pickle (multiprocessing) it whole
        return Error, (self.code, self.message, self.context)


@dataclass(frozen=True)
class Stats:
    """A writer's counters (tw_stats), as Writer.stats() returns them."""
    events: int             #: events written (staged or committed)
    bytes: int              #: bytes of records written, head included
    commits: int            #: commits done
    rejected: int           #: events refused as bad input
    strings_truncated: int  #: strings cut to max_string
    utf8_replaced: int      #: strings with invalid UTF-8 replaced
    dropped: int            #: events dropped by on_full=drop
    error: int              #: the sticky error, as Writer.errcode
    output_bytes: int       #: bytes committed to the output (compressed
    #:                         for gzip), every rotated file's included
    rotations: int          #: files begun by rotation


# ----------------------------------------------------------------- strings

def _cstr(s, what="name"):
    """A str (or bytes) as bytes for a NUL-terminated C string.

    Lone surrogates pass through as the bytes they would be
    ("surrogatepass"): that is invalid UTF-8, which the writer replaces
    with U+FFFD or refuses (utf8=reject), as for C callers.  A NUL would
    silently cut the string, so it is refused, as os.open refuses it."""
    if isinstance(s, str):
        b = s.encode("utf-8", "surrogatepass")
    elif isinstance(s, (bytes, bytearray)):
        b = bytes(s)
    else:
        raise TypeError("%s must be str, not %s" % (what, type(s).__name__))
    if b"\0" in b:
        raise ValueError("embedded null character in %s" % what)
    return b


# Names, categories and argument names recur: each is encoded and its
# address taken once, then found here as (bytes, address).  A caller holds
# the entry until its foreign call returns, which keeps the bytes alive;
# entries are never removed, and past _NAMES_MAX names new ones are not
# cached (a program that puts ids in its names pays an encoding per use,
# not unbounded memory).
_NAMES_MAX = 4096
_names = {None: (None, 0)}


def _intern(s, what="name"):
    b = _cstr(s, what)
    entry = (b, cast(c_char_p(b), c_void_p).value)
    if len(_names) < _NAMES_MAX:
        _names[s] = entry
    return entry


# -------------------------------------------------------------------- args

def _replace_nonfinite(value, seen):
    """A copy of a JSON-able value with NaN and infinities as None, and
    whether there were any.  Raises ValueError on a cycle, as json."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value, False
        return None, True
    if isinstance(value, (dict, list, tuple)):
        if id(value) in seen:
            raise ValueError("Circular reference detected")
        seen.add(id(value))
        found = False
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                out[k], f = _replace_nonfinite(v, seen)
                found |= f
        else:
            out = []
            for v in value:
                v, f = _replace_nonfinite(v, seen)
                out.append(v)
                found |= f
        seen.discard(id(value))
        return out, found
    return value, False


def _dumps(value, reject_nonfinite):
    """value as compact JSON text, for a TW_ARG_JSON argument.  NaN and
    infinities inside it follow the writer's nonfinite option: null, or
    Error(ENONFINITE)."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":"))
    except ValueError:
        fixed, found = _replace_nonfinite(value, set())
        if not found:
            raise
        if reject_nonfinite:
            raise Error(ENONFINITE, context="argument") from None
        return json.dumps(fixed, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":"))


def _set_bytes(a, type_, b):
    a.type = type_
    a.len = len(b)
    a.s = b                     # the array keeps b alive (ctypes _objects)


def _set_int(a, v):
    if _INT64_MIN <= v <= _INT64_MAX:
        a.type = _ARG_INT
        a.i = v
    elif 0 <= v <= _UINT64_MAX:
        a.type = _ARG_UINT
        a.u = v
    else:
        # The exact digits, as json.dumps writes a big int (readers that
        # take numbers as doubles round it, as they would anyway).
        _set_bytes(a, _ARG_JSON, str(v).encode())


def _set_other(a, key, v, reject_nonfinite):
    """The rarer argument types, and subclasses (IntEnum, numpy scalars,
    str subclasses...)."""
    if isinstance(v, bool):
        a.type = _ARG_BOOL
        a.b = 1 if v else 0
    elif isinstance(v, numbers.Integral):
        _set_int(a, int(v))
    elif isinstance(v, numbers.Real):
        a.type = _ARG_DOUBLE
        a.d = float(v)
    elif isinstance(v, str):
        _set_bytes(a, _ARG_STRING, str.encode(v, "utf-8", "surrogatepass"))
    elif isinstance(v, (bytes, bytearray, memoryview)):
        _set_bytes(a, _ARG_STRING, bytes(v))   # the writer checks its UTF-8
    elif isinstance(v, (dict, list, tuple)):
        _set_bytes(a, _ARG_JSON, _dumps(v, reject_nonfinite).encode(
            "utf-8", "surrogatepass"))
    else:
        raise TypeError("argument %r: cannot write a %s (int, float, bool, "
                        "str, bytes, None, dict, list or tuple)"
                        % (key, type(v).__name__))


def _pack(items, reject_nonfinite):
    """A dict of arguments as a ctypes array of tw_arg: returns its
    address and a list to hold until the foreign call returns (the array,
    and the names that are not in the cache, whose entries live forever).
    The common types are inlined: this is the cost of every argument."""
    arr = (_Arg * len(items))()
    keep = [arr]
    i = 0
    for key, v in items.items():
        a = arr[i]
        i += 1
        entry = _names.get(key)
        if entry is None:
            entry = _intern(key, "argument name")
            keep.append(entry)
        elif key is None:
            raise TypeError("argument name must be str, not None")
        a.name = entry[1]
        t = type(v)
        if t is str:
            b = v.encode("utf-8", "surrogatepass")
            a.type = _ARG_STRING
            a.len = len(b)
            a.s = b             # the array keeps b alive (ctypes _objects)
        elif t is int:
            if _INT64_MIN <= v <= _INT64_MAX:
                a.type = _ARG_INT
                a.i = v
            else:
                _set_int(a, v)
        elif t is float:
            a.type = _ARG_DOUBLE
            a.d = v
        elif t is bool:
            a.type = _ARG_BOOL
            a.b = 1 if v else 0
        elif v is None:
            a.type = _ARG_NULL
        else:
            _set_other(a, key, v, reject_nonfinite)
    return addressof(arr), keep


def _merge(args, kwargs):
    if not args:
        return kwargs
    if not kwargs:
        return args
    merged = dict(args)
    merged.update(kwargs)
    return merged


def _i64(v, what):
    v = int(v)
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise OverflowError("%s %d is not an int64" % (what, v))
    return v


_SCOPES = {None: b"\0", "t": b"t", "p": b"p", "g": b"g"}


def _scope(scope):
    try:
        return _SCOPES[scope]
    except (KeyError, TypeError):
        raise ValueError("instant scope must be 'g', 'p', 't' or None, "
                         "not %r" % (scope,)) from None


def _field_error(what, e):
    """struct.error from packing an event: a time or an id that is not an
    int from 0 to 2**64-1, or a pid/tid beyond int64."""
    kind = OverflowError if "range" in str(e) else TypeError
    return kind("%s: %s (times, durations and ids are ints from 0 to "
                "2**64-1; pid and tid int64)" % (what, e))


# ----------------------------------------------------------------- options

def _option_value(key, value):
    if value is True:
        return key
    if hasattr(value, "total_seconds"):              # datetime.timedelta
        us = value // type(value)(microseconds=1)
        value = "%dus" % us
    elif isinstance(value, int):
        value = str(value)
    elif not isinstance(value, str):
        raise Error(EOPTION, "%s: a %s is not an option value (str, int, "
                    "bool or timedelta)" % (key, type(value).__name__))
    if "," in value or "=" in value:
        raise Error(EOPTION, "%s: a value holds no ',' or '=': %r"
                    % (key, value))
    return "%s=%s" % (key, value)


def _options(options, kwargs):
    """A tw_options from an options string and keyword options, plus the
    bytes it points to (kept alive until the writer is open)."""
    lib = _lib.get()
    o = _lib.Options()
    rc = lib.options_init_sized(byref(o), sizeof(o))
    if rc:
        raise Error(rc, context="tw_options_init_sized(%d)" % sizeof(o))
    keep = []
    process_name = kwargs.pop("process_name", None)
    file_mode = kwargs.pop("file_mode", None)
    parts = [options] if options else []
    for key, value in kwargs.items():
        if value is None or value is False:
            continue
        parts.append(_option_value(key, value))
    text = ",".join(parts)
    err = create_string_buffer(256)
    rc = lib.options_parse(byref(o), text.encode(), err, sizeof(err))
    if rc:
        raise Error(rc, err.value.decode(errors="replace"))
    if process_name is not None:
        keep.append(_cstr(process_name, "process_name"))
        o.process_name = keep[-1]
    if file_mode is not None:
        o.file_mode = int(file_mode)
    return o, keep


def open(path, options=None, **kwargs):
    """Open a writer on path (created or truncated) and return it.

    Keyword options are the library's option keys (man 7 tracewriter,
    OPTIONS), mapped onto its options string: a str or int value gives
    KEY=VALUE, True the bare KEY, a timedelta a duration, and False or
    None leaves the key out (its default):

        open("t.json", sink="mmap", flush="100ms", rotate="64MiB")
        open("t.json.gz", gzip=6, sync=True, flush=timedelta(seconds=1))

    options is an options string taken as it is (the syntax of
    TRACEWRITER_OPTIONS), applied before the keywords.  Two keywords are
    fields without a key: process_name (the name in the first record) and
    file_mode (the new file's permission bits, default 0o644).

    Raises Error: EOPTION with the library's message naming the bad key
    or value, ESINK, or the system error of opening the file; and
    LibraryNotFoundError.

    One keyword is the binding's own: async_spans, how requests (async
    spans and the spans inside them) are written: "async" (the default)
    as nested async begin/end pairs, one async track per request;
    "lanes" as complete events on lanes, synthetic threads named
    "requests lane N" (see Span).  It is the writer's async_spans
    attribute, which may also be set later."""
    lib = _lib.get()
    async_spans = _async_spans(kwargs.pop("async_spans", "async"))
    o, keep = _options(options, kwargs)
    err = c_int(0)
    h = lib.open(os.fsencode(path), byref(o), byref(err))
    if not h:
        raise Error(err.value, context=os.fsdecode(path))
    w = Writer._wrap(h, os.fsdecode(path), o)
    w.async_spans = async_spans
    return w


def open_fd(fd, options=None, **kwargs):
    """Open a writer on an open file descriptor, which stays the caller's
    (tw_open_fd): a regular file is committed in place; a pipe, socket or
    O_APPEND descriptor is streamed and holds a valid trace only after
    close().  Options as for open()."""
    lib = _lib.get()
    async_spans = _async_spans(kwargs.pop("async_spans", "async"))
    o, keep = _options(options, kwargs)
    err = c_int(0)
    h = lib.open_fd(int(fd), byref(o), byref(err))
    if not h:
        raise Error(err.value, context="fd %d" % fd)
    w = Writer._wrap(h, "<fd %d>" % fd, o)
    w.async_spans = async_spans
    return w


def _async_spans(value):
    if value not in ASYNC_SPANS:
        raise ValueError("async_spans must be 'async' or 'lanes', not %r"
                         % (value,))
    return value


# ------------------------------------------------------------------ writer

# Writers opened here and not yet closed: committed at interpreter exit.
_open_writers = weakref.WeakSet()


@atexit.register
def _flush_at_exit():
    # Commit, never close: daemon threads may still be emitting.
    for w in list(_open_writers):
        try:
            w.flush()
        except Exception:
            pass


def speedups():
    """True when spans go through the compiled fast path
    (tracewriter._speedups), False when through ctypes alone."""
    return _speedups is not None


def _bind_speedups(lib):
    """Give the fast path the library's tw_complete, once loaded."""
    if _speedups is not None and not _speedups.bound():
        _speedups.bind(cast(lib.dll.tw_complete, c_void_p).value, Error,
                       Span, _nest_begin, _nest_end)


class Writer(_speedups.WriterBase if _speedups else object):
    """A trace writer.  Get one from open(), open_fd() or global_writer().

    Every event method raises Error when the library refuses the event
    (bad input: the writer goes on) or has met an I/O error (sticky: the
    file keeps its last commit), TypeError or ValueError for arguments it
    cannot write, and ValueError once the writer is closed.  Methods
    return None.

    Event arguments are keyword arguments, or a dict passed as args= for
    names that clash with a parameter (cat, scope, args...; the event's
    name and id are positional-only, so "name" and "id" are free):

        int     int64, uint64 above 2**63-1; beyond 64 bits the exact
                digits as a raw JSON number
        float   a double; NaN and infinities per the nonfinite option
        bool    true / false
        str     a string (bytes: a string whose UTF-8 the writer checks)
        None    null
        dict, list, tuple   JSON text (json.dumps), checked by the writer

    Any number of threads may use one writer at once (ctypes releases the
    GIL around each call); each thread's events keep their order.  close()
    must not run while another thread uses the writer.

    A writer is a context manager that closes it on exit."""

    # _h, the handle, is a slot of the compiled base when there is one.
    __slots__ = (() if _speedups else ("_h",)) + (
        "_c", "_e", "path", "_reject_nonfinite", "_global", "__weakref__",
        "async_spans", "_lanes")

    def __init__(self):
        raise TypeError("use tracewriter.open(), open_fd() or "
                        "global_writer()")

    @classmethod
    def _wrap(cls, h, path, opts, is_global=False):
        w = (_speedups.WriterBase if _speedups else object).__new__(cls)
        w._h = h or 0
        w._c = _lib.get() if h else None     # the library's functions
        if h:
            _bind_speedups(w._c)
        w._e = w._c.emit if h else None
        w.path = path
        w._reject_nonfinite = bool(
            opts is not None and opts.flags & _lib.OPT_REJECT_NONFINITE)
        w._global = is_global
        w.async_spans = "async"
        w._lanes = []               # its lanes (_Track), lane n at n - 1
        if h and not is_global:
            _open_writers.add(w)
        return w

    def __repr__(self):
        if self._h is None:
            state = "closed"
        elif not self._h:
            state = "disabled"
        else:
            state = "global" if self._global else "open"
        return "<tracewriter.Writer %s %r>" % (state, self.path)

    # -- lifecycle

    @property
    def enabled(self):
        """False for the disabled writer (tracing off) and once closed."""
        if self._global and _forked:
            _global_after_fork()
        return bool(self._h)

    @property
    def closed(self):
        return self._h is None

    def _cold(self):
        """The handle to use when self._h is not one: raises ValueError if
        the writer is closed; for the global writer in a child after
        fork, the child's own (see global_writer); else 0, disabled."""
        if self._h is None:
            raise ValueError("I/O operation on closed tracewriter.Writer")
        if self._global and _forked:
            return _global_after_fork()
        return 0

    def flush(self):
        """Commit: the file is a complete trace holding every event emitted
        before the call.  Raises Error with the writer's sticky error."""
        h = self._h
        if not h:
            h = self._cold()
            if not h:
                return
        rc = self._c.flush(h)
        if rc:
            raise Error(rc, context="flush")

    def close(self):
        """Commit, close the file and free the writer, always, even on
        error; returns None or raises Error with the first error the
        writer met (of any commit, or of close(2)).  Closing twice does
        nothing.  The writer of global_writer() is never closed: close()
        commits it (as flush) and it stays open."""
        h = self._h
        if not h:
            return
        if self._global:
            self.flush()
            return
        self._h = None
        _open_writers.discard(self)
        rc = self._c.close(h)
        if rc:
            raise Error(rc, context="close")

    def __enter__(self):
        if self._h is None:
            self._cold()
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None:
            self.close()
            return
        # The body's exception goes on; an error of close is noted on it.
        try:
            self.close()
        except Error as e:
            if hasattr(exc, "add_note"):
                exc.add_note("tracewriter: also, close failed: %s" % e)

    def __del__(self):
        h = getattr(self, "_h", None)
        if h and not self._global:
            try:
                warnings.warn("unclosed %r" % self, ResourceWarning,
                              source=self)
            except Exception:
                pass
            self._h = None
            try:
                self._c.close(h)
            except Exception:
                pass

    @property
    def errcode(self):
        """The writer's sticky error: 0 while all is well, else the first
        I/O error (EFORKED in a child after fork)."""
        h = self._h
        if not h:
            return 0
        return self._c.errcode(h)

    def stats(self):
        """The writer's counters, as a Stats."""
        h = self._h or self._cold()
        s = _lib.Stats()
        if not h:                       # disabled: all zeros, as in C
            return Stats(**{f[0]: 0 for f in s._fields_})
        rc = self._c.get_stats_sized(h, byref(s), sizeof(s))
        if rc:
            raise Error(rc, context="stats")
        return Stats(**{f[0]: getattr(s, f[0]) for f in s._fields_})

    # -- events

    def _event(self, what, ph, scope, has, flags, name, cat, ts, dur, id,
               items, packed=None):
        """Pack one tw_event and emit it: the path of every event method
        but the metadata ones (one foreign call of two arguments).  items
        is a dict of arguments, or packed (address, count, keep) of
        arguments packed once by _pack (a decorator's)."""
        h = self._h
        if not h:
            h = self._cold()
            if not h:
                return
        ne = _names.get(name) or _intern(name, "name")
        ce = _names.get(cat) or _intern(cat, "cat")
        try:
            ev = _pack_head(ph, scope, has, flags, ne[1], ce[1], ts, dur)
            if items:
                # keep holds what args points to until self._e returns
                args, keep = _pack(items, self._reject_nonfinite)
                ev += _pack_tail(0, 0, 0, 0, id, 0, 0, 0, args, len(items),
                                 0, 0)
            elif packed:
                ev += _pack_tail(0, 0, 0, 0, id, 0, 0, 0, packed[0],
                                 packed[1], 0, 0)
            elif has & _HAS_ID:
                ev += _pack_tail(0, 0, 0, 0, id, 0, 0, 0, 0, 0, 0, 0)
            else:
                ev += _ZERO_TAIL
        except struct.error as e:
            raise _field_error(what, e) from None
        rc = self._e(h, ev)
        if rc:
            raise Error(rc, context=what)

    def span(self, name=None, /, cat=None, args=None, **kwargs):
        """A span: one complete ('X') event from its start to its end.

        As a context manager it starts at enter and is written at exit:

            with w.span("prefill", cat="llm", tokens=512) as s:
                ...
                s.set(cached=n)          # more args, known inside

        As a decorator each call of the function is one span (named after
        the function's qualified name when name is omitted):

            @w.span(cat="llm")
            def decode(batch): ...

        On a coroutine function (async def), and with `async with`, a
        span is a request: an async begin ('b') and end ('e') pair from
        the call until the coroutine returns, with an async track (an
        id) of its own, so that many requests in flight on one event
        loop each get their own track, where 'X' events would overlap
        without nesting on the loop's thread.  Every span opened inside
        a request -- `async with`, `with`, a decorated function, in its
        task or in tasks it creates (contextvars carry the request) --
        is written on its request's track, with its id and cat, so that
        it nests under the request in Perfetto; only spans of one
        request that run at once begin a track of their own.  With the
        writer's async_spans="lanes" each of these is instead one 'X'
        event on its request's lane (a synthetic thread, "requests lane
        N", that no other request uses meanwhile), which every viewer
        shows.  Outside any request, plain functions and `with` keep
        'X' on the calling thread.

        As a decorator, call_args records arguments of each call (it is
        a keyword of the decorator, not an event argument): names of the
        function's parameters, each maybe followed by attributes, or a
        function called with the call's arguments returning a dict:

            @w.span("handle", call_args=["req.id", "model"])
            async def handle(req, model="m"): ...     # {"req.id": 7, ...}

            @w.span(call_args=lambda req: {"rid": req.id})
            def parse(req): ...

        If the body raises, the span is still written, and an error in
        writing it does not replace the body's exception.  A Span object
        times one `with` at a time; make a new one per use."""
        if callable(name) and cat is None and args is None and not kwargs:
            return Span(self, None, None, None)(name)   # bare @w.span
        call_args = kwargs.pop("call_args", None)
        return Span(self, name, cat, _merge(args, kwargs) if args else kwargs,
                    call_args)

    def _span_end(self, name, cat, items, t0, t1):
        """The span's 'X' event, for the compiled fast path when it cannot
        write it itself."""
        self._event("span", b"X", b"\0", _HAS_TS, 0, name, cat, t0, t1 - t0,
                    0, items)

    def complete(self, name, ts_ns, dur_ns, /, cat=None, args=None, **kwargs):
        """A complete ('X') event of dur_ns nanoseconds from ts_ns (both on
        the clock of now_ns())."""
        self._event("complete", b"X", b"\0", _HAS_TS, 0, name, cat, ts_ns,
                    dur_ns, 0, _merge(args, kwargs) if args else kwargs)

    def begin(self, name, /, cat=None, args=None, **kwargs):
        """A begin ('B') event now, on the calling thread."""
        self._event("begin", b"B", b"\0", 0, 0, name, cat, 0, 0, 0,
                    _merge(args, kwargs) if args else kwargs)

    def end(self, name=None, /, cat=None, args=None, **kwargs):
        """An end ('E') event now, closing the thread's latest 'B'."""
        self._event("end", b"E", b"\0", 0, 0, name, cat, 0, 0, 0,
                    _merge(args, kwargs) if args else kwargs)

    def instant(self, name, /, cat=None, scope=None, args=None, **kwargs):
        """An instant event now; scope 't' (thread, the default), 'p'
        (process) or 'g' (global)."""
        self._event("instant", b"I", _scope(scope), 0, 0, name, cat, 0, 0, 0,
                    _merge(args, kwargs) if args else kwargs)

    def counter(self, name, /, cat=None, args=None, **series):
        """A counter ('C') event now: each keyword is one series, an int
        (64-bit) or a float; anything else is Error(EEVENT)."""
        self._event("counter", b"C", b"\0", 0, 0, name, cat, 0, 0, 0,
                    _merge(args, series) if args else series)

    def async_begin(self, name, id, /, cat=None, args=None, **kwargs):
        """An async (nestable) begin ('b') now.  Viewers key async events
        by cat and id: give the same cat to its instants and end."""
        self._event("async_begin", b"b", b"\0", _HAS_ID, 0, name, cat, 0, 0,
                    id, _merge(args, kwargs) if args else kwargs)

    def async_instant(self, name, id, /, cat=None, args=None, **kwargs):
        """An async instant ('n') now."""
        self._event("async_instant", b"n", b"\0", _HAS_ID, 0, name, cat, 0,
                    0, id, _merge(args, kwargs) if args else kwargs)

    def async_end(self, name, id, /, cat=None, args=None, **kwargs):
        """An async end ('e') now."""
        self._event("async_end", b"e", b"\0", _HAS_ID, 0, name, cat, 0, 0,
                    id, _merge(args, kwargs) if args else kwargs)

    def flow_start(self, name, id, cat=None):
        """A flow start ('s') now, on the calling thread: an arrow from the
        enclosing slice to the flow's next step."""
        self._event("flow_start", b"s", b"\0", _HAS_ID, 0, name, cat, 0, 0,
                    id, None)

    def flow_step(self, name, id, cat=None):
        """A flow step ('t') now."""
        self._event("flow_step", b"t", b"\0", _HAS_ID, 0, name, cat, 0, 0,
                    id, None)

    def flow_end(self, name, id, cat=None):
        """A flow end ('f') now, bound to the enclosing slice ("bp":"e")."""
        self._event("flow_end", b"f", b"\0", _HAS_ID, _lib.EV_BP_ENCLOSING,
                    name, cat, 0, 0, id, None)

    def mark(self, name, cat=None):
        """A mark now: a global instant ('I', scope 'g'), as tw_mark writes
        it (DevTools does not draw 'R')."""
        self._event("mark", b"I", b"g", 0, 0, name, cat, 0, 0, 0, None)

    def _meta(self, fn, value):
        h = self._h
        if not h:
            h = self._cold()
            if not h:
                return
        rc = getattr(self._c, fn)(h, value)
        if rc:
            raise Error(rc, context=fn)

    def process_name(self, name):
        """Name this process in the viewer (a 'process_name' 'M' event)."""
        self._meta("process_name", _cstr(name))

    def thread_name(self, name=None):
        """Name the calling thread ('thread_name'); by default after its
        Python name, threading.current_thread().name."""
        if name is None:
            name = threading.current_thread().name
        self._meta("thread_name", _cstr(name))

    def process_sort_index(self, index):
        """Where this process sorts among others in the viewer."""
        self._meta("process_sort_index", _i64(index, "index"))

    def thread_sort_index(self, index):
        """Where the calling thread sorts among its process's threads."""
        self._meta("thread_sort_index", _i64(index, "index"))

    def process_labels(self, labels):
        """Labels shown beside the process name ("a,b")."""
        self._meta("process_labels", _cstr(labels, "labels"))

    def emit(self, ph, name=None, /, cat=None, *, ts=None, dur=None, pid=None,
             tid=None, id=None, id2=None, id_scope=None, bind_id=None,
             scope=None, tts=None, tdur=None, cname=None, flow_in=False,
             flow_out=False, bp=None, args=None, **kwargs):
        """Any event (tw_emit): ph is the phase letter ('X', 'B', 'E',
        'I', 'C', 'b', 'n', 'e', 's', 't', 'f', 'M', 'N', 'O', 'D', 'R',
        'c'); the fields left out default as in C (ts now, pid and tid
        this process's and thread's).  Times are ns on the clock of
        now_ns(); id2 "local" or "global" writes the id as id2; bp "e"
        binds a flow to its enclosing slice.  What each phase requires is
        the library's (tw_emit(3)): a missing field is Error(EEVENT)."""
        h = self._h
        if not h:
            h = self._cold()
            if not h:
                return
        if not isinstance(ph, str) or len(ph) != 1 or not ph.isascii():
            raise ValueError("ph must be one letter, not %r" % (ph,))
        has = flags = 0
        fields = {}
        for key, bit, value in (("ts", _lib.HAS_TS, ts),
                                ("tts", _lib.HAS_TTS, tts),
                                ("tdur", _lib.HAS_TDUR, tdur),
                                ("pid", _lib.HAS_PID, pid),
                                ("tid", _lib.HAS_TID, tid),
                                ("id", _lib.HAS_ID, id),
                                ("bind_id", _lib.HAS_BIND_ID, bind_id)):
            if value is not None:
                has |= bit
            fields[key] = 0 if value is None else value
        if id2 is not None:
            if id2 not in ("local", "global"):
                raise ValueError("id2 must be 'local' or 'global', not %r"
                                 % (id2,))
            flags |= (_lib.EV_ID2_LOCAL if id2 == "local"
                      else _lib.EV_ID2_GLOBAL)
        if flow_in:
            flags |= _lib.EV_FLOW_IN
        if flow_out:
            flags |= _lib.EV_FLOW_OUT
        if bp is not None:
            if bp != "e":
                raise ValueError("bp must be 'e' or None, not %r" % (bp,))
            flags |= _lib.EV_BP_ENCLOSING
        ne = _names.get(name) or _intern(name, "name")
        ce = _names.get(cat) or _intern(cat, "cat")
        se = _names.get(id_scope) or _intern(id_scope, "id_scope")
        cne = _names.get(cname) or _intern(cname, "cname")
        items = _merge(args, kwargs) if args else kwargs
        # keep holds what args_addr points to until self._e returns
        args_addr, keep = _pack(items, self._reject_nonfinite) if items \
            else (0, None)
        try:
            ev = _pack_head(ph.encode(), _scope(scope), has, flags, ne[1],
                            ce[1], fields["ts"], 0 if dur is None else dur)
            ev += _pack_tail(fields["tts"], fields["tdur"], fields["pid"],
                             fields["tid"], fields["id"], fields["bind_id"],
                             se[1], cne[1], args_addr, len(items), 0, 0)
        except struct.error as e:
            raise _field_error("emit", e) from None
        rc = self._e(h, ev)
        if rc:
            raise Error(rc, context="emit")


if _speedups is not None:
    # Writer.span is the compiled WriterBase.span, which returns a compiled
    # span for the common case and calls this one for the rest.
    Writer._span_py = Writer.span
    del Writer.span


# Ids of async tracks, one per track: next() of an itertools.count is
# atomic under the GIL, so threads and coroutines never share one.
_async_ids = itertools.count(1)


# ------------------------------------------------- spans inside a request
#
# An async span (`async with`, a decorated coroutine function) opens a
# frame that the spans inside it find through a context variable, so each
# asyncio task (which runs in a copy of the context it was created in)
# sees the request it belongs to.  A span opened while a frame of the
# same writer is current is a frame too (a `with` or a decorated plain
# function inside a request included): it goes on its parent's track, so
# that it nests under its request in the viewer.
#
# A track is where a stack of nested frames is written:
#   async_spans="async" (the default): an async track, one id; every
#     frame on it writes 'b' at its start and 'e' at its end with that
#     id and the cat of the track's first frame (Perfetto's JSON importer
#     keys a nestable async track by cat and id, and nests the slices of
#     one track by their order);
#   async_spans="lanes": a lane, a synthetic thread of the process
#     (tid _LANE_TID_BASE + n, named "requests lane n"); every frame on
#     it is one complete ('X') event written at its end.
# A frame goes on its parent's track when the parent is the innermost
# open frame there; otherwise (a sibling is open: tasks of one request
# run at once) it begins a track of its own: a new id, or the lowest lane
# free at its start.  So the slices of one track nest and never overlap
# partially.  A lane whose frame ends while frames above it are still
# open (a task that outlives the span that created it) hands those,
# not yet written, to another lane free since their start.

_frame_var = contextvars.ContextVar("tracewriter_frame", default=None)
_frames_open = 0                # frames open in the process, all writers
_frames_lock = threading.Lock()

#: The tid of lane n is _LANE_TID_BASE + n: above any Linux thread id
#: (pid_max is at most 2**22), below 2**31 for readers that take tids as
#: 32-bit ints.
_LANE_TID_BASE = 0x7FFF0000
ASYNC_SPANS = ("async", "lanes")


class _Track:
    __slots__ = ("id", "cat", "lane", "stack", "last_end")

    def __init__(self, id, cat, lane):
        self.id = id            # the async id ("async")
        self.cat = cat          # the cat of its 'b'/'e' ("async")
        self.lane = lane        # the lane number ("lanes")
        self.stack = []         # its open frames, innermost last
        self.last_end = 0       # the end of its latest complete event


class _Frame:
    __slots__ = ("w", "name", "cat", "args", "t0", "track", "parent",
                 "token")


def _free_lane(w, t0):
    """The lowest lane of w with no open frame and nothing written after
    t0 (a new one if none); under _frames_lock."""
    lanes = w._lanes
    for track in lanes:
        if not track.stack and track.last_end <= t0:
            return track
    track = _Track(0, None, len(lanes) + 1)
    lanes.append(track)
    w.emit("M", "thread_name", tid=_LANE_TID_BASE + track.lane,
           name="requests lane %d" % track.lane)
    return track


def _set_frames_open(delta):
    global _frames_open
    _frames_open += delta
    if _speedups is not None and _frames_open == (1 if delta > 0 else 0):
        _speedups.nesting(_frames_open > 0)


def _frame_begin(w, name, cat, args, root):
    """Open a frame for a span starting now: always when root (an async
    span), else only inside a frame of w (None if not).  Writes its 'b'
    ("async")."""
    parent = _frame_var.get()
    if parent is not None and parent.w is not w:
        parent = None
    if parent is None and not root:
        return None
    f = _Frame()
    f.w, f.name, f.cat, f.args, f.parent = w, name, cat, args, parent
    lanes = w.async_spans == "lanes"
    with _frames_lock:
        f.t0 = t0 = now_ns()
        if parent is not None and parent.track.stack[-1:] == [parent]:
            track = parent.track
        elif lanes:
            track = _free_lane(w, t0)
        else:
            track = _Track(next(_async_ids), cat, 0)
        track.stack.append(f)
        f.track = track
        _set_frames_open(1)
    if not lanes:
        try:
            w._event("span", b"b", b"\0", _HAS_ID, 0, name, track.cat, 0, 0,
                     track.id, args)
        except BaseException:
            _frame_drop(f, 0)
            raise
    f.token = _frame_var.set(f)
    return f


def _frame_drop(f, t1):
    """Take frame f off its track; returns the track it is written on."""
    with _frames_lock:
        track = f.track
        stack = track.stack
        i = len(stack) - 1
        while i >= 0 and stack[i] is not f:
            i -= 1
        if i < 0:
            return track
        above = stack[i + 1:]
        del stack[i:]
        track.last_end = max(track.last_end, t1)
        if above and f.w.async_spans == "lanes":
            # Frames that outlive f (not yet written): to a lane free
            # since the first of them began.
            other = _free_lane(f.w, above[0].t0)
            for g in above:
                g.track = other
            other.stack.extend(above)
        elif above:
            stack.extend(above)
        _set_frames_open(-1)
    return track


def _frame_end(f, args, failed=False):
    """Close frame f now and write it: its 'e', or its 'X' on its lane.
    args are the span's arguments now (set() may have changed them).
    An error in writing it is raised unless failed (the body raised)."""
    t1 = now_ns()
    track = _frame_drop(f, t1)
    try:
        _frame_var.reset(f.token)
    except (ValueError, RuntimeError, AttributeError):
        pass                    # ended in another context than its own
    w = f.w
    try:
        if w.async_spans == "lanes":
            w.emit("X", f.name, f.cat, ts=f.t0, dur=t1 - f.t0,
                   tid=_LANE_TID_BASE + track.lane, args=args or None)
        else:
            w._event("span", b"e", b"\0", _HAS_ID, 0, f.name, track.cat, 0,
                     0, track.id, args if args is not f.args else None)
    except (Error, TypeError, ValueError):
        if not failed:
            raise


def _nest_begin(w, name, cat, args):
    """For the compiled spans while a frame is open anywhere: the frame
    of a span starting now inside a frame of w, else None."""
    return _frame_begin(w, name, cat, args, False)




class Span:
    """A span of Writer.span(): a context manager and a decorator.

    Synchronous (`with`, a plain function), outside any request: one
    complete ('X') event on the calling thread.  Asynchronous (`async
    with`, an `async def`): a request, and any span opened inside it (in
    its task or a task it creates) nests under it: with the writer's
    async_spans="async" (the default) an async begin ('b') at the start
    and an async end ('e') at the end, with the id and cat of its
    request's track; with async_spans="lanes" one complete ('X') event
    on the request's lane."""

    __slots__ = ("_w", "_name", "_cat", "_args", "_t0", "_frame",
                 "_call_args")

    def __init__(self, writer, name, cat, args, call_args=None):
        self._w = writer
        self._name = name
        self._cat = cat
        self._args = args
        self._t0 = None
        self._frame = None
        self._call_args = call_args

    def set(self, **kwargs):
        """Add or replace arguments of the span before it is written (of
        an async span: written on its end event)."""
        args = dict(self._args) if self._args else {}
        args.update(kwargs)
        self._args = args

    @property
    def id(self):
        """The async id of the span's track while it is open as a request
        or inside one, with async_spans="async"; else None."""
        f = self._frame
        if f is None or self._w.async_spans != "async":
            return None
        return f.track.id

    def __enter__(self):
        if self._name is None:
            raise TypeError("a span used with 'with' needs a name")
        if self._frame is not None:
            raise RuntimeError("this span is already open: make one per use")
        if _frames_open and self._w._h:
            self._frame = _frame_begin(self._w, self._name, self._cat,
                                       self._args, False)
        self._t0 = now_ns()
        return self

    def __exit__(self, exc_type, exc, tb):
        t1 = now_ns()
        t0 = self._t0
        if t0 is None:
            raise RuntimeError("span exited without being entered")
        self._t0 = None
        f = self._frame
        if f is not None:
            self._frame = None
            _frame_end(f, self._args, exc is not None)
            return
        try:
            self._w._event("span", b"X", b"\0", _HAS_TS, 0, self._name,
                           self._cat, t0, t1 - t0, 0, self._args)
        except (Error, TypeError, ValueError):
            if exc is None:
                raise
            # The body's exception goes on, not ours.

    async def __aenter__(self):
        if self._name is None:
            raise TypeError("a span used with 'async with' needs a name")
        if self._frame is not None:
            raise RuntimeError("this span is already open: make one per use")
        if self._w._h or self._w._cold():
            self._frame = _frame_begin(self._w, self._name, self._cat,
                                       self._args, True)
        return self

    async def __aexit__(self, exc_type, exc, tb):
        f = self._frame
        if f is None:
            if self._w._h:
                raise RuntimeError("span exited without being entered")
            return
        self._frame = None
        _frame_end(f, self._args, exc is not None)

    def __call__(self, fn):
        w, cat, items = self._w, self._cat, self._args
        name = self._name
        if name is None:
            name = (getattr(fn, "__qualname__", None) or
                    getattr(fn, "__name__", None) or repr(fn))
        record = _call_recorder(fn, self._call_args)
        # The arguments are the same at every call: packed once, here (so
        # a bad one fails now), and the array only read afterwards.
        packed = None
        if items and w._h:
            addr, keep = _pack(items, w._reject_nonfinite)
            packed = (addr, len(items), keep)
        event = w._event

        def call_items(a, k):
            if record is None:
                return items
            return _merge(items, record(a, k)) if items else record(a, k)

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_wrapper(*a, **k):
                if not (w._h or w._cold()):
                    return await fn(*a, **k)
                f = _frame_begin(w, name, cat, call_items(a, k), True)
                try:
                    result = await fn(*a, **k)
                except BaseException:
                    _frame_end(f, f.args, True)
                    raise
                _frame_end(f, f.args)
                return result
            return async_wrapper

        if _speedups is not None and record is None:
            # The compiled wrapper: it converts the arguments once and
            # calls tw_complete itself (or this module when it cannot).
            return functools.update_wrapper(
                _speedups.Decorated(w, name, cat, items or None, fn), fn)

        def end(t0, failed, args):
            t1 = now_ns()
            try:
                event("span", b"X", b"\0", _HAS_TS, 0, name, cat, t0,
                      t1 - t0, 0, args, None if args else packed)
            except (Error, TypeError, ValueError):
                if not failed:
                    raise

        @functools.wraps(fn)
        def wrapper(*a, **k):
            args = call_items(a, k) if record is not None else None
            f = None
            if _frames_open and w._h:
                f = _frame_begin(w, name, cat, args or items, False)
            t0 = now_ns()
            try:
                result = fn(*a, **k)
            except BaseException:
                if f is not None:
                    _frame_end(f, f.args, True)
                else:
                    end(t0, True, args)
                raise
            if f is not None:
                _frame_end(f, f.args)
            else:
                end(t0, False, args)
            return result
        return wrapper


def _nest_end(f, args, failed):
    """For the compiled spans: close frame f (of _nest_begin)."""
    _frame_end(f, args, failed)


def _call_recorder(fn, call_args):
    """The function giving a call's recorded arguments, (a, k) -> dict,
    for the decorator's call_args: None (records nothing), a callable
    (called with the call's arguments, returns a dict), or names of fn's
    parameters, each maybe followed by attributes ("req.id": the id
    attribute of the parameter req), recorded under that name."""
    if call_args is None:
        return None
    if callable(call_args):
        def by_function(a, k):
            d = call_args(*a, **k)
            if not isinstance(d, dict):
                raise TypeError("call_args function returned a %s, not a "
                                "dict" % type(d).__name__)
            return d
        return by_function
    if isinstance(call_args, str):
        call_args = (call_args,)
    sig = inspect.signature(fn)
    paths = []
    for spec in call_args:
        if not isinstance(spec, str):
            raise TypeError("call_args: a name must be a str, not %s"
                            % type(spec).__name__)
        head, *attrs = spec.split(".")
        if head not in sig.parameters:
            raise TypeError("call_args: %s has no parameter %r"
                            % (getattr(fn, "__qualname__", fn), head))
        paths.append((spec, head, attrs))

    def by_names(a, k):
        bound = sig.bind(*a, **k)
        bound.apply_defaults()
        out = {}
        for spec, head, attrs in paths:
            v = bound.arguments[head]
            for attr in attrs:
                v = getattr(v, attr)
            out[spec] = v
        return out
    return by_names


# ------------------------------------------------------ the global writer

_DISABLED = Writer._wrap(0, None, None)
_global_lock = threading.Lock()
_global = None          # the Writer of tw_global(), once enabled
_forked = False         # in a child after fork, _global not yet reopened


def _after_fork_in_child():
    # The parent's writer is not the child's: the next use of _global asks
    # tw_global() again, which opens the child's own file (with "%p") or
    # turns tracing off; its old handle is not used meanwhile (tw_global
    # frees it).  The lock may have been held by a thread of the parent.
    global _forked, _global_lock
    _global_lock = threading.Lock()
    if _global is not None:
        _global._h = 0
        _forked = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def _global_after_fork():
    """The handle of the global writer in a child after fork, once
    tw_global() has reopened it (0 if tracing is off in the child)."""
    global _forked
    with _global_lock:
        if _forked:
            _forked = False
            lib = _lib.get()
            h = lib.global_()
            _global._h = h or 0
            if not h:
                message = c_char_p()
                rc = lib.global_status(byref(message))
                if rc:
                    raise Error(rc, (message.value or b"").decode(
                        errors="replace") or None, context="TRACEWRITER_OUT")
        return _global._h


def global_writer():
    """The process-wide writer of the C library (tw_global), configured
    from the environment: TRACEWRITER_OUT (the path; "%p" the pid, "%t"
    the start time) and TRACEWRITER_OPTIONS (an options string).  C code
    in the same process that calls tw_global() shares it.  The same Writer
    object is returned at every call.

    When TRACEWRITER_OUT is unset or empty, tracing is off: the result is
    a disabled writer on which every event method does nothing, so
    instrumented code needs no test (and the library need not even be
    installed).  The writer is committed at exit and never closed:
    close() commits it.  In a child after fork, the writer (the same
    object, kept from before the fork or not) writes to the child's own
    file when TRACEWRITER_OUT has "%p", and does nothing otherwise.

    Raises Error with the library's message when TRACEWRITER_OUT is set
    but the writer could not be opened (bad options, bad path), and
    LibraryNotFoundError when tracing is asked for and the library is
    missing."""
    global _global
    if _forked:
        _global_after_fork()
        return _global if _global._h else _DISABLED
    try:
        lib = _lib.get()
    except LibraryNotFoundError:
        if not os.environ.get("TRACEWRITER_OUT"):
            return _DISABLED
        raise
    h = lib.global_()
    if not h:
        message = c_char_p()
        rc = lib.global_status(byref(message))
        if rc:
            raise Error(rc, (message.value or b"").decode(errors="replace")
                        or None, context="TRACEWRITER_OUT")
        return _DISABLED
    with _global_lock:
        if _global is None:
            o = _lib.Options()
            lib.options_init_sized(byref(o), sizeof(o))
            lib.options_parse(byref(o), os.environ.get(
                "TRACEWRITER_OPTIONS", "").encode(), None, 0)
            _global = Writer._wrap(h, os.environ.get("TRACEWRITER_OUT"), o,
                                   is_global=True)
        return _global
