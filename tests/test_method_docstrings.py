"""Every public method of every public class is documented on its class's page: it has a docstring, and one of its
own where it overrides a base class's method (numpydoc would otherwise show the base's text, which describes the
base's behaviour, not the override's). The public classes are those in the ``__all__`` of the modules the API
reference documents (``API_MODULES`` in ``docs/conf.py``)."""
from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest


def _api_modules() -> list[str]:
    conf = Path(__file__).resolve().parents[1] / "docs" / "conf.py"
    for node in ast.parse(conf.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "API_MODULES" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("docs/conf.py defines no API_MODULES")


def _public_classes() -> list[type]:
    out: dict[str, type] = {}
    for modname in _api_modules():
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isclass(obj):
                out.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return [out[k] for k in sorted(out)]


def _function(raw):
    """The function behind a class attribute (method, property, classmethod, staticmethod), or None."""
    if isinstance(raw, property):
        return raw.fget
    if isinstance(raw, (classmethod, staticmethod)):
        return raw.__func__
    return raw if inspect.isfunction(raw) else None


def _members(cls: type):
    """(name, defining class, function) of the public methods and properties effstats defines for ``cls``."""
    for name in dir(cls):
        if name.startswith("_") and name != "__call__":
            continue
        owner = next((c for c in cls.__mro__ if name in vars(c)), None)
        if owner is None or not owner.__module__.startswith("effstats"):
            continue  # numpy's, pandas', scikit-learn's, the built-ins'
        f = _function(vars(owner)[name])
        if f is not None:
            yield name, owner, f


CLASSES = _public_classes()


def test_the_public_classes_are_found():
    names = {c.__name__ for c in CLASSES}
    assert {"DISCO", "MethodChooser", "SortSearch", "Efficacy", "ResponseMatrix"} <= names, sorted(names)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_public_method_has_a_docstring_of_its_own_where_it_overrides(cls):
    undocumented, inherited = [], []
    for name, owner, f in _members(cls):
        if not (f.__doc__ or "").strip():
            overrides = any(name in vars(base) for base in owner.__mro__[1:])
            (inherited if overrides else undocumented).append(f"{owner.__name__}.{name}")
    assert not undocumented, f"public methods without a docstring: {sorted(set(undocumented))}"
    assert not inherited, (f"overrides showing their base's docstring (write one of their own, numpy-style, "
                           f"saying what this class does): {sorted(set(inherited))}")
