"""Installing the package: `pip install ./python` in a plain virtual
environment with no index (the in-tree backend, tracewriter_build.py,
needs nothing), and `make install-python` into the active virtual
environment, which says where it went."""

import os
import subprocess
import sys
import unittest

from support import TOP_BUILDDIR, TraceTest, tool_env

SOURCE_PYTHON = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(TOP_BUILDDIR, ".libs", "libtracewriter.so")

# What the installed package is asked to do, printed as one line.
PROBE = r"""
import json, sys, tracewriter
w = tracewriter.open(sys.argv[1])
with w.span("installed", cat="t", k=1):
    pass
w.close()
print(json.dumps({"file": tracewriter.__file__,
                  "speedups": tracewriter.speedups()}))
"""


def has_python_h():
    import sysconfig
    return os.path.exists(os.path.join(sysconfig.get_paths()["include"],
                                       "Python.h"))


def install_env():
    """The environment of a build or install: the tests' own variables
    left out (TRACEWRITER_SPEEDUPS=0 would leave the extension out)."""
    e = tool_env()
    for k in ("PYTHONPATH", "TW_PY_PACKAGE_PARENT", "top_builddir",
              "TRACEWRITER_SPEEDUPS", "MAKEFLAGS", "MFLAGS", "MAKELEVEL",
              "PYTHON_SITE"):
        e.pop(k, None)
    return e


# test_python.sh runs the tests twice; these, which make a venv each, run
# in the pass with the compiled fast path when there is one.
@unittest.skipIf(os.environ.get("TW_PY_EXPECT_SPEEDUPS") == "0" and
                 has_python_h(), "run in test_python.sh's other pass")
class TestInstall(TraceTest):

    def venv(self):
        """A fresh virtual environment (pip from ensurepip, nothing else);
        returns its python."""
        d = os.path.join(self.dir, "venv")
        r = subprocess.run([sys.executable, "-m", "venv", d],
                           capture_output=True, text=True, timeout=300,
                           env=install_env())
        if r.returncode != 0:
            self.fail("python3 -m venv failed (Debian: python3-venv):\n"
                      + r.stdout + r.stderr)
        return d, os.path.join(d, "bin", "python3")

    def probe(self, python, venv, **env):
        """Run PROBE with the venv's python outside the source tree; the
        trace it writes is read back strictly."""
        import json
        e = install_env()
        e.update(env)
        # The probe loads the library: with a sanitizer build, its
        # runtime preloaded as for the tests themselves.
        if os.environ.get("LD_PRELOAD"):
            e["LD_PRELOAD"] = os.environ["LD_PRELOAD"]
        out = self.path("installed.json")
        r = subprocess.run([python, "-B", "-c", PROBE, out], cwd=self.dir,
                           capture_output=True, text=True, timeout=120,
                           env=e)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        info = json.loads(r.stdout)
        self.assertTrue(info["file"].startswith(venv), info)
        (ev,) = self.events(out)
        self.assertEqual((ev["ph"], ev["name"], ev["cat"], ev["args"]),
                         ("X", "installed", "t", {"k": 1}))
        return info

    def test_pip_install_offline_in_a_plain_venv(self):
        venv, python = self.venv()
        r = subprocess.run([python, "-m", "pip", "install", "--no-index",
                            "--no-cache-dir", SOURCE_PYTHON],
                           capture_output=True, text=True, timeout=600,
                           env=install_env())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        info = self.probe(python, venv, TRACEWRITER_LIB=LIB)
        self.assertEqual(info["speedups"], has_python_h())

    def test_make_install_python_into_the_active_venv(self):
        if not os.path.exists(os.path.join(TOP_BUILDDIR, "Makefile")):
            self.skipTest("no configured build tree")
        venv, python = self.venv()
        e = install_env()
        e["VIRTUAL_ENV"] = venv
        e["PATH"] = os.path.join(venv, "bin") + os.pathsep + e["PATH"]
        r = subprocess.run(["make", "-s", "-C", TOP_BUILDDIR,
                            "install-python"], capture_output=True,
                           text=True, timeout=300, env=e)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("installed tracewriter for " + python, r.stdout)
        site = subprocess.run(
            [python, "-c", "import sysconfig; "
             "print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, env=e).stdout.strip()
        self.assertIn("into " + os.path.join(site, "tracewriter"), r.stdout)
        info = self.probe(python, venv, TRACEWRITER_LIB=LIB)
        self.assertEqual(info["speedups"], has_python_h())


if __name__ == "__main__":
    unittest.main()
