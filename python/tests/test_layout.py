"""The ctypes mirrors of tw_options, tw_arg, tw_event and tw_stats against
the C compiler's layout, and the library's own checks of their sizes."""

import ctypes
import unittest

from support import built, run_tool, tracewriter
from tracewriter import _lib

# Structs that may grow at their end in a later library (the binding passes
# the size it knows): ours must be a prefix of the C one.
GROWABLE = {"tw_options", "tw_stats"}


def c_layout():
    """{struct: size} and {"struct.field": (offset, size)} as
    tests/python_layout prints them."""
    program = built("tests/python_layout")
    if not program:
        raise unittest.SkipTest("tests/python_layout is not built")
    r = run_tool([program])
    if r.returncode != 0:
        raise AssertionError("%s: %s" % (program, r.stderr))
    out = r.stdout
    sizes, fields = {}, {}
    for line in out.splitlines():
        words = line.split()
        if len(words) == 2:
            sizes[words[0]] = int(words[1])
        else:
            fields[words[0]] = (int(words[1]), int(words[2]))
    return sizes, fields


def py_field(cls, path):
    """(offset, size) of a field of a ctypes struct; "v.i" goes into the
    union v."""
    offset = 0
    for part in path.split("."):
        descr = getattr(cls, part)
        offset += descr.offset
        cls = dict(cls._fields_)[part]
    return offset, ctypes.sizeof(cls)


class TestLayout(unittest.TestCase):

    def test_every_field_at_the_c_offset(self):
        sizes, fields = c_layout()
        self.assertEqual(set(sizes), set(_lib.STRUCTS))
        for key, (offset, size) in fields.items():
            struct, path = key.split(".", 1)
            cls = _lib.STRUCTS[struct]
            with self.subTest(field=key):
                self.assertEqual(py_field(cls, path), (offset, size))
        for struct, cls in _lib.STRUCTS.items():
            with self.subTest(struct=struct):
                top = [f for f in fields if f.startswith(struct + ".")
                       and f.count(".") == 1]
                self.assertEqual(len(cls._fields_), len(top),
                                 "fields of the mirror")
                if struct in GROWABLE:
                    self.assertLessEqual(ctypes.sizeof(cls), sizes[struct])
                else:
                    self.assertEqual(ctypes.sizeof(cls), sizes[struct])

    def test_packed_event_is_the_struct(self):
        # The two packers of tw_event concatenate into the whole struct.
        head = _lib.struct_of(_lib.Event, None, "tts")
        tail = _lib.struct_of(_lib.Event, "tts", None)
        self.assertEqual(head.size, _lib.Event.tts.offset)
        self.assertEqual(head.size + tail.size, ctypes.sizeof(_lib.Event))
        ev = _lib.Event()
        ev.ph, ev.instant_scope, ev.has, ev.flags = b"X", b"g", 5, 6
        ev.ts, ev.dur, ev.tts, ev.tdur = 7, 8, 9, 10
        ev.pid, ev.tid, ev.id, ev.bind_id = -11, 12, 13, 14
        ev.nargs = 15
        packed = head.pack(b"X", b"g", 5, 6, 0, 0, 7, 8) + tail.pack(
            9, 10, -11, 12, 13, 14, 0, 0, 0, 15, 0, 0)
        self.assertEqual(packed, bytes(ev))

    def test_options_size_accepted(self):
        lib = _lib.get()
        o = _lib.Options()
        self.assertEqual(lib.options_init_sized(ctypes.byref(o),
                                                ctypes.sizeof(o)), 0)
        # The library fills min(its size, ours): equal means the same
        # struct (a newer, larger library struct would say ours).
        self.assertEqual(o.struct_size, ctypes.sizeof(o))
        self.assertEqual(o.buffer_size, 64 * 1024)
        self.assertEqual(o.max_event, 1024 * 1024)
        self.assertEqual(o.buffer_count, 4)
        self.assertEqual(o.mmap_chunk, 1024 * 1024)
        self.assertEqual(o.gzip_level, 1)
        self.assertEqual(o.file_mode, 0o644)
        # Too small is refused.
        self.assertNotEqual(lib.options_init_sized(ctypes.byref(o), 8), 0)

    def test_stats_size_accepted(self):
        lib = _lib.get()
        s = _lib.Stats()
        self.assertEqual(lib.get_stats_sized(None, ctypes.byref(s),
                                             ctypes.sizeof(s)), 0)
        self.assertEqual(lib.get_stats_sized(None, ctypes.byref(s), 8),
                         tracewriter.EVERSION)

    def test_error_codes_match_the_header(self):
        for name in tracewriter.__all__:
            if name.startswith("E") and name.isupper():
                with self.subTest(name=name):
                    code = getattr(tracewriter, name)
                    self.assertEqual(tracewriter.err_name(code), "TW_" + name)
                    self.assertNotEqual(tracewriter.strerror(code),
                                        "unknown error")


if __name__ == "__main__":
    unittest.main()
