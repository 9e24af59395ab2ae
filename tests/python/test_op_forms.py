"""The two Python forms of an (input, args...) op, t.name(args) and
hop.name(input, args), parse their arguments through one owner (ops.c's
method_form/function_form): same defaults, same errors, in the same order."""
import pytest

import hop

X = hop.arange(6).reshape(2, 3)

# (name, arguments after input, the result's shape and values or the exact error)
CASES = [
    ("transpose", (0, 1), ((3, 2), [[0, 3], [1, 4], [2, 5]])),
    ("transpose", (0,), (TypeError, "transpose() missing required argument 'dim1'")),
    ("transpose", (1.5, 0), (TypeError, "transpose(): argument 'dim0' must be an int, not float")),
    ("transpose", (0, None), (TypeError, "transpose(): argument 'dim1' must be an int, not NoneType")),
    ("unsqueeze", (-1,), ((2, 3, 1), [[[0], [1], [2]], [[3], [4], [5]]])),
    ("unsqueeze", (None,), (TypeError, "unsqueeze(): argument 'dim' must be an int, not NoneType")),
    ("squeeze", (), ((2, 3), [[0, 1, 2], [3, 4, 5]])),
    ("squeeze", (None,), ((2, 3), [[0, 1, 2], [3, 4, 5]])),
    ("squeeze", (1.0,), (TypeError, "squeeze(): argument 'dim' must be an int, not float")),
    ("select", (1, -1), ((2,), [2, 5])),
    ("select", (0, 1.5), (TypeError, "select(): argument 'index' must be an int or a SymInt, not float")),
    ("select", (None, 0), (TypeError, "select(): argument 'dim' must be an int, not NoneType")),
    ("cumsum", (1,), ((2, 3), [[0, 1, 3], [3, 7, 12]])),
    ("cumsum", (), (TypeError, "cumsum() missing required argument 'dim'")),
    ("sum", (), ((), 15)),
    ("sum", (0, True), ((1, 3), [[3, 5, 7]])),
    ("sum", (0, "x"), (TypeError, "sum(): argument 'keepdim' must be a bool, not str")),
    ("argmax", ((0,),), (TypeError, "argmax(): argument 'dim' must be an int or None, not tuple")),
]


def _check(call, want):
    if isinstance(want[0], type):
        with pytest.raises(want[0]) as e:
            call()
        assert str(e.value) == want[1]
    else:
        r = call()
        assert (r.shape, r.tolist()) == want


@pytest.mark.parametrize("name, args, want", CASES)
def test_method_and_function_forms_parse_the_same(name, args, want):
    _check(lambda: getattr(X, name)(*args), want)
    _check(lambda: getattr(hop, name)(X, *args), want)


def test_function_form_checks_input_before_converting_arguments():
    with pytest.raises(TypeError) as e:
        hop.transpose(1, 1.5, 0)
    assert str(e.value) == "transpose(): argument 'input' must be a Tensor, not int"


def test_slice_method_defaults_and_keywords():
    assert X.slice().tolist() == X.tolist()
    assert X.slice(1, None, None, 2).tolist() == [[0, 2], [3, 5]]
    assert X.slice(step=2).tolist() == [[0, 1, 2]]
    assert X.slice(dim=1, end=2).tolist() == [[0, 1], [3, 4]]
    with pytest.raises(TypeError, match=r"^slice\(\): argument 'step' must be an int, not NoneType$"):
        X.slice(1, 0, 2, None)
    with pytest.raises(TypeError, match=r"^slice\(\) got an unexpected keyword argument 'bogus'$"):
        X.slice(bogus=1)
    assert not hasattr(hop, "slice")  # it would shadow the builtin
