"""The build step of pyproject.toml: CMake builds libhop and the extension hop._C.

setuptools' own build directories are kept under build/pip (ignored by git), and
so is the CMake tree, so a pip install or `python3 -m build --wheel` leaves the
source tree as it was.  From the environment: HOP_PIP_BUILD_DIR (instead of
build/pip, e.g. the pip-install test's own directory), HOP_CMAKE_ARGS (extra
CMake arguments, split on spaces) and HOP_BUILD_JOBS (default 2).
"""

import os
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.egg_info import egg_info

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(os.environ.get("HOP_PIP_BUILD_DIR") or os.path.join(HERE, "build", "pip"))


def _version():
    with open(os.path.join(HERE, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(hop VERSION ([0-9.]+)", f.read())
    if m is None:
        raise RuntimeError("setup.py: no `project(hop VERSION x.y.z)` in CMakeLists.txt")
    return m.group(1)


class CMakeBuild(build_ext):
    """Builds hop._C with CMake (the library's layers are linked in statically)
    and puts the module where setuptools packs it."""

    def build_extension(self, ext):
        tree = os.path.join(BUILD, "cmake-" + sysconfig.get_config_var("SOABI"))
        # Only hop_py_C is built: no C tests, and no C microbenchmarks, whose
        # configure-time probes (OpenMP, -march=native, SLEEF, OpenBLAS) took
        # ~2 of a fresh tree's ~10 CPU-s of configure.
        args = ["cmake", "-S", HERE, "-B", tree, "-DCMAKE_BUILD_TYPE=Release",
                "-DHOP_BUILD_PYTHON=ON", "-DHOP_BUILD_TESTS=OFF", "-DHOP_BUILD_BENCH=OFF",
                "-DPython3_EXECUTABLE=" + sys.executable]
        args += os.environ.get("HOP_CMAKE_ARGS", "").split()
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", tree, "--target", "hop_py_C", "-j",
                        os.environ.get("HOP_BUILD_JOBS", "2")], check=True,
                       stdout=subprocess.DEVNULL)
        built = [f for f in os.listdir(os.path.join(tree, "python", "hop"))
                 if f.startswith("_C") and f.endswith(".so")]
        if len(built) != 1:
            raise RuntimeError(f"setup.py: expected one hop._C module in {tree}, got {built}")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(tree, "python", "hop", built[0]), dest)


class EggInfo(egg_info):
    """The metadata directory goes to build/pip, not next to the sources."""

    def initialize_options(self):
        super().initialize_options()
        os.makedirs(BUILD, exist_ok=True)
        self.egg_base = os.path.relpath(BUILD, HERE)


setup(
    version=_version(),
    ext_modules=[Extension("hop._C", sources=[])],
    cmdclass={"build_ext": CMakeBuild, "egg_info": EggInfo},
    options={"build": {"build_base": os.path.relpath(os.path.join(BUILD, "setuptools"), HERE)},
             "bdist_wheel": {"bdist_dir": os.path.relpath(os.path.join(BUILD, "bdist"), HERE)}},
)
