"""reshape's shape argument and its errors as NumPy 1.24's (issue #29, the
first rule): the shape in the error's text is NumPy's own spelling ((5,5),
(5,), a leading unknown size left out, a later one `newaxis`), any negative
size is the one unknown dimension (NumPy 1.24 reads -2 as -1), two of them
NumPy's ValueError; for np.reshape, ndarray.reshape in both orders,
`a.shape = s`, eagerly on hop.numpy arrays and compiled.  Before, hop
wrote Python's tuple ((5, 5)), refused -2 with hop's InvalidError and gave
another text for two unknowns."""

import numpy as np
import pytest

import hop
import hop.numpy as hnp

SHAPES = [(5, 5), (5, -1), (-1, 4), (5,), 5, (2, 2, 2), (0,), (0, -1), (-1, 0), (7, -1, 2),
          (-1, -1), (-2, -1), (-2, 3), (2, -3), (3, -1), 6, (3, 1.5), ("a",)]


def _outcome(f):
    try:
        r = f()
    except Exception as e:  # noqa: BLE001 (NumPy's error is the answer)
        return type(e), str(e)
    return r.shape, np.asarray(r).ravel().tolist()


def _set_shape(mod, s):
    a = mod.arange(6)
    a.shape = s
    return a


@pytest.mark.parametrize("s", SHAPES)
def test_reshape_is_numpys(s):
    for order in "CF":
        want = _outcome(lambda: np.arange(6).reshape(s, order=order))
        assert _outcome(lambda: hnp.arange(6).reshape(s, order=order)) == want
        assert _outcome(lambda: hnp.reshape(hnp.arange(6), s, order=order)) == want
        assert _outcome(lambda: hop.compile(lambda x: x.reshape(s, order=order))(
            np.arange(6))) == want
    assert _outcome(lambda: _set_shape(hnp, s)) == _outcome(lambda: _set_shape(np, s))


def test_the_texts():
    """NumPy's texts, spelled out (so NumPy's own are pinned too)."""
    for s, text in [((5, 5), "cannot reshape array of size 6 into shape (5,5)"),
                    ((5, -1), "cannot reshape array of size 6 into shape (5,newaxis)"),
                    ((-1, 4), "cannot reshape array of size 6 into shape (4)"),
                    (5, "cannot reshape array of size 6 into shape (5,)"),
                    ((-1, -1), "can only specify one unknown dimension")]:
        for mod in (np, hnp):
            with pytest.raises(ValueError) as e:
                mod.arange(6).reshape(s)
            assert str(e.value) == text
