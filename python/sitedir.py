"""Print where `make install-python` puts the package: the site directory
of the interpreter that runs this script.

    python3 sitedir.py

Its purelib directory: a virtual environment's site-packages; for Debian's
/usr/bin/python3, /usr/local/lib/python3.X/dist-packages; for any other
python3, its own site-packages.  A directory that is not on the
interpreter's sys.path (which happens only with an unusual install scheme)
is printed with a note on stderr.
"""

import os
import sys
import sysconfig

site = sysconfig.get_paths()["purelib"]
if os.path.abspath(site) not in (os.path.abspath(p) for p in sys.path):
    sys.stderr.write("note: %s is not on %s's sys.path: set PYTHONPATH=%s\n"
                     % (site, sys.executable, site))
print(site)
