"""Makes `import hop` import the package from the build tree.

Set HOP_PYTHONPATH to the build's python directory (<build>/python, where
hop/ and hop/_C*.so are assembled); PYTHONPATH works too.
"""
import os
import sys

_path = os.environ.get("HOP_PYTHONPATH")
if _path:
    sys.path.insert(0, os.path.abspath(_path))
