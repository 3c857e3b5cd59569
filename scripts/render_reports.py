#!/usr/bin/env python3
"""Render executed notebooks to self-contained HTML reports, as R Markdown knits, with an index page.

Each build/notebooks/<name>.ipynb (executed by run_notebooks.py) becomes build/reports/<name>.html: nbconvert's
HTMLExporter with figures embedded as data: URIs, the stylesheet inlined, no script or stylesheet fetched from the
network (so a report opens offline, mailed or archived), and each code cell folded in a <details> block that the
reader opens one by one or all at once ("show all code"; --code shown starts with the code open). Inline LaTeX
($...$) is typeset by Debian's KaTeX, inlined with its fonts, when installed. build/reports/index.html links the
reports with each notebook's run time (from timings.csv) and how many of its claims hold (FIGURES/<name>_claims.csv).

Usage: render_reports.py [--notebooks DIR] [--out DIR] [--figures DIR] [--code {folded,shown}] [NAME ...]
"""
from __future__ import annotations

import argparse
import base64
import csv
import html
import os
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
KATEX_DIR = Path("/usr/share/javascript/katex")  # Debian's libjs-katex

# Extends nbconvert's "lab" template: no require.js / MathJax from a CDN, code cells folded, a header bar.
TEMPLATE = r"""
{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{{ resources.effstats.head_extra }}{%- endblock html_head_js_mathjax -%}
{% block extra_css %}
<style type="text/css">
.es-bar { position: sticky; top: 0; z-index: 10; background: #f6f8fa; border-bottom: 1px solid #d0d7de;
  padding: 6px 16px; font: 13px system-ui, sans-serif; display: flex; gap: 12px; align-items: center; }
.es-bar .es-meta { color: #57606a; flex: 1; }
.es-bar button { font: inherit; padding: 2px 10px; cursor: pointer; }
details.es-code > summary { cursor: pointer; color: #57606a; font: 12px system-ui, sans-serif; margin: 2px 0 2px 8px; }
details.es-code[open] > summary { margin-bottom: 2px; }
.jp-Notebook { padding-top: 0; }
</style>
{% endblock extra_css %}
{%- block body_header -%}
{{ super() }}
<div class="es-bar">
  <a href="index.html">&larr; all reports</a>
  <span class="es-meta">{{ resources.effstats.meta }}</span>
  <button type="button" id="es-show-code">show all code</button>
  <button type="button" id="es-hide-code">hide all code</button>
</div>
{%- endblock body_header -%}
{% block input_group -%}
<details class="es-code"{% if resources.effstats.code_open %} open{% endif %}><summary>code</summary>
{{ super() }}
</details>
{%- endblock input_group %}
{% block footer_js %}
<script>
(function () {
  function setAll(open) {
    document.querySelectorAll("details.es-code").forEach(function (d) { d.open = open; });
  }
  document.getElementById("es-show-code").addEventListener("click", function () { setAll(true); });
  document.getElementById("es-hide-code").addEventListener("click", function () { setAll(false); });
})();
</script>
{{ resources.effstats.body_extra }}
{% endblock footer_js %}
"""

_FONT_TYPES = {".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf"}


def _katex() -> tuple[str, str] | None:
    """KaTeX's CSS (fonts inlined as data: URIs) and JS with auto-render, or None if libjs-katex is not installed."""
    css_path, js_path, auto = (KATEX_DIR / "katex.min.css", KATEX_DIR / "katex.min.js",
                               KATEX_DIR / "contrib" / "auto-render.js")
    if not (css_path.exists() and js_path.exists() and auto.exists()):
        return None
    css = css_path.read_text()

    def inline_font(m: re.Match) -> str:
        ref = m.group(1).strip("'\"")
        font = (css_path.parent / ref).resolve()
        if font.suffix not in _FONT_TYPES or not font.exists():
            return "url()"  # drop a font format we do not ship (the browser uses the next one in the list)
        data = base64.b64encode(font.read_bytes()).decode()
        return f"url(data:{_FONT_TYPES[font.suffix]};base64,{data})"

    # keep only woff2 sources (every current browser reads them): a third of the size of all three formats
    css = re.sub(r",\s*url\([^)]*\.(?:woff|ttf)\)\s*format\([^)]*\)", "", css)
    css = re.sub(r"url\(([^)]*)\)", inline_font, css)
    head = f"<style type=\"text/css\">{css}</style>"
    render = ("renderMathInElement(document.body, {delimiters: ["
              "{left: '$$', right: '$$', display: true}, {left: '$', right: '$', display: false}],"
              " throwOnError: false});")
    body = (f"<script>{js_path.read_text()}</script>\n<script>{auto.read_text()}</script>\n"
            f"<script>{render}</script>")
    return head, body


def _has_math(nb: nbformat.NotebookNode) -> bool:
    return any(c.cell_type == "markdown" and re.search(r"\$[^$\n]+\$", c.source) for c in nb.cells)


def _title(nb: nbformat.NotebookNode, default: str) -> str:
    for c in nb.cells:
        if c.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", c.source, re.M)
            if m:  # plain text for the index: Markdown emphasis, code marks and links dropped
                t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))
                return re.sub(r"(\*\*|\*|`)(.+?)\1", r"\2", t).strip()
    return default


def read_timings(path: Path) -> dict[str, dict]:
    if not path.exists():
        return {}
    with path.open(newline="") as fh:
        return {r["notebook"]: r for r in csv.DictReader(fh)}


def read_claims(path: Path) -> tuple[int, int, int] | None:
    """(claims that hold, claims, claims stating that a paper's number does not replicate) from a claims CSV, or
    None if there is none. A claim such as "the paper's 63 % does not replicate: ours is lower" holds when ours is
    lower, so the count of holding claims alone would read as agreement with the papers; the third number says how
    many of them record a disagreement."""
    if not path.exists():
        return None
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    holding = [r for r in rows if r.get("holds", "").strip() == "True"]
    # only a holding claim records a non-replication (a failing one did not establish it)
    differs = sum("not replicate" in r.get("claim", "").lower() for r in holding)
    return len(holding), len(rows), differs


def _mmss(seconds: str | float | None) -> str:
    if seconds in (None, ""):
        return "n/a"
    s = float(seconds)
    return f"{int(s // 60)}:{s % 60:04.1f}"


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _drop_widgets(nb: nbformat.NotebookNode) -> None:
    """Keep widget outputs' text fallback only: rendering a widget would load its JavaScript from the network."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for o in cell.get("outputs", []):
            o.get("data", {}).pop(WIDGET_VIEW, None)
        cell.outputs = [o for o in cell.get("outputs", []) if "data" not in o or o["data"]]


def nbconvert_missing() -> str | None:
    """None when nbconvert (and the Jinja2 it renders with) can be imported, else why not, in one line."""
    try:
        import jinja2  # noqa: F401
        import nbconvert  # noqa: F401
    except ImportError as exc:
        return (f"{type(exc).__name__}: {exc}; the HTML reports need nbconvert (Debian: python3-nbconvert, "
                "which make setup installs; pip: nbconvert)")
    return None


def render_notebook(nb: nbformat.NotebookNode, name: str, *, meta: str, code_open: bool = False) -> str:
    """One executed notebook as a self-contained HTML page (str)."""
    # imported here: the folder's other readers (the index, run_notebooks.py's check) need no nbconvert
    import jinja2
    from nbconvert import HTMLExporter

    _drop_widgets(nb)
    exporter = HTMLExporter(
        template_name="lab",
        extra_loaders=[jinja2.DictLoader({"effstats_report.html.j2": TEMPLATE})],
        template_file="effstats_report.html.j2",
        embed_images=True,  # attachments and linked local images of markdown cells become data: URIs too
        exclude_anchor_links=True,
    )
    head_extra = body_extra = ""
    if _has_math(nb):
        katex = _katex()
        if katex is not None:
            head_extra, body_extra = katex
    resources = {
        "metadata": {"name": name, "path": str(ROOT / "notebooks")},
        "effstats": {"meta": meta, "code_open": code_open, "head_extra": head_extra, "body_extra": body_extra},
    }
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    return body


INDEX = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>effstats reports</title>
<style>
body {{ font: 15px/1.5 system-ui, sans-serif; max-width: 1000px; margin: 2em auto; padding: 0 1em; color: #1f2328; }}
table {{ border-collapse: collapse; width: 100%; }}
th, td {{ text-align: left; padding: 6px 10px; border-bottom: 1px solid #d0d7de; vertical-align: top; }}
td.num, th.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
.bad {{ color: #cf222e; font-weight: 600; }}
.note {{ color: #57606a; font-size: 13px; }}
</style></head>
<body>
<h1>effstats reports</h1>
<p class="note">Executed notebooks rendered as self-contained HTML (figures embedded; code folded, open it per cell
or with "show all code"). Rendered {rendered} UTC.</p>
<table>
<thead><tr><th>report</th><th>notebook</th><th>mode</th><th class="num">run time (m:s)</th><th>status</th>
<th class="num">claims holding (of them: a paper's number does not replicate)</th>\
<th class="num">figures</th></tr></thead>
<tbody>
{rows}
</tbody>
<tfoot><tr><th colspan="3">sum of the notebooks' times (less on the wall clock when two run at once, \
as make demo does on 2 or more cores)</th><th class="num">{total}</th><th colspan="3"></th></tr></tfoot>
</table>
</body></html>
"""


def render_page(path: Path, out_dir: Path, timing: dict, claims: tuple[int, int, int] | None, *,
                code: str = "folded") -> Path:
    """Render one executed notebook ``path`` as out_dir/<name>.html and return the page.

    ``timing`` is its row of timings.csv ({} without one) and ``claims`` what :func:`read_claims` read from its claims
    table: the page's header says when, how long and how the run went, and how many of its claims hold.
    """
    nb = nbformat.read(path, as_version=4)
    t = timing
    meta = (f"{path.name}: executed {t.get('finished_utc', '?')} UTC in {_mmss(t.get('seconds'))} "
            f"({t.get('mode', '?')} mode, {t.get('status', '?')})" if t else f"{path.name}")
    if claims is not None:
        meta += (f"; claims holding: {claims[0]} of {claims[1]} "
                 f"({claims[2]} of them: a paper's number does not replicate)")
    out_dir.mkdir(parents=True, exist_ok=True)
    page = out_dir / f"{path.stem}.html"
    page.write_text(render_notebook(nb, path.stem, meta=meta, code_open=code == "shown"), encoding="utf-8")
    print(f"  {page} ({page.stat().st_size / 1e6:.1f} MB)", flush=True)
    return page


def claims_reader(timings: dict[str, dict], figures: Path | None = None):
    """``claims_of(stem)``: a notebook's claims counts (:func:`read_claims`) from ``figures`` if given, else from the
    folder its run wrote them to (its row of ``timings``), else from $EFFSTATS_FIGURES or figures/."""
    default_figures = Path(os.environ.get("EFFSTATS_FIGURES", ROOT / "figures"))

    def claims_of(stem: str) -> tuple[int, int, int] | None:
        folder = figures or Path(timings.get(stem, {}).get("figures") or default_figures)
        return read_claims(folder / f"{stem}_claims.csv")

    return claims_of


def write_index(nb_dir: Path, out_dir: Path, figures: Path | None = None) -> Path:
    """Write out_dir/index.html: every report in out_dir (not only this run's) with its notebook's title, run time
    and status (nb_dir/timings.csv), claims and figures; returns its path."""
    timings = read_timings(nb_dir / "timings.csv")
    claims_of = claims_reader(timings, figures)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows, total = [], 0.0
    for page in sorted(out_dir.glob("*.html")):
        if page.name == "index.html":
            continue
        stem = page.stem
        nb_path = nb_dir / f"{stem}.ipynb"
        nb = nbformat.read(nb_path, as_version=4) if nb_path.exists() else None
        title = _title(nb, stem) if nb is not None else stem
        n_fig = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
                    for o in c.get("outputs", [])) if nb is not None else 0
        t = timings.get(stem, {})
        total += float(t.get("seconds") or 0)
        claims = claims_of(stem)
        claims_cell = "none" if claims is None else f"{claims[0]} / {claims[1]} ({claims[2]} not replicating)"
        claims_cls = " bad" if claims is not None and claims[0] < claims[1] else ""
        status = t.get("status", "n/a")
        rows.append(
            f"<tr><td><a href=\"{html.escape(page.name)}\">{html.escape(title)}</a></td>"
            f"<td>{html.escape(stem)}.ipynb</td><td>{html.escape(t.get('mode', 'n/a'))}</td>"
            f"<td class=\"num\">{_mmss(t.get('seconds'))}</td>"
            f"<td class=\"{'bad' if status not in ('ok', 'n/a') else ''}\">{html.escape(status)}</td>"
            f"<td class=\"num{claims_cls}\">{claims_cell}</td><td class=\"num\">{n_fig}</td></tr>")
    index = out_dir / "index.html"
    index.write_text(INDEX.format(rows="\n".join(rows), total=_mmss(total),
                                  rendered=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M")), encoding="utf-8")
    print(f"  {index}", flush=True)
    return index


def render_all(nb_dir: Path, out_dir: Path, figures: Path | None = None, *, names: list[str] | None = None,
               code: str = "folded") -> list[Path]:
    """Render every executed notebook in nb_dir (or those named) and write out_dir/index.html; returns the pages.

    Claims are read from ``figures`` if given, else from the folder the run wrote them to (timings.csv), else
    from $EFFSTATS_FIGURES or figures/: a FAST run with EFFSTATS_FIGURES=/tmp/x is not credited with the claims
    of the committed full run.
    """
    paths = sorted(nb_dir.glob("*.ipynb"))
    if names:
        unknown = sorted(set(names) - {p.stem for p in paths} - {p.name for p in paths})
        if unknown:
            raise FileNotFoundError(f"names: no executed notebook {unknown} in {nb_dir} "
                                    f"(have {[p.stem for p in paths]})")
        paths = [p for p in paths if p.stem in names or p.name in names]
    if not paths:
        raise FileNotFoundError(f"notebooks: no executed notebook in {nb_dir} (run `make demo` or "
                                f"scripts/run_notebooks.py --out {nb_dir})")
    timings = read_timings(nb_dir / "timings.csv")
    claims_of = claims_reader(timings, figures)
    written = [render_page(p, out_dir, timings.get(p.stem, {}), claims_of(p.stem), code=code) for p in paths]
    write_index(nb_dir, out_dir, figures)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="notebook names (default: all executed notebooks)")
    ap.add_argument("--notebooks", type=Path, default=ROOT / "build" / "notebooks", help="executed notebooks")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "reports", help="where the HTML goes")
    ap.add_argument("--figures", type=Path, default=None,
                    help="where the notebooks wrote <name>_claims.csv (default: the folder recorded in "
                         "timings.csv by run_notebooks.py, else $EFFSTATS_FIGURES or figures/)")
    ap.add_argument("--code", choices=["folded", "shown"], default="folded", help="code cells folded or open")
    args = ap.parse_args(argv)
    missing = nbconvert_missing()
    if missing is not None:
        print(f"render_reports: {missing}", file=sys.stderr)
        return 1
    try:
        render_all(args.notebooks, args.out, args.figures, names=args.names, code=args.code)
    except FileNotFoundError as exc:
        print(f"render_reports: {exc}", file=sys.stderr)
        return 1
    print(f"open {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
