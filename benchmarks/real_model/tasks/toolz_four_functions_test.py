"""Acceptance tests for toolz_four_functions; copied into the result only after the run."""

import itertools
from collections import OrderedDict

import toolz
import toolz.curried


def test_pairwise():
    assert list(toolz.pairwise([1, 2, 3])) == [(1, 2), (2, 3)]
    assert list(toolz.pairwise([])) == []
    assert list(toolz.pairwise([1])) == []
    assert list(toolz.take(2, toolz.pairwise(itertools.count()))) == [(0, 1), (1, 2)]
    assert toolz.itertoolz.pairwise is toolz.pairwise
    assert "pairwise" in toolz.itertoolz.__all__
    assert toolz.curried.pairwise is toolz.pairwise


def test_once():
    calls = []

    def f(x, y=0):
        """Doc of f."""
        calls.append((x, y))
        return x + y

    g = toolz.once(f)
    assert g(1, y=2) == 3
    assert g(10) == 3
    assert g() == 3
    assert calls == [(1, 2)]
    assert g.__name__ == "f"
    assert g.__doc__ == "Doc of f."
    assert "once" in toolz.functoolz.__all__
    assert toolz.curried.once is toolz.once


def test_select_keys():
    d = {"a": 1, "b": 2}
    assert toolz.select_keys(["a", "c"], d) == {"a": 1}
    assert d == {"a": 1, "b": 2}
    assert toolz.select_keys([], d) == {}
    r = toolz.select_keys(["b", "a"], d, factory=OrderedDict)
    assert isinstance(r, OrderedDict)
    assert dict(r) == {"a": 1, "b": 2}
    assert "select_keys" in toolz.dicttoolz.__all__
    assert toolz.curried.select_keys(["b"])(d) == {"b": 2}


def test_uniqueby():
    assert list(toolz.uniqueby(len, ["a", "bb", "c", "dd", "eee"])) == ["a", "bb", "eee"]
    assert list(toolz.uniqueby(lambda x: x % 3, [])) == []
    it = toolz.uniqueby(lambda x: x % 3, itertools.count())
    assert list(toolz.take(3, it)) == [0, 1, 2]
    assert "uniqueby" in toolz.recipes.__all__
    assert list(toolz.curried.uniqueby(len)(["x", "y", "zz"])) == ["x", "zz"]
