"""Installing the package, as a user does, offline: `pip install ./python`
in a fresh virtual environment; `pip wheel ./python`, then that wheel in a
second one; `make install-python` into a third.  Each installed package
must work at its first use with nothing else of ours installed and
nothing in the environment (no TRACEWRITER_LIB, no LD_LIBRARY_PATH, no
build tree): it loads the library inside it, through the compiled fast
path and through ctypes alone.

One venv with pip is made (pip from the wheel ensurepip installs), while
the C library is compiled once into a build cache (TRACEWRITER_BUILD_CACHE)
that the two pip builds then take it from, side by side; the other two
venvs are made without pip (the wheel goes in with the first venv's pip,
`pip --python`).  About 15 s of CPU."""

import glob
import json
import os
import subprocess
import sys
import unittest
import zipfile

from support import TOP_BUILDDIR, TraceTest, tool_env

SOURCE_PYTHON = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What the installed package is asked to do, printed as one line.
PROBE = r"""
import json, sys, tracewriter
w = tracewriter.open(sys.argv[1])
with w.span("installed", cat="t", k=1):
    pass
@w.span("decorated", cat="t")
def f(): pass
f()
w.close()
print(json.dumps({"file": tracewriter.__file__,
                  "library": tracewriter.library_path(),
                  "speedups": tracewriter.speedups()}))
"""


def has_python_h():
    import sysconfig
    return os.path.exists(os.path.join(sysconfig.get_paths()["include"],
                                       "Python.h"))


def install_env():
    """The environment of a build or install, and of the probes: the
    tests' own variables left out (TRACEWRITER_SPEEDUPS=0 would leave the
    extension out), and nothing that points at a library."""
    e = tool_env()
    for k in ("PYTHONPATH", "TW_PY_PACKAGE_PARENT", "top_builddir",
              "top_srcdir", "TRACEWRITER_SPEEDUPS", "TRACEWRITER_LIB",
              "LD_LIBRARY_PATH", "MAKEFLAGS", "MFLAGS", "MAKELEVEL",
              "PYTHON_SITE", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV"):
        e.pop(k, None)
    e["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    e["PIP_NO_INPUT"] = "1"
    # What is tested is that the package builds, installs and loads, not
    # the optimiser: -O0 (last, so it wins) takes a third of the CPU time
    # of the -O2 build the backend makes by default.
    e["CFLAGS"] = (e.get("CFLAGS", "") + " -O0").strip()
    return e


def run(cmd, timeout=300, **kwargs):
    return subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout, env=kwargs.pop("env", None) or
                          install_env(), **kwargs)


def bundled_pip():
    """The pip wheel that ensurepip installs (Python's own, or Debian's in
    /usr/share/python-wheels), or None."""
    import ensurepip
    for d in (os.path.join(os.path.dirname(ensurepip.__file__), "_bundled"),
              "/usr/share/python-wheels"):
        found = sorted(glob.glob(os.path.join(d, "pip-*-py3-none-any.whl")))
        if found:
            return found[-1]
    return None


def make_venv(path, with_pip):
    """python3 -m venv PATH, in the background.  With pip: the pip wheel
    that python3 -m venv would install, installed the same way but
    without setuptools and without compiling bytecode (ensurepip takes 5
    to 30 s on a loaded 2-core machine, this 1 to 3 s); python3 -m venv
    itself where that wheel cannot be found."""
    wheel = bundled_pip() if with_pip else None
    if with_pip and not wheel:
        cmd = [sys.executable, "-m", "venv", path]
    else:
        cmd = [sys.executable, "-m", "venv", "--without-pip", path]
        if wheel:
            cmd = ["/bin/sh", "-c", '"$1" -m venv --without-pip "$2" && '
                   '"$2/bin/python3" "$3/pip" install -q --no-index '
                   '--no-compile --disable-pip-version-check "$3"', "sh",
                   sys.executable, path, wheel]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env=install_env())


def finish(proc, what, timeout=300):
    out = proc.communicate(timeout=timeout)[0]
    if proc.returncode != 0:
        raise AssertionError("%s failed (status %d):\n%s"
                             % (what, proc.returncode, out))
    return out


def site_packages(venv):
    (site,) = glob.glob(os.path.join(venv, "lib", "python3*",
                                     "site-packages"))
    return site


# test_python.sh runs the tests twice; these, which make venvs, run in the
# pass with the compiled fast path when there is one.
@unittest.skipIf(os.environ.get("TW_PY_EXPECT_SPEEDUPS") == "0" and
                 has_python_h(), "run in test_python.sh's other pass")
class TestInstall(TraceTest):

    @classmethod
    def setUpClass(cls):
        import shutil
        import tempfile
        cls.root = tempfile.mkdtemp(prefix="tw-py-install-")
        cls.addClassCleanup(shutil.rmtree, cls.root, True)
        cls.venv = os.path.join(cls.root, "venv")
        cls.wheel_venv = os.path.join(cls.root, "venv-wheel")
        cls.make_venv = os.path.join(cls.root, "venv-make")
        cls.wheels = os.path.join(cls.root, "wheels")
        os.mkdir(cls.wheels)
        # The C library is compiled once, by the backend itself, while
        # the venvs are made; the builds below take it from the cache
        # (the same compiler, flags and sources: tracewriter_build.py).
        env = install_env()
        env["TRACEWRITER_BUILD_CACHE"] = os.path.join(cls.root, "cache")
        prime = subprocess.Popen(
            [sys.executable, "-B",
             os.path.join(SOURCE_PYTHON, "tracewriter_build.py"), "lib",
             cls.root], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env=env)
        bare = [make_venv(cls.wheel_venv, False),
                make_venv(cls.make_venv, False)]
        first = make_venv(cls.venv, True)
        for proc, name in zip(bare, ("venv-wheel", "venv-make")):
            finish(proc, "python3 -m venv --without-pip " + name)
        finish(first, "python3 -m venv (Debian: python3-venv)")
        finish(prime, "tracewriter_build.py lib", timeout=600)
        pip = [os.path.join(cls.venv, "bin", "python3"), "-m", "pip"]
        # What a user types (offline: --no-index), side by side.  The
        # build runs in the source tree, which may be read-only.
        opts = ["--no-index", "--no-cache-dir"]
        cls.builds = {
            "install": subprocess.Popen(
                pip + ["install"] + opts + [SOURCE_PYTHON],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, env=env),
            "wheel": subprocess.Popen(
                pip + ["wheel"] + opts + ["-w", cls.wheels, SOURCE_PYTHON],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, env=env),
        }
        cls.outputs = {}
        for name, proc in cls.builds.items():
            cls.outputs[name] = (proc.communicate(timeout=600)[0],
                                 proc.returncode)
        cls.pip = pip
        cls.primed = os.path.join(cls.root, "libtracewriter.so")

    def probe(self, venv, speedups):
        """Run PROBE with the venv's python outside the source tree, with
        the compiled fast path and with ctypes alone: both load the
        package's own library; the traces are read back strictly."""
        site = site_packages(venv)
        package = os.path.join(site, "tracewriter")
        python = os.path.join(venv, "bin", "python3")
        infos = []
        for fast in ("1", "0"):
            e = install_env()
            e["TRACEWRITER_SPEEDUPS"] = fast
            # A sanitizer build's runtime, as for the tests themselves.
            if os.environ.get("LD_PRELOAD"):
                e["LD_PRELOAD"] = os.environ["LD_PRELOAD"]
            out = self.path("installed-%s.json" % fast)
            r = subprocess.run([python, "-B", "-c", PROBE, out],
                               cwd=self.dir, capture_output=True,
                               text=True, timeout=120, env=e)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            info = json.loads(r.stdout)
            self.assertEqual(os.path.dirname(info["file"]), package, info)
            self.assertEqual(info["library"],
                             os.path.join(package, "libtracewriter.so"))
            self.assertEqual(info["speedups"], fast == "1" and speedups,
                             info)
            evs = self.events(out)
            self.assertEqual(
                [(e["ph"], e["name"], e["cat"], e.get("args")) for e in evs],
                [("X", "installed", "t", {"k": 1}),
                 ("X", "decorated", "t", None)])
            infos.append(info)
        return infos

    def assertBuilt(self, name):
        out, status = self.outputs[name]
        self.assertEqual(status, 0, out)
        return out

    def test_pip_install_offline_in_a_fresh_venv(self):
        self.assertBuilt("install")
        self.probe(self.venv, has_python_h())

    def test_pip_wheel_then_that_wheel_in_a_second_venv(self):
        self.assertBuilt("wheel")
        (wheel,) = glob.glob(os.path.join(self.wheels, "*.whl"))
        with zipfile.ZipFile(wheel) as z:
            names = z.namelist()
        self.assertIn("tracewriter/libtracewriter.so", names)
        self.assertIn("tracewriter/torch.py", names)
        self.assertEqual(any(n.startswith("tracewriter/_speedups")
                             for n in names), has_python_h(), names)
        # Into the venv without pip, by the first venv's pip.
        r = run(self.pip + ["--python",
                            os.path.join(self.wheel_venv, "bin", "python3"),
                            "install", "--no-index", wheel])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.probe(self.wheel_venv, has_python_h())

    def test_make_install_python_into_the_active_venv(self):
        if not os.path.exists(os.path.join(TOP_BUILDDIR, "Makefile")):
            self.skipTest("no configured build tree")
        venv = self.make_venv
        python = os.path.join(venv, "bin", "python3")
        e = install_env()
        e["VIRTUAL_ENV"] = venv
        e["PATH"] = os.path.join(venv, "bin") + os.pathsep + e["PATH"]
        r = run(["make", "-s", "-C", TOP_BUILDDIR, "install-python"], env=e)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        package = os.path.join(site_packages(venv), "tracewriter")
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0], "make install-python: installed "
                         "tracewriter for " + python, r.stdout)
        self.assertEqual(lines[1], "  into " + package)
        self.assertEqual(lines[2], "  with its library, %s (this build's "
                         ".libs/libtracewriter.so)"
                         % os.path.join(package, "libtracewriter.so"))
        if has_python_h():
            self.assertRegex(lines[3], r"^  with its compiled fast path, "
                             + package + "/_speedups.*\\.so$")
        else:
            self.assertEqual(lines[3], "  without the compiled fast path "
                             "(ctypes alone)")
        self.assertEqual(len(lines), 4, r.stdout)
        # Every path printed is there.
        for line in lines[1:]:
            for word in line.replace(",", " ").split():
                if word.startswith("/"):
                    self.assertTrue(os.path.exists(word), line)
        self.assertFalse(os.path.exists(os.path.join(package,
                                                     "_config.py")))
        self.probe(venv, has_python_h())


if __name__ == "__main__":
    unittest.main()
