"""Every public constant is documented where it is defined (a ``#:`` comment, which the API reference shows) with
Examples that run: pytest's doctest collection does not see comments, so they run here."""
import doctest
import importlib
import inspect
import sys

import pytest
from sphinx.pycode import ModuleAnalyzer


API_MODULES = ["effstats", "effstats.workflow", "effstats.responses", "effstats.splits", "effstats.datasets",
               "effstats.sortsearch", "effstats.disco", "effstats.irt", "effstats.reliability", "effstats.sequential",
               "effstats.sequential.native", "effstats.sequential.gsdesign", "effstats.sequential.validation",
               "effstats.metrics", "effstats.bitpack", "effstats.distributed", "effstats.rbridge",
               "effstats.exceptions", "effstats.cli"]


def _constants():
    seen = set()
    for modname in API_MODULES:
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj) or (modname, name) in seen:
                continue
            seen.add((modname, name))
            yield modname, name


def _doc_comment(modname: str, name: str) -> str:
    """The ``#:`` comment of ``name`` where it is defined: the public module or a module of its package."""
    package = modname if hasattr(importlib.import_module(modname), "__path__") else modname.rsplit(".", 1)[0]
    loaded = sorted(m for m in sys.modules if m.startswith(package + "."))
    for source in [modname] + loaded:
        attrs = ModuleAnalyzer.for_module(source).find_attr_docs()
        if ("", name) in attrs:
            return "\n".join(attrs[("", name)])
    return ""


CONSTANTS = list(_constants())


def test_the_public_constants_are_found():
    assert len(CONSTANTS) >= 6, CONSTANTS


@pytest.mark.parametrize("modname, name", CONSTANTS, ids=[f"{m}.{n}" for m, n in CONSTANTS])
def test_constant_has_a_doc_comment_with_examples_that_run(modname, name):
    doc = _doc_comment(modname, name)
    assert doc.strip(), f"{modname}.{name}: no #: comment where it is defined"
    assert "Examples\n--------" in doc, f"{modname}.{name}: its #: comment has no Examples section"
    test = doctest.DocTestParser().get_doctest(doc, {}, f"{modname}.{name}", None, 0)
    assert test.examples, f"{modname}.{name}: Examples without >>> lines"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0, f"{modname}.{name}: {runner.failures} of its examples failed (output above)"
