"""Print where `make install-python` puts the package for a prefix.

    python3 sitedir.py PREFIX

The interpreter's own site directory under PREFIX when one is on its
sys.path (Debian's python3 and prefix /usr/local:
/usr/local/lib/python3.X/dist-packages; a virtual environment's prefix:
its site-packages), else PREFIX/lib/python3.X/site-packages, with a
warning on stderr that it needs PYTHONPATH.
"""

import os
import sys
import sysconfig

prefix = os.path.abspath(sys.argv[1])
for entry in sys.path:
    if (os.path.basename(entry) in ("site-packages", "dist-packages") and
            os.path.dirname(os.path.abspath(entry)).startswith(
                os.path.join(prefix, "lib", ""))):
        print(os.path.abspath(entry))
        break
else:
    site = sysconfig.get_path("purelib", "posix_prefix",
                              {"base": prefix, "platbase": prefix})
    sys.stderr.write("note: %s is not on %s's sys.path: set PYTHONPATH=%s\n"
                     % (site, sys.executable, site))
    print(site)
