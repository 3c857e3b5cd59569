"""Notebooks become HTML reports that render in a real browser, as R Markdown's knit does.

tour.ipynb runs in FAST mode through scripts/run_notebooks.py (test_notebooks.py's run: each notebook runs once for
the modules that use it), scripts/render_reports.py renders it, and Debian's
headless Chromium opens the report over the DevTools protocol (on 127.0.0.1): the page must load with no console
error, no uncaught exception and no failed request (it is self-contained), show its figures (decoded <img> with
data: URIs whose screenshots are not blank), fold the code and unfold it with "show all code", and typeset math.
"""
from __future__ import annotations

import asyncio
import base64
import gc
import io
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
import warnings
from pathlib import Path

import nbformat
import numpy as np
import pytest
from PIL import Image
from tornado.websocket import websocket_connect

# the notebooks' FAST runs through the runner's command line (test_notebooks.py's: one run of tour for both modules)
from test_notebooks import NOTEBOOKS, fast_run_record, needs_data

# one xdist worker runs this module, so its module-scoped fixtures (a browser, a rendered report) start once: the
# worker that runs the notebooks
pytestmark = [pytest.mark.xdist_group("notebooks"), pytest.mark.slow]  # a notebook runs, then renders in Chromium
ROOT = Path(__file__).resolve().parents[1]
VENV_PY = ROOT / ".venv" / "bin" / "python"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"  # Debian's, installed by make setup


class Page:
    """One Chromium tab driven over the DevTools protocol; collects console errors, exceptions and failed loads."""

    def __init__(self, ws):
        self.ws, self.ids, self.events = ws, itertools.count(1), []

    async def send(self, method: str, **params):
        i = next(self.ids)
        await self.ws.write_message(json.dumps({"id": i, "method": method, "params": params}))
        while True:
            m = json.loads(await asyncio.wait_for(self.ws.read_message(), 30))
            if m.get("id") == i:
                assert "error" not in m, m["error"]
                return m["result"]
            self.events.append(m)

    async def wait_event(self, method: str, timeout: float = 30):
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            m = json.loads(await asyncio.wait_for(self.ws.read_message(), max(0.1, deadline - time.monotonic())))
            self.events.append(m)

    async def js(self, expression: str):
        r = await self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in r, r["exceptionDetails"]
        return r["result"].get("value")

    async def open(self, url: str):
        self.events.clear()
        for domain in ("Page", "Runtime", "Log", "Network"):
            await self.send(f"{domain}.enable")
        await self.send("Page.navigate", url=url)
        await self.wait_event("Page.loadEventFired")
        await self.js("new Promise(r => setTimeout(r, 300))")  # let late scripts (KaTeX) run and log

    def problems(self) -> list[str]:
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e.get("method") == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert", "warning"):
                out.append(f"console.{p['type']}: {[a.get('value', a.get('description')) for a in p['args']]}")
            elif e.get("method") == "Runtime.exceptionThrown":
                out.append(f"exception: {p['exceptionDetails'].get('exception', {}).get('description')}")
            elif e.get("method") == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
                out.append(f"log {p['entry']['level']}: {p['entry']['text']} {p['entry'].get('url', '')}")
            elif e.get("method") == "Network.loadingFailed":
                out.append(f"failed load: {p.get('errorText')}")
        return out

    async def screenshot(self, x: float, y: float, w: float, h: float) -> np.ndarray:
        r = await self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                            clip={"x": x, "y": y, "width": w, "height": h, "scale": 1})
        return np.asarray(Image.open(io.BytesIO(base64.b64decode(r["data"]))).convert("RGB"))


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium with DevTools on an ephemeral 127.0.0.1 port; yields the port."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    cmd = [CHROMIUM, "--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
           "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", f"--user-data-dir={profile}",
           "--window-size=1280,900", "--hide-scrollbars", "about:blank"]
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


async def close_websocket(ws, timeout: float = 5) -> None:
    """Close a websocket and wait for the peer's closing frame: closed only from our side, its socket stays open until
    a timer of the event loop aborts it, and ``asyncio.run`` ends first, which leaves the socket to the garbage
    collector (a ResourceWarning in whichever later test the collection happens)."""
    ws.close()
    try:
        while await asyncio.wait_for(ws.read_message(), timeout) is not None:
            pass
    except asyncio.TimeoutError:
        ws.protocol.stream.close()


def _in_page(port: int, coro_fn):
    """Run coro_fn(Page) in a new tab (so no message of an earlier page is replayed), then close the tab."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
    with urllib.request.urlopen(req, timeout=10) as r:
        tab = json.load(r)

    async def main():
        ws = await websocket_connect(tab["webSocketDebuggerUrl"], max_message_size=256 * 1024 * 1024)
        try:
            return await coro_fn(Page(ws))
        finally:
            await close_websocket(ws)

    try:
        return asyncio.run(main())
    finally:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/json/close/{tab['id']}", timeout=10).close()


def test_the_browser_check_sees_errors(browser, tmp_path):
    # the check below is only worth something if it catches a broken page
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><script>console.error("boom")</script><img src="missing.png">'
                   '<script>undefined_function()</script></body></html>')

    async def run(page):
        await page.open(bad.as_uri())
        return page.problems()

    problems = _in_page(browser, run)
    assert any("boom" in p for p in problems)
    assert any("undefined_function" in p for p in problems)
    assert any("failed load" in p or "missing.png" in p for p in problems)


def test_a_page_leaves_no_socket_to_the_garbage_collector(browser, tmp_path):
    page_file = tmp_path / "page.html"
    page_file.write_text("<html><body><p>one page</p></body></html>")

    async def run(page):
        await page.open(page_file.as_uri())
        return page.problems()

    gc.collect()
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert _in_page(browser, run) == []
        gc.collect()
    assert [str(w.message) for w in said if issubclass(w.category, ResourceWarning)] == []


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    # `scripts/run_notebooks.py --fast --out TMP/notebooks tour` with EFFSTATS_FIGURES=TMP/figures
    run = fast_run_record(next(p for p in NOTEBOOKS if p.stem == "tour"), tmp_path_factory)
    tmp = run.folder
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MPLBACKEND")}
    env["EFFSTATS_FIGURES"] = str(tmp / "figures")
    assert run.status == 0, run.stdout[-2000:] + run.stderr[-3000:]
    # the runner prints the notebook's time and a summary table
    assert "tour.ipynb: ok in" in run.stdout and run.stdout.strip().splitlines()[-2].startswith("total")
    # a small notebook with inline math and no code output, rendered beside it
    math = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Math\n\nThe error $E = \\frac{1}{n}\\sum_i |y_i - \\hat y_i|$ and $$n' \\ll "
                                      "n.$$"),
        nbformat.v4.new_code_cell("x = 1", execution_count=1, outputs=[])])
    nbformat.write(math, tmp / "notebooks" / "math.ipynb")
    render = subprocess.run([str(VENV_PY), "scripts/render_reports.py", "--notebooks", str(tmp / "notebooks"),
                             "--out", str(tmp / "reports"), "--figures", str(tmp / "figures")],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert render.returncode == 0, render.stdout[-2000:] + render.stderr[-3000:]
    return tmp / "reports"


def test_report_is_self_contained(report):
    text = (report / "tour.html").read_text()
    assert "<script src" not in text and 'rel="stylesheet"' not in text  # nothing fetched from a CDN
    imgs = text.count("<img ")
    assert imgs >= 3 and text.count('<img src="data:image/png;base64,') == imgs
    index = (report / "index.html").read_text()
    assert 'href="tour.html"' in index and 'href="math.html"' in index
    claims = (report.parent / "figures" / "tour_claims.csv").read_text().splitlines()[1:]
    n_hold = sum(line.rstrip().endswith(",True") for line in claims)
    assert len(claims) >= 10 and f"{n_hold} / {len(claims)}" in index  # claims column, from the CSV
    assert f"claims holding: {n_hold} of {len(claims)}" in text         # and the report's header
    timings = (report.parent / "notebooks" / "timings.csv").read_text().splitlines()
    header, row = timings[0].split(","), dict(zip(timings[0].split(","), timings[1].split(",")))
    assert header == ["notebook", "mode", "seconds", "cpu_seconds", "status", "finished_utc", "figures"]
    assert (row["notebook"], row["mode"], row["status"]) == ("tour", "fast", "ok")
    assert row["figures"] == str((report.parent / "figures").resolve())  # where this run's claims are
    seconds = float(row["seconds"])
    assert 0 < float(row["cpu_seconds"]) < 4 * seconds  # a CPU time, bounded by the wall time
    assert f"{int(seconds // 60)}:{seconds % 60:04.1f}" in index  # the index shows the run time


@needs_data
def test_every_claim_of_the_reported_tour_holds(report):
    # the tour checks published numbers on the released per-item predictions: without them those claims fail,
    # saying so, and this test is skipped as the other tests of the predictions are
    claims = (report.parent / "figures" / "tour_claims.csv").read_text().splitlines()[1:]
    failing = [line for line in claims if not line.rstrip().endswith(",True")]
    assert claims and not failing, failing
    assert f"claims holding: {len(claims)} of {len(claims)}" in (report / "tour.html").read_text()


def test_report_renders_in_chromium(browser, report):
    async def tour(page):
        await page.open((report / "tour.html").as_uri())
        problems = page.problems()
        images = await page.js("""Array.from(document.images).map(i => {
            i.scrollIntoView(); const r = i.getBoundingClientRect();
            return {src: i.src.slice(0, 21), complete: i.complete, w: i.naturalWidth, h: i.naturalHeight,
                    x: r.left + scrollX, y: r.top + scrollY, cw: r.width, ch: r.height}; })""")
        shots = [await page.screenshot(im["x"], im["y"], im["cw"], im["ch"]) for im in images]
        # a region without a figure, for contrast: the left margin at the page's bottom
        blank = await page.screenshot(0, (await page.js("document.body.scrollHeight")) - 4, 40, 4)
        folded = await page.js("""(() => { const d = Array.from(document.querySelectorAll('details.es-code'));
            const code = d.map(x => x.querySelector('pre')).filter(Boolean);
            const before = [d.length, d.filter(x => x.open).length, code.filter(p => p.checkVisibility()).length];
            document.getElementById('es-show-code').click();
            const after = [d.filter(x => x.open).length, code.filter(p => p.checkVisibility()).length];
            return before.concat(after, [code.length]); })()""")
        return problems, images, shots, blank, folded

    async def index(page):
        await page.open((report / "index.html").as_uri())
        return page.problems(), await page.js("Array.from(document.querySelectorAll('a')).map(a => "
                                              "a.getAttribute('href'))")

    async def math(page):
        await page.open((report / "math.html").as_uri())
        return page.problems(), await page.js("document.querySelectorAll('.katex').length")

    problems, images, shots, blank, folded = _in_page(browser, tour)
    assert not problems, problems                           # no console error, exception or failed load
    assert len(images) >= 3
    for im, shot in zip(images, shots):
        assert im["src"] == "data:image/png;base64" and im["complete"] and im["w"] > 100 and im["h"] > 100, im
        assert shot.shape[0] > 50 and shot.shape[1] > 50
        ink = (shot < 235).any(axis=2).mean()               # share of non-white pixels in the figure's region
        colours = len(np.unique(shot.reshape(-1, 3), axis=0))
        assert ink > 0.05 and colours > 50, (im, ink, colours)
    assert (blank > 235).all()                              # the contrast region is white: ink means a figure
    n_cells, open_before, visible_before, open_after, visible_after, n_code = folded
    assert n_cells >= 10 and open_before == 0 and visible_before == 0   # code folded by default ...
    assert open_after == n_cells and visible_after == n_code > 0        # ... and shown by the button

    index_problems, links = _in_page(browser, index)
    assert not index_problems and "tour.html" in links and "math.html" in links, (index_problems, links)
    math_problems, n_math = _in_page(browser, math)
    assert n_math >= 2 and not math_problems, (n_math, math_problems)   # inline and display math typeset


def test_widget_outputs_keep_their_text_only():
    # a widget (e.g. a progress bar) would load its JavaScript from the network: the report keeps its text form
    import importlib.util

    spec = importlib.util.spec_from_file_location("render_reports", ROOT / "scripts" / "render_reports.py")
    rr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rr)
    view = {"model_id": "abc", "version_major": 2, "version_minor": 0}
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("bar", execution_count=1, outputs=[
        nbformat.v4.new_output("display_data", data={rr.WIDGET_VIEW: view, "text/plain": "boot: 100% 3/3"}),
        nbformat.v4.new_output("display_data", data={rr.WIDGET_VIEW: view})])])
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2,
                                                                            "version_minor": 0}}
    page = rr.render_notebook(nb, "w", meta="m")
    assert "boot: 100% 3/3" in page
    assert "widget-view" not in page and "widget-state" not in page and "<script src" not in page


def test_index_reads_the_claims_of_the_run_it_renders(tmp_path, monkeypatch):
    # A FAST run with EFFSTATS_FIGURES=/tmp/x is credited with the claims it wrote there, not with those of the
    # committed full run in figures/: the runner records its figures folder in timings.csv and the index reads
    # the claims from there (an explicit --figures still wins).
    import importlib.util

    spec = importlib.util.spec_from_file_location("render_reports", ROOT / "scripts" / "render_reports.py")
    rr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rr)
    nb_dir, this_run, elsewhere = tmp_path / "notebooks", tmp_path / "fig_run", tmp_path / "fig_other"
    for d in (nb_dir, this_run, elsewhere):
        d.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# demo")]), nb_dir / "demo.ipynb")
    (this_run / "demo_claims.csv").write_text("claim,paper,ours,holds\na,1,1,True\nb,1,2,False\n")
    (elsewhere / "demo_claims.csv").write_text("claim,paper,ours,holds\na,1,1,True\nb,1,1,True\nc,1,1,True\n")
    (nb_dir / "timings.csv").write_text("notebook,mode,seconds,status,finished_utc,figures\n"
                                        f"demo,fast,3.0,ok,2026-01-01 00:00:00,{this_run}\n")
    monkeypatch.setenv("EFFSTATS_FIGURES", str(elsewhere))
    rr.render_all(nb_dir, tmp_path / "reports")
    index = (tmp_path / "reports" / "index.html").read_text()
    assert "1 / 2" in index and "3 / 3" not in index
    assert "claims holding: 1 of 2" in (tmp_path / "reports" / "demo.html").read_text()
    rr.render_all(nb_dir, tmp_path / "reports", elsewhere)
    assert "3 / 3" in (tmp_path / "reports" / "index.html").read_text()


def test_claims_that_record_a_non_replication_are_counted_apart(tmp_path):
    # "the paper's 63 % does not replicate: ours is lower" holds when ours is lower, so "16 of 16 hold" read as
    # agreement with the paper; the count of such claims is shown beside it
    import importlib.util

    spec = importlib.util.spec_from_file_location("render_reports", ROOT / "scripts" / "render_reports.py")
    rr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rr)
    path = tmp_path / "demo_claims.csv"
    path.write_text("claim,paper,ours,holds\na replicates,1,1,True\n"
                    "\"paper's 63% Does Not Replicate: ours is lower\",63,39,True\nc,1,2,False\n"
                    "the paper's 5% does not replicate: ours is higher,5,4,False\n")  # failing: records nothing
    assert rr.read_claims(path) == (2, 4, 1)
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# demo")]), nb_dir / "demo.ipynb")
    rr.render_all(nb_dir, tmp_path / "reports", tmp_path)
    assert "2 / 4 (1 not replicating)" in (tmp_path / "reports" / "index.html").read_text()
    assert "claims holding: 2 of 4 (1 of them: a paper's number does not replicate)" in (
        tmp_path / "reports" / "demo.html").read_text()
