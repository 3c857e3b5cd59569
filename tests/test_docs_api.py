"""The API reference covers every public name, and each public class and function has the sections a user reads.

The API reference (``docs/api.rst``) generates one page per module of ``API_MODULES`` in ``docs/conf.py`` and, from
each module's ``__all__``, one page per class and function. Checked here, without building the site:

* ``docs/api.rst`` lists exactly the modules of ``API_MODULES``, and every public subpackage of effstats (a package
  whose name has no leading underscore) is one of them, so that no ``__all__`` goes without pages;
* every public class and function (in an ``__all__`` of those modules) has a numpy-style docstring with
  ``Examples`` holding ``>>>`` lines (run as doctests by ``make test``) and ``See Also``; a function that returns
  something has ``Returns`` (or ``Yields``); a class whose constructor takes arguments documents them under
  ``Parameters`` or, for a result, ``Attributes``; an exception or warning class needs neither.

The sections are found as numpydoc finds them: a title line followed by a line of dashes as long as the title.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import effstats

# docs/conf.py's API_MODULES, read without importing Sphinx's configuration
from test_method_docstrings import _api_modules

ROOT = Path(__file__).resolve().parents[1]


def _autosummary_entries(rst: str) -> list[str]:
    """The entries of the first ``.. autosummary::`` directive of a reST text (its options skipped)."""
    lines = rst.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == ".. autosummary::")
    entries = []
    for line in lines[start + 1:]:
        if line.strip() and not line.startswith((" ", "\t")):
            break  # the directive's body ends at the first line that is not indented
        text = line.strip()
        if text and not text.startswith(":"):
            entries.append(text)
    return entries


def _sections(doc: str) -> set[str]:
    """The numpydoc section titles of a docstring (a line underlined by as many dashes)."""
    lines = doc.splitlines()
    return {a.strip() for a, b in zip(lines, lines[1:])
            if a.strip() and re.fullmatch(r"-+", b.strip()) and len(b.strip()) == len(a.strip())}


def _public_objects() -> dict[str, object]:
    """Each public class and function once, under the first public path it has in ``API_MODULES``' order."""
    out: dict[str, object] = {}
    seen: set[int] = set()
    for modname in _api_modules():
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if (inspect.isclass(obj) or inspect.isroutine(obj)) and id(obj) not in seen:
                seen.add(id(obj))
                out[f"{modname}.{name}"] = obj
    return out


OBJECTS = _public_objects()


def _missing_sections(obj) -> list[str]:
    doc = inspect.getdoc(obj) or ""
    found = _sections(doc)
    missing = []
    examples = doc.split("Examples\n--------", 1)
    if "Examples" not in found or ">>>" not in examples[-1]:
        missing.append("Examples with >>> lines")
    if "See Also" not in found:
        missing.append("See Also")
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return missing
        try:
            params = [p for p in inspect.signature(obj).parameters.values()
                      if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        except (TypeError, ValueError):
            params = []
        if params and not found & {"Parameters", "Attributes"}:
            missing.append("Parameters (or Attributes)")
    else:
        returns = inspect.signature(obj).return_annotation
        if returns not in (None, "None") and not found & {"Returns", "Yields"}:
            missing.append("Returns")
    return missing


def test_api_reference_lists_the_api_modules():
    listed = _autosummary_entries((ROOT / "docs" / "api.rst").read_text())
    assert listed == _api_modules(), ("docs/api.rst's autosummary and docs/conf.py's API_MODULES differ: "
                                      f"only in api.rst {sorted(set(listed) - set(_api_modules()))}, only in "
                                      f"API_MODULES {sorted(set(_api_modules()) - set(listed))}")


def test_every_public_subpackage_is_in_the_api_reference():
    packages = [m.name for m in pkgutil.walk_packages(effstats.__path__, "effstats.")
                if m.ispkg and not any(part.startswith("_") for part in m.name.split(".")[1:])]
    assert packages, "no subpackage found"
    missing = sorted(set(packages) - set(_api_modules()))
    assert not missing, f"public subpackages without a page in the API reference (API_MODULES): {missing}"


def test_the_public_objects_are_found():
    names = {name.rsplit(".", 1)[1] for name in OBJECTS}
    assert {"ResponseMatrix", "SortSearch", "AIPW", "dior", "plan", "select", "estimate"} <= names
    assert len(OBJECTS) > 150, len(OBJECTS)


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_public_docstring_has_the_sections_a_user_reads(name):
    missing = _missing_sections(OBJECTS[name])
    assert not missing, f"{name}'s docstring has no {', '.join(missing)}"


def _undocumented(x: int) -> int:
    """Double ``x``."""
    return 2 * x


class _Result:
    """A result.

    Attributes
    ----------
    x : int
        A value.

    See Also
    --------
    _undocumented : A function.

    Examples
    --------
    >>> _Result(1).x
    1
    """

    def __init__(self, x):
        self.x = x


class _NoExample:
    """A class whose parameters are documented, without an example.

    Parameters
    ----------
    x : int
        A value.

    See Also
    --------
    _Result : A result.

    Examples
    --------
    See the user guide.
    """

    def __init__(self, x):
        self.x = x


def test_the_checks_find_what_is_missing():
    assert _missing_sections(_undocumented) == ["Examples with >>> lines", "See Also", "Returns"]
    assert _missing_sections(_Result) == []
    assert _missing_sections(_NoExample) == ["Examples with >>> lines"]
    assert _sections("A.\n\nNotes\n-----\ntext\n\nSee Also\n--------\nf\n\nTable\n---\n") == {"Notes", "See Also"}
    assert _autosummary_entries(".. x:\n\n.. autosummary::\n   :toctree: generated\n\n   a\n   a.b\n\nText\n") == [
        "a", "a.b"]
