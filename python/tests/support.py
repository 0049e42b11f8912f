"""Helpers of the binding's tests: strict reading of traces, temporary
directories, the build tree's tools, child processes.

Every trace a test writes is read back strictly: the bytes must be UTF-8,
json.loads must take the whole document (no NaN or Infinity, no duplicate
key), and, when the build tree has it, tests/jsonlint (the project's own
strict checker) must accept it too.
"""

import decimal
import faulthandler
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

# No test may hang make check: dump every thread's stack and exit.
faulthandler.dump_traceback_later(
    int(os.environ.get("TW_PY_TIMEOUT", "600")), exit=True)

HERE = os.path.dirname(os.path.abspath(__file__))
# python/, or where test_python.sh put a copy of the package with its
# compiled fast path.
PACKAGE_PARENT = (os.environ.get("TW_PY_PACKAGE_PARENT") or
                  os.path.dirname(HERE))
if PACKAGE_PARENT not in sys.path:
    sys.path.insert(0, PACKAGE_PARENT)

import tracewriter  # noqa: E402

TOP_BUILDDIR = os.environ.get("top_builddir") or os.path.dirname(
    os.path.dirname(HERE))


def tool_env():
    """The environment for the project's tools: without the sanitizer
    runtime test_python.sh preloads for Python (they link their own, and
    libtool's wrapper scripts are shell scripts, which a preloaded TSan
    runtime kills)."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def run_tool(args, **kwargs):
    """Run a program of the build tree; returns the CompletedProcess."""
    return subprocess.run(args, env=tool_env(), capture_output=True,
                          text=True, timeout=kwargs.pop("timeout", 120),
                          **kwargs)


def built(relpath):
    """The path of a program of the build tree, or None if not built."""
    path = os.path.join(TOP_BUILDDIR, relpath)
    return path if os.access(path, os.X_OK) else None


class StrictJSONError(ValueError):
    pass


def _refuse_constant(name):
    raise StrictJSONError("non-JSON constant %s" % name)


def _no_duplicates(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise StrictJSONError("duplicate key %r" % key)
        obj[key] = value
    return obj


def parse_strict(data):
    """A whole document of bytes, strictly: UTF-8, one JSON value, no
    NaN/Infinity, no duplicate key.  Numbers with a fraction or exponent
    are decimal.Decimal, so timestamps compare exactly."""
    text = data.decode("utf-8")                  # strict: raises
    return json.loads(text, parse_constant=_refuse_constant,
                      object_pairs_hook=_no_duplicates,
                      parse_float=decimal.Decimal)


def read_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    return data


def jsonlint(data, tmpdir):
    """Run the project's strict checker on data, if it is built."""
    lint = built("tests/jsonlint")
    if not lint:
        return
    path = os.path.join(tmpdir, "lint.json")
    with open(path, "wb") as f:
        f.write(data)
    r = run_tool([lint, "--events", path])
    if r.returncode != 0:
        raise StrictJSONError("jsonlint: " + (r.stdout + r.stderr).strip())


def without_clock(events):
    """The events without the clock record that the library writes after
    the first record of every document (a 'c' "clock_sync" event), checked
    first: the tests compare the records the writer was given."""
    if (len(events) > 1 and events[1].get("ph") == "c" and
            events[1].get("name") == "clock_sync"):
        e = events[1]
        assert events[0]["name"] == "process_name", events[0]
        assert e["args"]["sync_id"] == "tracewriter.realtime", e
        assert e["args"]["monotonic_ns"] == us_to_ns(e["ts"]), e
        return events[:1] + events[2:]
    return events


def load(path, tmpdir=None):
    """The events of the trace at path (.gz: gunzipped), read strictly,
    without the document's clock record (without_clock)."""
    data = read_bytes(path)
    doc = parse_strict(data)
    if tmpdir:
        jsonlint(data, tmpdir)
    if isinstance(doc, dict):
        return without_clock(doc["traceEvents"])
    return without_clock(doc)


def us_to_ns(us):
    """A timestamp as written ("1234.567", microseconds with three
    decimals) back to integer nanoseconds, exactly."""
    ns = decimal.Decimal(us) * 1000
    assert ns == ns.to_integral_value(), us
    return int(ns)


def user_events(events):
    """The events after the first record (the writer's process_name)."""
    assert events[0]["ph"] == "M" and events[0]["name"] == "process_name"
    return events[1:]


def child_env(**extra):
    """The environment for a Python child that imports the package from
    the source tree and finds the library as this process did."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_PARENT + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("TRACEWRITER_LIB", tracewriter.library_path())
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def run_python(code, timeout=120, **env):
    """Run code in a child python; returns the CompletedProcess."""
    return subprocess.run([sys.executable, "-B", "-c", code],
                          env=child_env(**env), capture_output=True,
                          text=True, timeout=timeout)


class TraceTest(unittest.TestCase):
    """A test case with a temporary directory, removed afterwards."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tw-py-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def path(self, name="trace.json"):
        return os.path.join(self.dir, name)

    def load(self, path):
        return load(path, self.dir)

    def events(self, path):
        """The user events of the trace at path."""
        return user_events(self.load(path))

    def assertError(self, code, fn, *args, **kwargs):
        """fn(*args, **kwargs) raises tracewriter.Error with code."""
        with self.assertRaises(tracewriter.Error) as cm:
            fn(*args, **kwargs)
        self.assertEqual(cm.exception.code, code, str(cm.exception))
        return cm.exception
