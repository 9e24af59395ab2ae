"""hop: higher-order operators (cond, map, wrap, invoke_subgraph) with nested
subgraph tracing, lowered to a C kernel runtime.

    import hop
    def f(x, y):
        return hop.cond(x.sum() > 0, lambda: (x * y).sin(), lambda: x - y)
    gm = hop.trace(f, hop.randn(8, 4), hop.randn(4), dynamic=True)
    print(gm.code)
    gm(hop.randn(16, 4), hop.randn(4))
"""

from . import _C
from ._C import (  # noqa: F401  (re-exported)
    Tensor, SymInt, Error, TraceError, ShapeError, DTypeError, UnsupportedError, GuardError,
    DataDependentError,
)
from ._hops import (  # noqa: F401
    cond, map, wrap, invoke_subgraph, nested_compile_region, ops, load_library, HopFunction,
    while_loop, fori_loop, scan, switch, associative_scan,
)
from ._trace import trace, GraphModule, Graph, Node, TensorMeta, SymMeta  # noqa: F401
from ._compile import compile, CompiledFunction  # noqa: F401
from ._autodiff import grad, value_and_grad, vjp, jvp  # noqa: F401
from ._vmap import vmap  # noqa: F401
from ._pytree import register_pytree_node  # noqa: F401
from . import testing  # noqa: F401
from ._foreign import foreign, ForeignKernel  # noqa: F401
from ._saved import save, load  # noqa: F401
from ._symfloat import SymFloat  # noqa: F401
from . import _saved
from . import _setitem  # noqa: F401  (hop.Tensor's x[key] = value)

_saved._install()

from . import _numpy_math
_numpy_math.adopt()


# Everything public that the extension defines (dtypes, constructors, ops,
# more exception classes) is part of the package.
for _name in dir(_C):
    if not _name.startswith("_") and _name not in globals() and _name not in (
            "Trace", "tracing", "call_hop", "hop_signature", "list_hops"):
        globals()[_name] = getattr(_C, _name)
del _name

import sys as _sys
_sys.modules[__name__ + ".ops"] = ops  # `import hop.ops` works too
del _sys

__version__ = "0.1.0"


# hop.numpy is a submodule that `import hop` does not import (it builds the
# whole NumPy namespace): PEP 562 makes `hop.numpy` import it on first use,
# after which the import system has set it as a plain attribute of hop.
def __getattr__(name):
    if name == "numpy":
        import importlib
        return importlib.import_module(__name__ + ".numpy")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"numpy"})
