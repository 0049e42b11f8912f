#!/usr/bin/env python3
"""make_corpus.py -- write the seed corpora of tests/fuzz (run from anywhere).

    python3 tests/fuzz/make_corpus.py

Rewrites tests/fuzz/corpus/{format,options,json,scan,commands}/ with small, named seeds
(the inputs kept as found, named in KEPT, stay as they are).
The format seeds follow the input layout described at the top of
fuzz_format.c; keep the two in step.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
PHASES = "XBEIiCbnestfMNODRc"

HAS_TS, HAS_PID, HAS_TID, HAS_TTS, HAS_TDUR = 0x1, 0x2, 0x4, 0x8, 0x10
HAS_ID, HAS_ID2_LOCAL, HAS_ID2_GLOBAL, HAS_BIND_ID = 0x20, 0x40, 0x80, 0x100
FLOW_IN, FLOW_OUT, BP_ENCLOSING = 0x200, 0x400, 0x800


def s(b):
    """A string: None is NULL, else a length then the bytes."""
    if b is None:
        return b"\xff"
    if isinstance(b, str):
        b = b.encode()
    if len(b) < 0xfe:
        return bytes([len(b)]) + b
    return b"\xfe" + struct.pack("<H", len(b)) + b


def u64(v):
    return b"\x08" + struct.pack("<Q", v & (2**64 - 1))


def dbl_bits(bits):
    return b"\x01" + struct.pack("<Q", bits)


def dbl(v):
    return b"\x01" + struct.pack("<d", v)


def arg_int(name, v):
    return s(name) + b"\x00" + u64(v)


def arg_uint(name, v):
    return s(name) + b"\x01" + u64(v)


def arg_double(name, enc):
    return s(name) + b"\x02" + enc


def arg_bool(name, v):
    return s(name) + (b"\x11" if v else b"\x03")


def arg_str(name, v, nul=False):
    return s(name) + (b"\x0b" if nul else b"\x04") + s(v)


def arg_null(name):
    return s(name) + b"\x05"


def arg_json(name, v, nul=False):
    return s(name) + (b"\x0d" if nul else b"\x06") + s(v)


def event(ph, name, has=0, scope=0, cat=None, id_scope=None, cname=None,
          ts=0, dur=0, tts=0, tdur=0, pid=0, tid=0, id_=0, bind_id=0,
          args=None, nsel=None):
    out = bytes([PHASES.index(ph)]) if ph in PHASES else b"\xf0" + ph.encode()
    out += bytes([scope])
    out += struct.pack("<H", has)
    mask = (cat is not None) | (id_scope is not None) << 1 | (cname is not None) << 2
    out += bytes([mask]) + s(name)
    if has & HAS_TS:
        out += u64(ts)
    if ph == "X":
        out += u64(dur)
    if has & HAS_TTS:
        out += u64(tts)
    if has & HAS_TDUR:
        out += u64(tdur)
    if has & HAS_PID:
        out += u64(pid)
    if has & HAS_TID:
        out += u64(tid)
    if has & (HAS_ID | HAS_ID2_LOCAL | HAS_ID2_GLOBAL):
        out += u64(id_)
    if has & HAS_BIND_ID:
        out += u64(bind_id)
    for f in (cat, id_scope, cname):
        if f is not None:
            out += s(f)
    args = args or []
    if nsel is None:
        out += bytes([len(args)])
    else:
        out += bytes([nsel])
        if nsel >= 0xfd:
            out += bytes([len(args) - 1])
    for a in args:
        out += a
    return out


def header(flags=0, max_string=3, max_event=3, obj=False, buf=3, mmap=False,
           pname=None, nevents=1, flush=False):
    b0 = flags | max_string << 3 | max_event << 5 | (0x80 if obj else 0)
    b1 = buf | (4 if mmap else 0) | (8 if pname is not None else 0)
    b1 |= 0x80 if flush else 0
    b1 |= (nevents - 1) << 4
    out = bytes([b0, b1])
    if pname is not None:
        out += s(pname)
    return out


def fmt(*events, **kw):
    return header(nevents=len(events), **kw) + b"".join(events)


NAN = 0x7ff8000000000000
INF = 0x7ff0000000000000
NINF = 0xfff0000000000000

FORMAT = {
    "complete": fmt(event("X", "rms_norm", HAS_TS, cat="gpu", ts=1234567891,
                          dur=1000, args=[arg_int("n", -42),
                                          arg_str("s", "hi \"there\"\n")])),
    "counter": fmt(event("C", "mem", HAS_TS | HAS_PID | HAS_TID, ts=5,
                         pid=-1, tid=2**63 - 1,
                         args=[arg_double("a", dbl(0.1)),
                               arg_double("nan", dbl_bits(NAN)),
                               arg_double("inf", dbl_bits(NINF)),
                               arg_uint("u", 2**64 - 1)])),
    "async": fmt(event("b", "req", HAS_ID2_LOCAL, cat="net", id_=0xdeadbeef,
                       id_scope="scope", cname="good"),
                 event("e", "req", HAS_ID, cat="net", id_=0),
                 event("n", "mid", HAS_ID2_GLOBAL, id_=2**64 - 1)),
    "flow": fmt(event("s", "f", HAS_ID | HAS_BIND_ID | FLOW_OUT, id_=7,
                      bind_id=9),
                event("f", "f", HAS_ID | BP_ENCLOSING | FLOW_IN, id_=7)),
    "metadata": fmt(event("M", "thread_name", args=[arg_str("name", "main")]),
                    event("M", "thread_sort_index", HAS_TS, ts=3,
                          args=[arg_int("sort_index", 2)])),
    "instants": fmt(event("i", "g", scope=1), event("I", "p", scope=2),
                    event("i", "bad scope", scope=0x3f),
                    event("R", "mark"), event("c", "clock_sync",
                                              args=[arg_int("sync_id", 1)]),
                    event("E", None), event("q", "unknown phase")),
    "utf8_replace": fmt(event("X", b"bad \xc3\x28 \xed\xa0\x80 \xf4\x90 \xff end",
                              cat=b"\xe2\x82", args=[
                                  arg_str(b"k\x01\x7f", b"\x00nul\x00\xe2\x82\xac", ),
                                  arg_bool("t", True), arg_null("z")])),
    "utf8_reject": fmt(event("B", b"bad \xc3\x28"), event("B", "good \xe2\x82\xac"),
                       flags=1),
    "long_cut": fmt(event("X", "a" * 62 + "\u20ac\u20ac",
                          args=[arg_str("v", b"b" * 63 + b"\xf0\x9f\x98\x80",
                                        nul=True)]),
                    max_string=0),
    "long_reject": fmt(event("X", "a" * 70), event("X", "short"),
                       flags=4, max_string=1),
    "nonfinite": fmt(event("C", "c", args=[arg_double("x", dbl_bits(INF))]),
                     event("C", "c", args=[arg_double("x", dbl(1e300))]),
                     flags=2),
    "json_args": fmt(event("X", "j", args=[
        arg_json("ok", '{"a":[1,-2.5e3,true,null,"\\u00e9\\ud83d\\ude00"]}'),
        arg_json("ws", " \n[ ]\r\n", nul=True)]),
        event("X", "j", args=[arg_json("bad", "[1,]")]),
        event("X", "j", args=[arg_json("deep", "[" * 65 + "]" * 65)])),
    "object_mmap": fmt(event("X", "x" * 200), event("B", "b"), event("E", "b"),
                       obj=True, mmap=True, buf=0, pname="proc \"name\""),
    "flush_each": fmt(event("X", "a" * 100), event("i", "bad", scope=0x0f),
                      event("X", "b" * 300), event("E", None),
                      obj=True, buf=0, flush=True),
    "toomany": fmt(event("X", "many", args=[arg_int("a", 1), arg_int("b", 2)],
                         nsel=0xfe),
                   event("X", "max", args=[arg_bool("a", False)], nsel=0xfd),
                   event("X", "null args", nsel=0xfc)),
    "toobig": fmt(event("X", "big", args=[arg_str("s", b"\x01" * 1000)]),
                  max_event=0),
    "bad_types": fmt(event("X", "t", args=[s("a") + b"\xfc" + u64(1)]),
                     event("C", "c", args=[arg_str("s", "x")]),
                     event("X", "noname", args=[arg_int(None, 1)]),
                     event("b", "noid")),
    # The formatter's common shapes (format_common) and its doubles.
    "common_args": fmt(event("X", "matmul", HAS_TS | HAS_PID | HAS_TID,
                             cat="gpu,bench", ts=10**15 + 7, dur=999, pid=1,
                             tid=2**32 - 1, args=[
                                 arg_int("neg", -2**63), arg_uint("u", 2**63),
                                 arg_double("d17", dbl(1 / 7.0)),
                                 arg_double("whole", dbl(-2.0**53)),
                                 arg_bool("f", False), arg_null("n"),
                                 arg_str("esc", "plain text, then \"q\" \\ \t\x01"),
                                 arg_str("null", None)]),
                       event("i", "inst", HAS_TS, scope=2, ts=1,
                             args=[arg_str("u", "gr\u00f6\u00dfe \u6ce8\u610f")]),
                       event("E", None, args=[arg_double("x", dbl(0.5))])),
    "common_bad_utf8": fmt(event("B", "b", args=[
                               arg_str(b"k\xc3", b"12345678\xc3\x28"),
                               arg_str(b"\xff\xfe", b"\xed\xa0\x80")]),
                           event("X", "x", args=[arg_str("s", b"ok\xf4\x90")])),
    "common_utf8_reject": fmt(event("B", "b", args=[
                                  arg_str("k", b"12345678\xc3\x28")]),
                              event("X", b"x\xf4\x90"), flags=1),
    "common_eight_args": fmt(event("X", "eight", args=[
                                 arg_int("a", -1), arg_uint("b", 2**64 - 1),
                                 arg_double("c", dbl(2.5)),
                                 arg_double("d", dbl(1e-7)),
                                 arg_bool("e", True), arg_null("f"),
                                 arg_str("g", "tab\there, 8+ bytes"),
                                 arg_json("h", "[1]")])),
    "common_small_buffer": fmt(event("X", "n" * 60, cat="c" * 60, args=[
                                   arg_str("s", "\x01" * 60),
                                   arg_double("d", dbl(1e-300))]),
                               buf=0, max_event=0),
    "doubles_edges": fmt(event("C", "d", args=[
                             arg_double("sub", dbl_bits(1)),
                             arg_double("maxsub", dbl_bits(2**52 - 1)),
                             arg_double("minnorm", dbl_bits(1 << 52)),
                             arg_double("max", dbl_bits(0x7fefffffffffffff)),
                             arg_double("negzero", dbl_bits(1 << 63)),
                             arg_double("e5", dbl(1e-5)),
                             arg_double("frac20", dbl(0.00012345678901234567)),
                             arg_double("e22", dbl(1e22))]),
                         event("C", "d", args=[
                             arg_double("e23", dbl(1e23)),
                             arg_double("p53", dbl(2.0**53 + 2)),
                             arg_double("nines", dbl(9.999999999999999e22)),
                             arg_double("tiny", dbl(4.9406564584124654e-324)),
                             arg_double("third", dbl(-1 / 3.0)),
                             arg_double("big", dbl(1.7976931348623157e308))])),
}

OPTIONS = {
    "empty": b"",
    "buffer_object": b"buffer=256KiB,format=object,utf8=reject",
    "mmap": b"mmap,chunk=64k",
    "gzip_background": b"gzip=9,commit=background,buffers=8,flush=100ms",
    "drop_sync": b"on_full=drop,sync,commit=inline",
    "limits": b"max_string=64,max_event=4KiB,long=reject,nonfinite=reject",
    "lenient": b"utf8=replace,nonfinite=null,long=truncate,sink=file",
    "spaces": b" , ,format=array , sink=auto,,",
    "bad_size": b"buffer=1",
    "bad_key": b"format=array,colour=blue",
    "bad_gzip": b"gzip=0",
    "bad_flush": b"flush=0s",
    "overflow": b"max_string=18446744073709551616",
    "units": b"buffer=1MiB,max_event=2m,chunk=1G,flush=2h",
}

JSON = {
    "object": b'{"a":[1,2.5e-3,true,false,null,"\\u00e9\\ud83d\\ude00"]}',
    "empty_array": b"[]",
    "ws_number": b" \t-0.0E+5\r\n",
    "depth64": b"[" * 64 + b"]" * 64,
    "depth65": b"[" * 65 + b"]" * 65,
    "trailing_comma": b"[1,]",
    "lone_surrogate": b'"\\ud800"',
    "leading_zero": b"01",
    "raw_control": b'"a\x01b"',
    "bad_utf8": b'"\xc0\xaf"',
    "utf8": '"\u20ac\U0001f600"'.encode(),
    "nested_objects": b'{"a":{"b":{"c":[{"d":""}]}},"e":-1e-10}',
    "two_values": b"1 2",
    "literal": b"nul",
    "newlines": b'{\n"a" :\n[1,\n2]\n}\n',
}
# What the word and vector loops (strings, digits, whitespace) must find
# at every place of a word or a block: the same texts, a byte of
# interest after 0..20 plain bytes (replay_json_portable reads them
# without SSE2).
for k in range(21):
    pad = b"x" * k
    JSON["edge_escape_%02d" % k] = b'["' + pad + b'\\"y","' + pad + b'\\u00e9"]'
    JSON["edge_utf8_%02d" % k] = b'["' + pad + '\u00e9\u20ac'.encode() + b'"]'
    JSON["edge_bad_utf8_%02d" % k] = b'["' + pad + b'\xe2\x82"]'
    JSON["edge_control_%02d" % k] = b'["' + pad + b'\x1f"]'
    JSON["edge_digits_%02d" % k] = b"[1" + b"2" * k + b".5" + b"0" * k + b"e1" + b"9" * k + b"]"
    JSON["edge_digit_cut_%02d" % k] = b"[1" + b"2" * k + b".e1]"
    JSON["edge_ws_%02d" % k] = b"[" + b" " * k + b"\t1" + b" " * k + b"\n]"
    JSON["edge_ws_bad_%02d" % k] = b"[" + b" " * k + b"\x0b1]"


# fuzz_scan.c: byte 0 seeds the chunk sizes, byte 1 picks max_record
# (& 3: 64, 512, 4096 or 1 MiB bytes); the rest is the JSON text.
def scan(text, seed=7, max_record=3):
    if isinstance(text, str):
        text = text.encode()
    return bytes([seed, max_record]) + text


PRETTY = (
    '{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {"id": 0, '
    '"name": "GPU"}\n  ],\n  "traceEvents": [\n  {\n    "ph": "X", '
    '"cat": "kernel", "name": "gemm",\n    "pid": 0, "tid": "stream 7",\n'
    '    "ts": 1700000000000000.250, "dur": 12.5,\n    "args": {\n'
    '      "grid": [1, 2, 3], "note": "a\\"{}[],\\\\"\n    }\n  },\n'
    '  {\n    "name": "process_name", "ph": "M", "pid": 0,\n'
    '    "args": {"name": "python"}\n  }\n  ],\n'
    '  "traceName": "t.json",\n  "baseTimeNanoseconds": 1700000000000000000\n}\n'
)
DEEP = "[" + "{\"a\":" * 70 + "1" + "}" * 70 + "]"
SCAN = {
    "layout": scan('[\n{"ph":"M","name":"process_name","pid":1,"tid":1,'
                   '"args":{"name":"srv"}},\n{"ph":"X","name":"w","cat":"c",'
                   '"ts":1.000,"dur":2.000,"pid":1,"tid":1}\n]\n'),
    "object_form": scan('{"traceEvents":[\n{"ph":"i","name":"a","ts":1,'
                        '"pid":1,"tid":1,"s":"t"}\n],"displayTimeUnit":"ns"}'),
    "pretty": scan(PRETTY, seed=3),
    "pretty_small_record": scan(PRETTY, seed=1, max_record=0),
    "chrome_trailing": scan('[{"ph":"B","name":"x","ts":0,"pid":1,"tid":1},'
                            '1,"s",[],{},,{"ph":"E","ts":1,"pid":1,'
                            '"tid":1},]'),
    "cut": scan('[\n{"ph":"X","name":"w","ts":1,"dur":2,"pid":1,"tid":1},'
                '\n{"ph":"X","name":"w","ts":3,"du'),
    "escapes": scan('[{"name":"\\\\\\"\\u00e9\\ud83d\\ude00\u20ac",'
                    '"ph":"i","ts":1,"pid":1,"tid":1,'
                    '"args":{"k":"}],{[\\\\"}}]', seed=5),
    "bom": scan(b"\xef\xbb\xbf[{\"ph\":\"i\",\"ts\":1}]"),
    "bad_utf8": scan(b'[{"name":"\xc0\xaf","ph":"i"},{"name":"ok"}]'),
    "deep": scan(DEEP, max_record=2),
    "not_json": scan("hello, world\n"),
    "one_line": scan('{"traceEvents": [ {"a": 1} , { "b" : [ 1 , 2 ] } ]}'),
}


# fuzz_commands.c: byte 0 picks the command (% 9: cat, cat --ndjson,
# slice, slice --clip, stats, stats --json, merge, split, repair), byte 1 the
# -m size (& 3: 4k, 16k, 1m, 64m) and, bit 2, a .json.gz input; the rest
# is the file.
COMMAND_NAMES = ("cat", "ndjson", "slice", "clip", "stats", "stats_json",
                 "merge", "split", "repair")
COMMANDS = {}
for text_name in ("layout", "pretty", "chrome_trailing", "cut", "escapes"):
    text = SCAN[text_name][2:]
    for c, cname in enumerate(COMMAND_NAMES):
        COMMANDS["%s_%s" % (cname, text_name)] = bytes([c, 3]) + text
COMMANDS["cat_layout_gz"] = bytes([0, 3 | 4]) + SCAN["layout"][2:]
COMMANDS["stats_pretty_gz"] = bytes([5, 3 | 4]) + SCAN["pretty"][2:]
COMMANDS["repair_cut_gz"] = bytes([8, 3 | 4]) + SCAN["cut"][2:]


# fuzz_shape.c: byte 0 the mode (bits 0-2 PREFIX, COMPACT, MEMBERS; bit 3
# compact in place; bits 4-7 the depth limit, 1 + 4 * them), then texts
# separated by NUL bytes: each in every mode below.
SHAPE_TEXTS = {
    "layout": [
        b'{"ph":"X","name":"db.query","cat":"db","ts":2000.000,"dur":12.250,'
        b'"pid":100,"tid":101,"args":{"rows":7,"table":"orders"}}',
        b'{"ph":"X","name":"db.query","cat":"db","ts":2001.500,"dur":1e3,'
        b'"pid":100,"tid":102,"args":{"rows":-0.5,"table":"a\\"}}',
        b'{"ph":"B","name":"handle","cat":"http","ts":2003.000,"pid":100,'
        b'"tid":103,"args":{"path":"/api/users/3"}}',
        b'{"ph":"E","ts":2004.500,"pid":100,"tid":103}',
        b'{"ph":"E","ts":2004.500,"pid":100,"tid":103},\n{"ph":"E"',
        b'{"ph":"E","ts":02004.500,"pid":100,"tid":103}',
        b'{"ph":"E","ts":2004.,"pid":100,"tid":103}',
        b'{"ph":"E","ts":true,"pid":null,"tid":false}',
        b'{"ph":"E","ts":tru,"pid":null,"tid":false}',
        b'{"ph":"E","ts":"x\xc3\xa9\u00e9\ud83d\ude00","pid":1,"tid":2}',
        b'{"ph":"E","ts":"x\xc3","pid":1,"tid":2}',
        b'{"ph":"E","ts":"x\ud83d","pid":1,"tid":2}',
        b'{"ph":"E","ts":"\x01","pid":1,"tid":2}',
        b'{"ph":"E","ts":[1,2],"pid":1,"tid":2}',
        b'{"ph":"E","ts":{},"pid":1,"tid":2}',
    ],
    "pretty": [
        b'  {\n    "ph": "X", "cat": "kernel",\n    "name": "gemm",\n'
        b'    "args": {\n      "grid": [1, 2, 3],\n      "stream": 7\n'
        b'    }\n  }',
        b'  {\n    "ph": "X", "cat": "kernel",\n    "name": "copy",\n'
        b'    "args": {\n      "grid": [4, 5, 6],\n      "stream": 8\n'
        b'    }\n  }  \n',
        b'  {\n    "ph": "X", "cat": "kernel",\n    "name": "copy",\n'
        b'    "args": {\n      "grid": [4, 5, 6],\n      "stream": 8\n'
        b'    }\n  } x',
        b'\t{"a" : 1 ,\r\n "b" : [ true , null ] }',
        b'{"a" : 2 ,\r\n "b" : [ false , null ] }',
    ],
    "nested": [
        b'[[[[[[1]]]]]]',
        b'[[[[[[2]]]]]]',
        b'{"a":{"b":{"c":{"d":{"e":{"f":1}}}}}}',
        b'{"a":{"b":{"c":{"d":{"e":{"f":"x"}}}}}}',
        b'[1,"a",true,null,{"k":-1.5e-3}]',
        b'[2,"b",false,null,{"k":-1.5E+3}]',
        b'"alone"',
        b'12',
        b'{}',
        b'[]',
        b'{"k":1}{"k":2}',
    ],
    "members": [
        b'{' + b','.join(b'"k%d":%d' % (i, i) for i in range(40)) + b'}',
        b'{' + b','.join(b'"k%d":%d' % (i, i + 1) for i in range(40)) + b'}',
        b'{' + b','.join(b'"k%d":%d' % (i, i) for i in range(32)) + b'}',
        b'{' + b','.join(b'"k%d":%d' % (i, 9) for i in range(32)) + b'}',
        b'[' + b','.join(b'%d' % i for i in range(70)) + b']',
        b'[' + b','.join(b'%d' % (i + 3) for i in range(70)) + b']',
    ],
}
SHAPE = {}
for tname, texts in SHAPE_TEXTS.items():
    body = b"\0".join(texts)
    for mode in range(8):
        for inplace in (0, 8):
            if inplace and not mode & 2:
                continue
            for depth in (0x00, 0x10, 0xf0):
                SHAPE["%s_m%d%s_d%d" % (tname, mode, "_inplace" if inplace
                                        else "", 1 + 4 * (depth >> 4))] = \
                    bytes([mode | inplace | depth]) + body


# Inputs kept as found (regressions, crashes made into seeds): not
# written here, never removed.
KEPT = ("regress-", "format-", "options-", "units_any_case")


def write(sub, seeds):
    d = os.path.join(HERE, "corpus", sub)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if not f.startswith(KEPT):
            os.unlink(os.path.join(d, f))
    for name, data in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


write("format", FORMAT)
write("options", OPTIONS)
write("json", JSON)
write("scan", SCAN)
write("commands", COMMANDS)
write("shape", SHAPE)
