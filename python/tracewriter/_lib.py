"""Finding libtracewriter, and the ctypes mirrors of its structs.

Private to the package: the public names are in tracewriter/__init__.py.
Every struct here mirrors one of include/tracewriter.h field for field, in
the same order with the same C types, so ctypes lays it out as the C
compiler does; tests/python_layout.c prints the C offsets and the tests
compare them with these.
"""

import ctypes
import ctypes.util
import os
import struct
import sys
import sysconfig

# ------------------------------------------------------------ the structs

c_int64 = ctypes.c_int64
c_uint64 = ctypes.c_uint64
c_size_t = ctypes.c_size_t
c_char_p = ctypes.c_char_p


class Options(ctypes.Structure):
    """struct tw_options"""
    _fields_ = [
        ("struct_size", c_size_t),
        ("buffer_size", c_size_t),
        ("format", ctypes.c_int),
        ("sink", ctypes.c_int),
        ("gzip_level", ctypes.c_int),
        ("flags", ctypes.c_uint),
        ("max_string", c_size_t),
        ("max_event", c_size_t),
        ("process_name", c_char_p),
        ("file_mode", ctypes.c_int),
        ("commit", ctypes.c_int),
        ("buffer_count", ctypes.c_uint),
        ("mmap_chunk", c_size_t),
        ("flush_interval_ns", c_uint64),
        ("on_full", ctypes.c_int),
        ("crash", ctypes.c_int),
        ("rotate_size", c_uint64),
        ("rotate_interval_ns", c_uint64),
        ("rotate_keep", ctypes.c_uint),
        ("timebase", ctypes.c_int),
        ("rank", ctypes.c_int),
        ("gzip_threads", ctypes.c_uint),
    ]


class ArgValue(ctypes.Union):
    """the union v of struct tw_arg"""
    _fields_ = [
        ("i", c_int64),
        ("u", c_uint64),
        ("d", ctypes.c_double),
        ("b", ctypes.c_int),
        ("s", c_char_p),
    ]


class Arg(ctypes.Structure):
    """struct tw_arg.  The union is anonymous here (a.i rather than a.v.i),
    which saves a proxy object per assignment on the hot path; name is the
    address of bytes that the caller keeps alive (from the name cache)."""
    _anonymous_ = ("v",)
    _fields_ = [
        ("name", ctypes.c_void_p),
        ("type", ctypes.c_int),
        ("len", c_size_t),
        ("v", ArgValue),
    ]


class Event(ctypes.Structure):
    """struct tw_event"""
    _fields_ = [
        ("ph", ctypes.c_char),
        ("instant_scope", ctypes.c_char),
        ("has", ctypes.c_uint),
        ("flags", ctypes.c_uint),
        ("name", c_char_p),
        ("cat", c_char_p),
        ("ts", c_uint64),
        ("dur", c_uint64),
        ("tts", c_uint64),
        ("tdur", c_uint64),
        ("pid", c_int64),
        ("tid", c_int64),
        ("id", c_uint64),
        ("bind_id", c_uint64),
        ("id_scope", c_char_p),
        ("cname", c_char_p),
        ("args", ctypes.POINTER(Arg)),
        ("nargs", c_size_t),
        ("reserved", ctypes.c_void_p * 2),
    ]


class Stats(ctypes.Structure):
    """struct tw_stats, as this binding knows it (the library fills the
    fields it has and zeros the rest, so the size passed is ours)."""
    _fields_ = [
        ("events", c_uint64),
        ("bytes", c_uint64),
        ("commits", c_uint64),
        ("rejected", c_uint64),
        ("strings_truncated", c_uint64),
        ("utf8_replaced", c_uint64),
        ("dropped", c_uint64),
        ("error", ctypes.c_int),
        ("output_bytes", c_uint64),
        ("rotations", c_uint64),
    ]


STRUCTS = {"tw_options": Options, "tw_arg": Arg, "tw_event": Event,
           "tw_stats": Stats}


def struct_of(cls, first=None, stop=None):
    """A struct.Struct with the layout of the fields of a ctypes Structure
    from the field named first (default: the first) up to the one named
    stop (default: the end), gaps and the padding up to stop written as
    pad bytes, so that packed pieces concatenate into the whole struct.
    Packing a tw_event in one call is much cheaper than setting the fields
    of a ctypes object one by one.  Scalars, pointers and arrays of them
    only."""
    names = [f[0] for f in cls._fields_]
    lo = names.index(first) if first else 0
    hi = names.index(stop) if stop else len(names)
    base = getattr(cls, names[lo]).offset
    end = getattr(cls, stop).offset if stop else ctypes.sizeof(cls)
    fmt = "@"
    pos = base
    for name, ctype in cls._fields_[lo:hi]:
        field = getattr(cls, name)
        count = ""
        if issubclass(ctype, ctypes.Array):
            count = str(ctype._length_)
            ctype = ctype._type_
        if issubclass(ctype, (ctypes.Structure, ctypes.Union)):
            raise TypeError("struct_of: %s.%s is not a scalar"
                            % (cls.__name__, name))
        code = getattr(ctype, "_type_", None)
        if not isinstance(code, str) or code == "z":
            code = "P"                      # char * and other pointers
        if field.offset > pos:
            fmt += "%dx" % (field.offset - pos)
        fmt += count + code
        pos = field.offset + field.size
    if end > pos:
        fmt += "%dx" % (end - pos)
    packer = struct.Struct(fmt)
    if packer.size != end - base:
        raise ImportError("tracewriter: struct %r of %s is %d bytes, ctypes "
                          "says %d" % (fmt, cls.__name__, packer.size,
                                       end - base))
    return packer


# enum tw_arg_type
ARG_INT, ARG_UINT, ARG_DOUBLE, ARG_BOOL, ARG_STRING, ARG_NULL, ARG_JSON = \
    range(1, 8)

# tw_event.has and tw_event.flags bits
HAS_TS, HAS_PID, HAS_TID, HAS_TTS, HAS_TDUR, HAS_ID, HAS_BIND_ID = \
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40
EV_ID2_LOCAL, EV_ID2_GLOBAL, EV_FLOW_IN, EV_FLOW_OUT, EV_BP_ENCLOSING = \
    0x01, 0x02, 0x04, 0x08, 0x10

OPT_REJECT_NONFINITE = 0x02

# ---------------------------------------------------- finding the library


class LibraryNotFoundError(OSError):
    """libtracewriter could not be loaded; the message lists every place
    that was tried, and why each failed."""


_SONAMES = ("libtracewriter.so.0", "libtracewriter.so")


def _lib_dirs():
    """The usual directories of an installed library, most specific
    first."""
    dirs = [os.path.join(sys.prefix, "lib")]
    multiarch = sysconfig.get_config_var("MULTIARCH")
    for prefix in ("/usr/local", "/usr"):
        if multiarch:
            dirs.append(os.path.join(prefix, "lib", multiarch))
        dirs.append(os.path.join(prefix, "lib64"))
        dirs.append(os.path.join(prefix, "lib"))
    seen = set()
    return [d for d in dirs if not (d in seen or seen.add(d))]


#: The library that pip install, a wheel and make install-python put in the
#: package, beside this file (tracewriter_build.py builds it).
PACKAGE_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "libtracewriter.so")


def candidates():
    """The places to load libtracewriter from, in order, as (where, path)
    pairs: TRACEWRITER_LIB alone if set; else the package's own library
    (an installed package holds one); else, for the package of a source
    tree (python/tracewriter, no library in it), the build tree
    ($top_builddir during make check, or the source tree itself), then
    the install prefix."""
    env = os.environ.get("TRACEWRITER_LIB")
    if env:
        return [("TRACEWRITER_LIB", env)]
    found = [("package", PACKAGE_LIB)]
    top_builddir = os.environ.get("top_builddir")
    if top_builddir:
        found.append(("$top_builddir", os.path.join(
            top_builddir, ".libs", "libtracewriter.so")))
    # The source tree's package: python/tracewriter, tracewriter_build.py
    # beside it (an installed package has neither).
    python_dir = os.path.dirname(os.path.dirname(PACKAGE_LIB))
    if (os.path.basename(python_dir) == "python" and
            os.path.exists(os.path.join(python_dir, "tracewriter_build.py"))):
        found.append(("build tree", os.path.join(
            os.path.dirname(python_dir), ".libs", "libtracewriter.so")))
    for d in _lib_dirs():
        for name in _SONAMES:
            found.append(("lib dir", os.path.join(d, name)))
    by_name = ctypes.util.find_library("tracewriter")
    if by_name:
        found.append(("find_library", by_name))
    return found


def _load():
    tried = []
    for where, path in candidates():
        # A bare soname (from find_library) is searched by the dynamic
        # linker; a path that is not there is not worth a dlopen.
        if os.sep in path and not os.path.exists(path):
            tried.append("  %s (%s): no such file" % (path, where))
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("  %s (%s): %s" % (path, where, e))
            continue
        if not hasattr(lib, "tw_get_stats_sized"):
            tried.append("  %s (%s): too old (no tw_get_stats_sized, "
                         "the 1.0 API)" % (path, where))
            continue
        return lib, path
    if not os.environ.get("TRACEWRITER_LIB"):
        tried.append("  find_library('tracewriter'): not found")
    raise LibraryNotFoundError(
        "cannot load libtracewriter; tried:\n" + "\n".join(tried) +
        "\nReinstall the package (pip install ./python builds the library "
        "into it), or set TRACEWRITER_LIB to the library's path.")


def _prototype(lib, name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = argtypes
    return f


class Lib:
    """The loaded library with every function's prototype declared.
    ctypes.CDLL releases the GIL around each call, so several Python
    threads write at once."""

    def __init__(self):
        self.dll, self.path = _load()
        p = lambda *a: _prototype(self.dll, *a)  # noqa: E731
        vp, cp, sz, i = ctypes.c_void_p, c_char_p, c_size_t, ctypes.c_int
        u64, i64 = c_uint64, c_int64
        args = ctypes.POINTER(Arg)
        self.version = p("tw_version", cp)
        self.strerror = p("tw_strerror", cp, i)
        self.err_name = p("tw_err_name", cp, i)
        self.options_init_sized = p("tw_options_init_sized", i,
                                    ctypes.POINTER(Options), sz)
        self.options_parse = p("tw_options_parse", i,
                               ctypes.POINTER(Options), cp, cp, sz)
        self.open = p("tw_open", vp, cp, ctypes.POINTER(Options),
                      ctypes.POINTER(i))
        self.open_fd = p("tw_open_fd", vp, i, ctypes.POINTER(Options),
                         ctypes.POINTER(i))
        self.flush = p("tw_flush", i, vp)
        self.close = p("tw_close", i, vp)
        self.errcode = p("tw_errcode", i, vp)
        self.get_stats_sized = p("tw_get_stats_sized", i, vp,
                                 ctypes.POINTER(Stats), sz)
        # The event is passed as bytes packed by struct_of(Event).
        self.emit = p("tw_emit", i, vp, cp)
        self.now_ns = p("tw_now_ns", u64)
        self.complete = p("tw_complete", i, vp, cp, cp, u64, u64, args, sz)
        self.begin = p("tw_begin", i, vp, cp, cp, args, sz)
        self.end = p("tw_end", i, vp, cp, cp, args, sz)
        self.instant = p("tw_instant", i, vp, cp, cp, ctypes.c_char, args,
                         sz)
        self.counter = p("tw_counter", i, vp, cp, cp, args, sz)
        self.async_begin = p("tw_async_begin", i, vp, cp, cp, u64, args, sz)
        self.async_instant = p("tw_async_instant", i, vp, cp, cp, u64, args,
                               sz)
        self.async_end = p("tw_async_end", i, vp, cp, cp, u64, args, sz)
        self.flow_start = p("tw_flow_start", i, vp, cp, cp, u64)
        self.flow_step = p("tw_flow_step", i, vp, cp, cp, u64)
        self.flow_end = p("tw_flow_end", i, vp, cp, cp, u64)
        self.process_name = p("tw_process_name", i, vp, cp)
        self.thread_name = p("tw_thread_name", i, vp, cp)
        self.process_sort_index = p("tw_process_sort_index", i, vp, i64)
        self.thread_sort_index = p("tw_thread_sort_index", i, vp, i64)
        self.process_labels = p("tw_process_labels", i, vp, cp)
        self.mark = p("tw_mark", i, vp, cp, cp)
        self.global_ = p("tw_global", vp)
        self.global_status = p("tw_global_status", i,
                               ctypes.POINTER(ctypes.c_char_p))


_lib = None


def get():
    """The library, loaded at the first call (so that importing the
    package never fails: a program can be instrumented with
    global_writer() and run where the library is missing while tracing is
    off).  Raises LibraryNotFoundError."""
    global _lib
    if _lib is None:
        _lib = Lib()
    return _lib
