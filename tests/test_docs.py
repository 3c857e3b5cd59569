"""The documentation site: Sphinx builds it without a warning, and it works in a browser.

The site is built once for this module, as `make docs` builds it (nitpicky cross-references; here without -W, so
that every warning is listed and the site is still there to check), into a temporary folder. Then:

* no warnings: each is listed, grouped by the file it comes from (most come from docstrings);
* every internal link resolves: every relative href/src of every HTML page names an existing file, and every
  #anchor exists in its target page; the pages load nothing from the network;
* Debian's headless Chromium, driven over the DevTools protocol on 127.0.0.1 (test_reports.py's launcher and
  client), opens a sample of pages, served over HTTP on 127.0.0.1 (landing, guide, API, notebooks, performance,
  changelog): main content rendered, every <img> decoded (naturalWidth > 0), math typeset, and no console error or
  warning, uncaught exception or failed load.

Skipped, saying why, when Sphinx and its extensions are not installed.
"""
from __future__ import annotations

import collections
import functools
import http.server
import importlib.util
import os
import re
import subprocess
import threading
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

# one Chromium launcher and DevTools client for the browser tests, test_reports.py's: an asyncio tab that collects
# console errors and warnings, uncaught exceptions and failed loads
from test_reports import CHROMIUM, _in_page, browser  # noqa: F401  (browser: a fixture, used through `chromium`)

# the notebooks' FAST runs, which the site shows (test_notebooks.py's: each notebook runs once for both modules)
from test_notebooks import DOCS_COPIES, NOTEBOOKS, fast_run

# one xdist worker builds the site once and runs every test on it: the worker that runs the notebooks
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("notebooks")]
ROOT = Path(__file__).resolve().parents[1]
VENV_PY = ROOT / ".venv" / "bin" / "python"
SPHINX_MODULES = {"sphinx": "python3-sphinx", "numpydoc": "python3-numpydoc",
                  "pydata_sphinx_theme": "python3-pydata-sphinx-theme", "nbsphinx": "python3-nbsphinx",
                  "myst_parser": "python3-myst-parser"}
# pages opened in the browser: one of each kind
SAMPLE = ["index.html", "generated/cli.html", "guide/loop.html", "guide/sortsearch.html", "guide/choosing.html",
          "api.html",
          "generated/effstats.sortsearch.html", "generated/effstats.sortsearch.SortSearch.html",
          "generated/effstats.ResponseMatrix.html", "notebooks/tour.html", "notebooks/sortsearch.html",
          "performance.html", "changelog.html"]


def _docs_notebooks():
    spec = importlib.util.spec_from_file_location("docs_notebooks", ROOT / "scripts" / "docs_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    missing = [f"{m} ({deb})" for m, deb in SPHINX_MODULES.items() if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the docs need {', '.join(missing)}: make setup installs them on Debian, "
                    "elsewhere pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("docs")
    # as make docs: the notebooks staged with outputs first (FAST runs where make demo has not run them); the FAST
    # runs the script would make are test_notebooks.py's (a notebook that fails is left to the script, which says so)
    stale = set(_docs_notebooks().choose()[1])
    for path in NOTEBOOKS:
        if path.stem in stale:
            try:
                nb, _ = fast_run(path, tmp_path_factory)
            except Exception:
                continue
            DOCS_COPIES.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, DOCS_COPIES / path.name)
    staged = subprocess.run([str(VENV_PY), "scripts/docs_notebooks.py"], cwd=ROOT, capture_output=True, text=True,
                            timeout=1800)
    assert staged.returncode == 0, f"scripts/docs_notebooks.py failed:\n{staged.stdout[-2000:]}{staged.stderr[-4000:]}"
    # one process, as make docs builds it: the suite's other xdist worker has the other core, and parallel reading
    # (-j 2: forked readers whose environments are pickled back) costs more CPU time for the same site
    cmd = [str(VENV_PY), "-m", "sphinx", "-b", "html", "-n", "--keep-going", "-q",
           "-d", str(out / "doctrees"), "-w", str(out / "warnings.txt"), "docs", str(out / "html")]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert (out / "html" / "index.html").is_file(), f"sphinx-build failed:\n{proc.stderr[-4000:]}"
    return out


def _warnings_by_file(text: str) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = collections.defaultdict(list)
    for line in text.splitlines():
        if not re.search(r"\b(WARNING|ERROR|CRITICAL|SEVERE)\b", line):
            continue  # continuation lines of a multi-line message
        m = re.match(r"(/[^:]+?\.(?:py|rst|md|ipynb))", line)
        where = os.path.relpath(m.group(1), ROOT) if m else "(no file)"
        groups[where].append(line.replace(str(ROOT) + "/", ""))
    return dict(groups)


def test_build_has_no_warnings(site):
    groups = _warnings_by_file((site / "warnings.txt").read_text())
    report = "\n".join(f"{where} ({len(lines)}):\n  " + "\n  ".join(lines) for where, lines in sorted(groups.items()))
    assert not groups, f"{sum(map(len, groups.values()))} Sphinx warnings (make docs fails on them):\n{report}"


def test_warnings_are_grouped_by_the_file_they_come_from():
    text = (f"{ROOT}/effstats/a.py:docstring of effstats.a.f:3: WARNING: py:class reference target not found: B\n"
            "  a continuation line\n"
            f"{ROOT}/docs/guide/loop.rst:12: ERROR: Unknown target name: \"x\".\n"
            f"{ROOT}/effstats/a.py:docstring of effstats.a.g:1: WARNING: Inline emphasis start-string without end\n"
            "WARNING: a config value\n")
    groups = _warnings_by_file(text)
    assert {k: len(v) for k, v in groups.items()} == {"effstats/a.py": 2, "docs/guide/loop.rst": 1, "(no file)": 1}
    assert groups["docs/guide/loop.rst"] == ['docs/guide/loop.rst:12: ERROR: Unknown target name: "x".']


class _Links(HTMLParser):
    """The ids of a page and every URL it refers to (href, src), with the tag that refers to it."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.refs: list[tuple[str, str, str]] = []  # (tag, attribute, url)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key) and (key == "id" or tag == "a"):
                self.ids.add(a[key])
        for key in ("href", "src"):
            if a.get(key) is not None:
                self.refs.append((tag, key, a[key]))


def _parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_internal_links_resolve(site):
    html = site / "html"
    # _static holds the theme's assets (among them a Jinja template named .html), not pages
    pages = {p: _parse(p) for p in html.rglob("*.html") if "_static" not in p.relative_to(html).parts}
    assert len(pages) > 50, f"only {len(pages)} pages"
    broken, remote = [], []
    for page, links in pages.items():
        for tag, key, url in links.refs:
            parts = urllib.parse.urlsplit(url)
            if parts.scheme in ("http", "https"):
                # the site works offline: it may link out, but loads nothing from the network
                if tag in ("script", "img", "iframe") or (tag == "link" and key == "href" and not url.endswith("/")
                                                          and re.search(r"\.(css|js)(\?|$)", parts.path)):
                    remote.append(f"{page.relative_to(html)}: <{tag} {key}={url!r}>")
                continue
            if parts.scheme or parts.netloc or url.startswith("//"):
                continue  # mailto:, data:, javascript:
            target = (page.parent / urllib.parse.unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(html)}: <{tag} {key}={url!r}>: no file {target}")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if urllib.parse.unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(html)}: <{tag} {key}={url!r}>: no #{parts.fragment} there")
    assert not broken, f"{len(broken)} broken internal links:\n" + "\n".join(sorted(broken)[:60])
    assert not remote, "pages load from the network:\n" + "\n".join(sorted(set(remote))[:30])


def test_every_sampled_page_exists(site):
    missing = [p for p in SAMPLE if not (site / "html" / p).is_file()]
    assert not missing, missing


@pytest.fixture(scope="module")
def chromium(request):
    """The DevTools port of a headless Chromium (test_reports.py's ``browser``), or a skip saying what is missing."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium; make setup installs it)")
    return request.getfixturevalue("browser")


@pytest.fixture(scope="module")
def served(site):
    """The site over HTTP on an ephemeral 127.0.0.1 port, as a web server or ``python -m http.server`` serves it.

    (Opened from file://, Chromium refuses the theme's preloaded icon fonts as cross-origin requests.)
    """

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=site / "html"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


_PAGE_STATE = """(() => {
  const main = document.querySelector("main") || document.querySelector("[role=main]") || document.body;
  const imgs = [...document.images].map(i => ({src: i.getAttribute("src"), ok: i.complete && i.naturalWidth > 0}));
  return {text: main.innerText.trim().length, imgs: imgs,
          math: document.querySelectorAll(".math").length, katex: document.querySelectorAll(".katex").length,
          h1: (document.querySelector("h1") || {innerText: ""}).innerText};
})()"""


def test_the_page_check_sees_a_broken_image_and_empty_content(chromium, tmp_path):
    # (test_reports.py checks that the tab's problems() sees console errors and exceptions)
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><h1>t</h1><main> </main><img src="missing.png"><img src="ok.svg"></body></html>')
    (tmp_path / "ok.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>')

    async def run(page):
        await page.open(bad.as_uri())
        return await page.js(_PAGE_STATE)

    state = _in_page(chromium, run)
    assert state["text"] == 0 and [(i["src"], i["ok"]) for i in state["imgs"]] == [("missing.png", False),
                                                                                  ("ok.svg", True)]


def test_pages_render_in_chromium(served, chromium):
    failures = []

    async def run(tab):
        states = {}
        for page in SAMPLE:
            await tab.open(f"{served}/{page}")
            states[page] = (await tab.js(_PAGE_STATE), tab.problems())
        return states

    states = _in_page(chromium, run)
    n_imgs = 0
    for page, (state, problems) in states.items():
        if state["text"] < 200:
            failures.append(f"{page}: main content has {state['text']} characters")
        if not state["h1"].strip():
            failures.append(f"{page}: no title")
        bad = [i["src"] for i in state["imgs"] if not i["ok"]]
        if bad:
            failures.append(f"{page}: images not shown: {bad}")
        n_imgs += len(state["imgs"])
        if state["math"] and not state["katex"]:
            failures.append(f"{page}: {state['math']} math elements, none typeset")
        failures += [f"{page}: {p}" for p in problems]
    assert not failures, "\n".join(failures)
    # the notebooks' figures are on their pages (executed copies: make demo's, else FAST runs made for the docs)
    assert len(states["notebooks/sortsearch.html"][0]["imgs"]) >= 2, states["notebooks/sortsearch.html"][0]["imgs"]
