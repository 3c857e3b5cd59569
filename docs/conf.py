"""Sphinx configuration for the effstats documentation (``make docs``).

Everything comes from Debian's packages (python3-sphinx, python3-numpydoc, python3-pydata-sphinx-theme,
python3-nbsphinx, python3-myst-parser); elsewhere ``pip install -e '.[docs]'``. The build runs with ``-W
--keep-going`` and ``nitpicky = True``: every cross-reference to an effstats name must resolve.
"""
from __future__ import annotations

import gc
import re
import shutil
from pathlib import Path

import effstats

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

project = "effstats"
author = "the effstats authors"
copyright = "the effstats authors"
version = release = effstats.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "nbsphinx",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
nitpicky = True
default_role = "literal"  # a stray single-backtick span renders as code instead of a failed cross-reference

# -- API reference: autosummary writes one page per public name (scikit-learn's and statsmodels' layout) ------------
autosummary_generate = True
autosummary_imported_members = True
autosummary_ignore_module_all = False  # a module page lists exactly its __all__
autodoc_typehints = "none"  # the numpydoc Parameters section states the types; annotations would repeat them
autoclass_content = "class"

# numpydoc as scikit-learn configures it: the class page lists members through the template's autosummary tables,
# not numpydoc's own (which would duplicate them); parameter types become cross-references where they name a class
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = True
# Type fields link only the names known here ("all": other words, such as "array-like of shape (n_models, n_items)"
# or "int, default=100", stay text). numpydoc's built-in links (int -> python:int) need intersphinx, so they map to
# plain text; every public effstats class or function links by its full path, and a class also by its short name.
numpydoc_xref_ignore: set[str] = set()  # "all", set in setup(): Sphinx would warn that the default is a set
API_MODULES = [
    "effstats", "effstats.workflow", "effstats.responses", "effstats.splits", "effstats.datasets",
    "effstats.sortsearch", "effstats.disco", "effstats.irt", "effstats.reliability", "effstats.sequential",
    "effstats.sequential.native", "effstats.sequential.gsdesign", "effstats.sequential.validation", "effstats.metrics",
    "effstats.bitpack", "effstats.distributed", "effstats.rbridge", "effstats.exceptions", "effstats.cli",
]


def _xref_aliases() -> dict[str, str]:
    import importlib
    import inspect

    from numpydoc.xref import DEFAULT_LINKS

    aliases = {key: key for key in DEFAULT_LINKS}
    by_short: dict[str, dict[int, list[str]]] = {}
    for modname in API_MODULES:
        module = importlib.import_module(modname)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isroutine(obj):
                full = f"{modname}.{name}"
                aliases[full] = f":obj:`{full}`"
                if inspect.isclass(obj):
                    by_short.setdefault(name, {}).setdefault(id(obj), []).append(full)
    for name, objects in by_short.items():
        if len(objects) == 1 and name not in aliases:  # one class behind the name: link its shortest public path
            aliases[name] = min(next(iter(objects.values())), key=len)
    return aliases


numpydoc_xref_aliases = _xref_aliases()

# -- names outside effstats ----------------------------------------------------------------------------------------
# intersphinx needs the network, so external targets cannot resolve offline. They are listed here, and only here:
# an effstats name must never be added (a broken effstats reference is a bug in a docstring).
EXTERNAL_PREFIXES = (
    "numpy", "np", "pandas", "pd", "scipy", "sklearn", "matplotlib", "plt", "dask", "distributed", "zarr", "rpy2",
    "typing", "collections", "os", "pathlib", "concurrent", "argparse", "json", "io", "datetime", "enum", "abc",
    "dataclasses", "contextlib", "warnings", "tqdm", "IPython", "threadpoolctl", "statsmodels", "pyarrow",
)
EXTERNAL_NAMES = (
    # Python built-ins and standard-library names, written bare in type fields
    "None", "True", "False", "bool", "int", "float", "complex", "str", "bytes", "dict", "list", "tuple", "set",
    "frozenset", "object", "type", "callable", "Callable", "Iterable", "Iterator", "Sequence", "Mapping", "Generator",
    "Path", "PathLike", "Exception", "ValueError", "TypeError", "KeyError", "RuntimeError", "FileNotFoundError",
    "ImportError", "Warning", "UserWarning", "RuntimeWarning", "OSError", "NotImplementedError", "ArithmeticError",
    "Any", "Literal", "Optional", "Union", "slice", "range", "iterable", "sequence", "mapping", "generator",
    "file-like", "path-like", "os.PathLike", "Enum", "NamedTuple", "namedtuple", "dataclass", "Counter",
    # numpy / pandas / scipy / scikit-learn / dask names as docstrings write them
    "ndarray", "array", "array-like", "array_like", "ArrayLike", "boolean", "string", "numpy", "contextmanager",
    "DataFrame", "Series", "Index", "MultiIndex",
    "Generator", "RandomState", "SeedSequence", "BitGenerator", "dtype", "Axes", "Figure", "Client", "Future",
    "Delayed", "BaseEstimator", "RegressorMixin", "ClassifierMixin", "Executor", "RObject", "Timestamp",
    "scalar", "matrix", "random_state", "rng",
)
nitpick_ignore = [(role, name) for role in ("py:class", "py:obj", "py:data", "py:exc", "py:func", "py:meth", "py:attr",
                                            "py:mod") for name in EXTERNAL_NAMES]
nitpick_ignore_regex = [
    (r"py:.*", rf"({'|'.join(re.escape(p) for p in EXTERNAL_PREFIXES)})(\..+)?"),
    # numpydoc's type phrases: shapes "(n_models, n_items)", defaults "default=100", options "{'a', 'b'}", literals
    (r"py:.*", r"\(.*|.*\)|default[= ].*|\{.*|.*\}|'.*'|\".*\"|[-+]?\d.*|.*=.*"),
]

# -- notebooks (nbsphinx): executed copies, staged into docs/notebooks by scripts/docs_notebooks.py (make docs runs
# it): make demo's full run when it is newer than the notebook, else a FAST-mode run made for the docs
nbsphinx_execute = "never"
nbsphinx_allow_errors = False


def _batch_notebook_markdown() -> None:
    """nbsphinx converts each notebook's Markdown in one pandoc run instead of two a text (``docs/nb_markdown.py``:
    the same reST for every text; starting pandoc is most of what a text's own conversion costs)."""
    import importlib.util

    import nbsphinx

    spec = importlib.util.spec_from_file_location("nb_markdown", DOCS / "nb_markdown.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.install(nbsphinx)


_batch_notebook_markdown()
nbsphinx_prolog = """
.. note:: This page is the notebook ``notebooks/{{ env.docname.split('/')[-1] }}.ipynb`` with its outputs: those of
   its last full run (``make demo``) when the site was built after one, else of a quick run on smaller settings
   (FAST mode), whose numbers are rougher. Run it yourself with ``make notebook`` (Jupyter) or ``make demo``.
"""

# -- the site --------------------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"effstats {release}"
html_favicon = "_static/favicon.svg"  # without one, browsers ask the server for /favicon.ico
html_static_path = ["_static"]
# math: KaTeX from Debian's libjs-katex when installed (copied into _static at build time, so pages load nothing from
# the network), else Sphinx's default MathJax from its CDN
KATEX = Path("/usr/share/javascript/katex")
if KATEX.is_dir():
    mathjax_path = "katex-render.js"
    mathjax3_config = None
    # nbsphinx would load require.js and the widget manager from a CDN: no notebook here has widget outputs
    nbsphinx_requirejs_path = ""
    nbsphinx_widgets_path = ""
# the sidebar shows the current page's branch of its section, not every page of it: the theme's remedy for its per-page
# navigation, whose cost grows with the pages squared (most of a build of the API pages otherwise)
html_theme_options = {"show_prev_next": True, "navigation_depth": 2, "collapse_navigation": True}
html_show_sourcelink = False
html_copy_source = False
myst_heading_anchors = 3


def _check_notebooks(app) -> None:
    """Every notebook is staged in ``docs/notebooks`` with outputs (untracked: ``docs/.gitignore``); a warning (an
    error under ``make docs``' -W) otherwise, so that no page is published without its figures."""
    import json

    from sphinx.util import logging

    log = logging.getLogger(__name__)
    for src in sorted((ROOT / "notebooks").glob("*.ipynb")):
        staged = DOCS / "notebooks" / src.name
        cells = json.loads(staged.read_text())["cells"] if staged.is_file() else []
        if not any(c.get("outputs") for c in cells if c["cell_type"] == "code"):
            log.warning(f"notebooks/{src.name}: no executed copy is staged in docs/notebooks; run "
                        "`.venv/bin/python scripts/docs_notebooks.py` (make docs runs it: it executes the notebooks "
                        "in FAST mode where make demo has not run them)")


def _xref_ignore_all(app) -> None:
    app.config.numpydoc_xref_ignore = "all"


def _stage_katex(app) -> None:
    if KATEX.is_dir() and not (DOCS / "_static" / "katex" / "katex.min.js").is_file():
        shutil.copytree(KATEX, DOCS / "_static" / "katex", dirs_exist_ok=True)


def _write_cli_page(app) -> None:
    """``generated/cli.rst``, the command-line reference, from the ``effstats`` parsers (``docs/cli_page.py``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("cli_page", DOCS / "cli_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = DOCS / "generated" / "cli.rst"
    page.parent.mkdir(exist_ok=True)
    text = module.cli_rst()
    if not page.is_file() or page.read_text() != text:  # unchanged: Sphinx need not read it again
        page.write_text(text)


def _freeze_heap(app, *args) -> None:
    """Keep what is alive now out of the garbage collector's full passes (``gc.freeze``), and make those passes rarer.

    Sphinx holds its whole environment (every page's doctree and table of contents, the imported modules) until the
    build ends, and each full collection walks all of it again, dozens of times while the pages are written out, for
    nothing: none of it can be garbage before the end. Run after the other set-up steps and once the pages are read;
    the site is the same."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(700, 10, 100)  # a full pass after 100 middle-generation ones (CPython's default: 10)


def setup(app):
    app.connect("builder-inited", _write_cli_page)
    # after Sphinx's type checks of the config values (the last when the theme loads), before numpydoc reads it
    app.connect("builder-inited", _xref_ignore_all)
    app.connect("builder-inited", _check_notebooks)
    app.connect("builder-inited", _stage_katex)
    app.connect("builder-inited", _freeze_heap)  # last: what the steps above loaded is frozen too
    app.connect("env-updated", _freeze_heap)
