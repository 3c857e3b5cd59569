"""The documentation site: Sphinx builds it without a warning, and it works in a browser.

The site is built once for this module, as `make docs` builds it (nitpicky cross-references; here without -W, so
that every warning is listed and the site is still there to check), into a temporary folder. Then:

* no warnings: each is listed, grouped by the file it comes from (most come from docstrings);
* every internal link resolves: every relative href/src of every HTML page names an existing file, and every
  #anchor exists in its target page; the pages load nothing from the network;
* Debian's headless Chromium, driven over the DevTools protocol on 127.0.0.1, opens a sample of pages (landing,
  guide, API, notebooks, performance, changelog): main content rendered, every <img> decoded (naturalWidth > 0),
  math typeset, and no console error, uncaught exception or failed load.

Skipped, saying why, when Sphinx and its extensions, Chromium or a websocket client are not installed.
"""
from __future__ import annotations

import collections
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

# one xdist worker builds the site once and runs every test on it
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("docs")]
ROOT = Path(__file__).resolve().parents[1]
VENV_PY = ROOT / ".venv" / "bin" / "python"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
SPHINX_MODULES = {"sphinx": "python3-sphinx", "numpydoc": "python3-numpydoc",
                  "pydata_sphinx_theme": "python3-pydata-sphinx-theme", "nbsphinx": "python3-nbsphinx",
                  "myst_parser": "python3-myst-parser"}
# pages opened in the browser: one of each kind
SAMPLE = ["index.html", "guide/loop.html", "guide/sortsearch.html", "guide/choosing.html", "api.html",
          "generated/effstats.sortsearch.html", "generated/effstats.sortsearch.SortSearch.html",
          "generated/effstats.ResponseMatrix.html", "notebooks/tour.html", "notebooks/sortsearch.html",
          "performance.html", "changelog.html"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    missing = [f"{m} ({deb})" for m, deb in SPHINX_MODULES.items() if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the docs need {', '.join(missing)}: make setup installs them on Debian, "
                    "elsewhere pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("docs")
    cmd = [str(VENV_PY), "-m", "sphinx", "-b", "html", "-n", "--keep-going", "-q", "-j", "2",
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


class _Tab:
    """One Chromium tab over the DevTools protocol (websocket-client); collects errors, exceptions, failed loads."""

    def __init__(self, ws):
        self.ws, self.next_id, self.events = ws, 0, []

    def send(self, method: str, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == self.next_id:
                assert "error" not in m, m["error"]
                return m["result"]
            self.events.append(m)

    def wait_event(self, method: str, timeout: float = 30):
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            assert time.monotonic() < deadline, f"no {method} in {timeout} s"
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            self.events.append(json.loads(self.ws.recv()))

    def js(self, expression: str):
        r = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in r, r["exceptionDetails"]
        return r["result"].get("value")

    def open(self, url: str):
        self.events.clear()
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")
        # let scripts that run after load (the theme, KaTeX) finish and log
        self.js("new Promise(r => setTimeout(r, 300))")

    def problems(self) -> list[str]:
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e.get("method") == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
                out.append(f"console.{p['type']}: {[a.get('value', a.get('description')) for a in p['args']]}")
            elif e.get("method") == "Runtime.exceptionThrown":
                out.append(f"exception: {p['exceptionDetails'].get('exception', {}).get('description')}")
            elif e.get("method") == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append(f"log error: {p['entry']['text']} {p['entry'].get('url', '')}")
            elif e.get("method") == "Network.loadingFailed":
                out.append(f"failed load: {p.get('errorText')}")
        return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium with DevTools on an ephemeral 127.0.0.1 port; yields the port."""
    if CHROMIUM is None:
        pytest.skip("no Chromium on PATH (Debian: apt-get install chromium; make setup installs it)")
    if importlib.util.find_spec("websocket") is None:
        pytest.skip("no websocket client (Debian: python3-websocket; pip: websocket-client)")
    profile = tmp_path_factory.mktemp("chromium-profile")
    cmd = [CHROMIUM, "--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
           "--allow-file-access-from-files", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
           f"--user-data-dir={profile}", "--window-size=1280,900", "about:blank"]
    if os.geteuid() == 0:
        cmd.insert(1, "--no-sandbox")  # Chromium's sandbox refuses to run as root
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            assert proc.poll() is None, f"chromium exited with {proc.returncode}"
            assert time.monotonic() < deadline, "chromium did not open its DevTools port in 30 s"
            time.sleep(0.2)
        yield int(port_file.read_text().split()[0])
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _in_tab(port: int, fn):
    """Run fn(_Tab) in a new tab (no message of an earlier page is replayed), then close the tab."""
    import websocket

    req = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
    with urllib.request.urlopen(req, timeout=10) as r:
        tab = json.load(r)
    ws = websocket.create_connection(tab["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
    try:
        return fn(_Tab(ws))
    finally:
        ws.close()
        urllib.request.urlopen(f"http://127.0.0.1:{port}/json/close/{tab['id']}", timeout=10).close()


_PAGE_STATE = """(() => {
  const main = document.querySelector("main") || document.querySelector("[role=main]") || document.body;
  const imgs = [...document.images].map(i => ({src: i.getAttribute("src"), ok: i.complete && i.naturalWidth > 0}));
  return {text: main.innerText.trim().length, imgs: imgs,
          math: document.querySelectorAll(".math").length, katex: document.querySelectorAll(".katex").length,
          h1: (document.querySelector("h1") || {innerText: ""}).innerText};
})()"""


def test_the_browser_check_sees_errors(browser, tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><main>text</main><img src="missing.png"><script>console.error("boom")</script>'
                   "</body></html>")

    def run(tab):
        tab.open(bad.as_uri())
        return tab.js(_PAGE_STATE), tab.problems()

    state, problems = _in_tab(browser, run)
    assert [i["ok"] for i in state["imgs"]] == [False]
    assert any("boom" in p for p in problems) and any("failed load" in p for p in problems), problems


def test_pages_render_in_chromium(site, browser):
    html = site / "html"
    failures = []

    def run(tab):
        states = {}
        for page in SAMPLE:
            tab.open((html / page).as_uri())
            states[page] = (tab.js(_PAGE_STATE), tab.problems())
        return states

    states = _in_tab(browser, run)
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
    # the notebooks' figures are on their pages
    assert len(states["notebooks/sortsearch.html"][0]["imgs"]) >= 2, states["notebooks/sortsearch.html"][0]["imgs"]
