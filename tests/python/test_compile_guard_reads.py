"""State a compiled function reads in ways its code does not spell as an
attribute is guarded: a functools.partial's function, arguments and
keywords; a plain function's own attributes (`helper.scale`); an
instance attribute that shadows its class's method or class attribute
after the trace; and attributes read by a name held in a global, a closure
cell or an argument (`getattr(o, NAME)`) or by an operator.attrgetter /
methodcaller object.  Each change between calls gives eager's answer (a
retrace), never the traced value."""

import functools
import operator

import numpy as np

import hop


def _agree(fn, compiled, *args):
    want, got = fn(*args), compiled(*args)
    assert type(got) is type(want)
    np.testing.assert_array_equal(got, want)


def scaled(x, a, b=1.0):
    return x * a + b


P = functools.partial(scaled, b=3.0)


def calls_partial(x):
    return P(x, 2.0)


def test_a_partials_keywords_arguments_and_function_are_guarded():
    global P
    cf = hop.compile(calls_partial)
    x = np.arange(3.0)
    _agree(calls_partial, cf, x)
    P.keywords["b"] = 10.0
    _agree(calls_partial, cf, x)
    P = functools.partial(scaled, 4.0)  # (a new partial: positional a, then x)
    _agree(calls_partial, cf, 2.0)
    assert cf.recompiles == 2
    guards = cf.explain()
    assert "global 'P'.keywords" in guards


def helper(x):
    return x + 1


helper.scale = 2.0


def reads_function_attribute(x):
    return helper(x) * helper.scale


def test_a_functions_own_attribute_is_guarded():
    cf = hop.compile(reads_function_attribute)
    x = np.arange(3.0)
    _agree(reads_function_attribute, cf, x)
    helper.scale = 5.0
    _agree(reads_function_attribute, cf, x)
    _agree(reads_function_attribute, cf, x)
    assert cf.recompiles == 1
    assert "global 'helper'.scale == 5.0 (float)" in cf.explain()


class K:
    k = 2.0

    def apply(self, x):
        return x * self.k


def calls_method(x):
    return OBJ.apply(x)


OBJ = K()


def test_an_instance_attribute_shadowing_the_class_method_or_attribute_retraces():
    global OBJ
    OBJ = K()
    cf = hop.compile(calls_method)
    x = np.arange(3.0)
    _agree(calls_method, cf, x)
    assert "global 'OBJ'.__dict__ holds none of apply, k (its class's answer)" in cf.explain()
    OBJ.k = 7.0  # the object's own k, over the class's
    _agree(calls_method, cf, x)
    OBJ.apply = lambda x: x * 100  # the object's own method, over the class's
    _agree(calls_method, cf, x)
    _agree(calls_method, cf, x)
    assert cf.recompiles == 2


class Slotted:
    __slots__ = ("w",)


class WithProperty:
    @property
    def w(self):
        return 3.0


def test_a_property_is_not_a_shadowable_name():
    o = WithProperty()

    def f(x):
        return x * o.w
    cf = hop.compile(f)
    _agree(f, cf, np.arange(3.0))
    assert "holds none of" not in cf.explain()


class O:
    pass


HOLDER = O()
HOLDER.w = 2.0
NAME = "w"
AG = operator.attrgetter("w")
MC = operator.methodcaller("count", 1.0)
LIST = [1.0, 2.0]


def getattr_global_name(x):
    return x * getattr(HOLDER, NAME)


def getattr_argument_name(x, name):
    return x * getattr(HOLDER, name)


def attrgetter_global(x):
    return x * AG(HOLDER)


def methodcaller_global(x):
    return x * MC(LIST)


def test_attributes_read_by_a_name_in_a_value_are_guarded():
    fns = [(getattr_global_name, ()), (getattr_argument_name, ("w",)), (attrgetter_global, ())]
    compiled = [hop.compile(f) for f, _ in fns]
    x = np.arange(3.0)
    for value in (2.0, 5.0, 5.0):
        HOLDER.w = value
        for (f, extra), cf in zip(fns, compiled):
            _agree(f, cf, x, *extra)
    assert [cf.recompiles for cf in compiled] == [1, 1, 1]


def test_a_methodcallers_method_reads_its_list():
    cf = hop.compile(methodcaller_global)
    x = np.arange(3.0)
    _agree(methodcaller_global, cf, x)
    LIST.append(1.0)
    _agree(methodcaller_global, cf, x)


@hop.compile
def decorated(x):
    return x * decorated.scale


decorated.scale = 2.0


def test_an_attribute_the_user_set_on_a_compiled_function_is_guarded():
    x = np.arange(3.0)
    np.testing.assert_array_equal(decorated(x), x * 2.0)
    decorated.scale = 5.0
    np.testing.assert_array_equal(decorated(x), x * 5.0)
    assert decorated.recompiles == 1
    assert "global 'decorated'.scale == 5.0 (float)" in decorated.explain()


def test_a_compiled_functions_own_public_attributes_are_all_hops_state():
    # (what _hop_state leaves out, the guards would read as the user's)
    cf = hop.compile(lambda x: x + 1)
    cf(np.ones(2))
    public = {n for n in vars(cf) if not n.startswith("_")}
    assert public <= type(cf)._hop_state, public - type(cf)._hop_state
