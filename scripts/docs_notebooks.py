#!/usr/bin/env python3
"""Stage the notebooks for the documentation site, with their outputs (``make docs`` runs this before Sphinx).

Each page shows an executed copy of ``notebooks/<name>.ipynb``: the full run ``make demo`` wrote to
``build/notebooks`` (or ``$EFFSTATS_DOCS_NOTEBOOKS``) when it is newer than the notebook, else a FAST-mode run kept in
``build/docs-notebooks`` (``tests/test_notebooks.py`` leaves its passing runs there too), executed here when it is
missing or older than the notebook (its figures go to
``build/docs-notebooks/figures``, never to ``figures/``). The chosen copies are written to ``docs/notebooks/``,
where nbsphinx reads them. An executed copy counts only when it ran to the end: a copy with an error output or with a
code cell that never ran (a run that failed or was stopped) is passed over with one line saying so. A notebook that
fails to execute fails the script (exit status 1), so the site is never published with an empty page or a traceback;
so does a notebook to run that reads the released per-item predictions when they are not found, with one line naming
those notebooks and where to put the predictions.

Usage: docs_notebooks.py [--jobs N]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
FAST_COPIES = ROOT / "build" / "docs-notebooks"
STAGED = ROOT / "docs" / "notebooks"


def _shown(path: Path) -> Path:
    """The path as printed: relative to the checkout when inside it."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def _fresh(copy: Path, source: Path) -> bool:
    return copy.is_file() and copy.stat().st_mtime >= source.stat().st_mtime


def unfinished(copy: Path) -> str | None:
    """Why an executed copy did not run to the end (an error output, a code cell that never ran, unreadable), or
    None when every code cell ran without an error."""
    try:
        nb = json.loads(copy.read_text(encoding="utf-8"))
        cells = [c for c in nb["cells"] if c.get("cell_type") == "code"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"unreadable ({type(exc).__name__})"
    for i, cell in enumerate(cells, 1):
        tags = cell.get("metadata", {}).get("tags", [])
        source = cell.get("source", "")
        if not "".join(source).strip() or "skip-execution" in tags:
            continue  # nbclient runs neither
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors and "raises-exception" not in tags:
            return f"code cell {i} ends in {errors[0].get('ename', 'an error')}"
        if cell.get("execution_count") is None:
            return f"code cell {i} never ran (the run was stopped)"
    return None


def choose(names: list[str] | None = None) -> tuple[dict[str, Path], list[str]]:
    """The executed copy to publish for each notebook, and the notebooks that need a FAST run first."""
    full = Path(os.environ.get("EFFSTATS_DOCS_NOTEBOOKS", ROOT / "build" / "notebooks"))
    chosen, to_run = {}, []
    for src in sorted(NOTEBOOKS.glob("*.ipynb")):
        if names and src.stem not in names:
            continue
        for copy in (full / src.name, FAST_COPIES / src.name):
            if _fresh(copy, src):
                why = unfinished(copy)
                if why is None:
                    chosen[src.stem] = copy
                    break
                print(f"docs: not publishing {copy}: {why}", flush=True)
        else:
            to_run.append(src.stem)
            chosen[src.stem] = FAST_COPIES / src.name
    return chosen, to_run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2, help="notebooks executed at once (default 2)")
    args = ap.parse_args(argv)
    chosen, to_run = choose()
    if to_run:
        print(f"docs: executing {', '.join(to_run)} in FAST mode (no executed copy newer than the notebook); "
              f"copies kept in {_shown(FAST_COPIES)}", flush=True)
        sys.path.insert(0, str(ROOT / "scripts"))
        import run_notebooks

        os.environ["EFFSTATS_FIGURES"] = str(FAST_COPIES / "figures")  # FAST figures never overwrite figures/
        (FAST_COPIES / "figures").mkdir(parents=True, exist_ok=True)
        reading = [name for name in to_run if name not in run_notebooks.NEEDS_NO_DATA]
        no_data = run_notebooks.missing_data(True) if reading else None
        status = run_notebooks.main(["--fast", "--out", str(FAST_COPIES), "--jobs", str(args.jobs), *to_run])
        timings = FAST_COPIES / "timings.csv"
        rows = []
        if timings.is_file():  # none when every notebook to run was left out for want of the predictions
            with timings.open(newline="") as fh:
                rows = list(csv.DictReader(fh))
        ran = set(to_run) - set(reading) if no_data is not None else set(to_run)
        failed = [r["notebook"] for r in rows if r["notebook"] in ran and r["status"] != "ok"]
        for name in failed:  # a partly executed copy must not pass for a fresh one next time
            (FAST_COPIES / f"{name}.ipynb").unlink(missing_ok=True)
        if failed or (status and no_data is None):
            print("docs: a notebook failed to execute (above); the site is not built with an empty page",
                  file=sys.stderr)
        if no_data is not None:
            print(f"docs: {len(reading)} notebook{'s' if len(reading) > 1 else ''} ({', '.join(reading)}) "
                  "read the released per-item predictions, which were not found: set EFFSTATS_DATA to their "
                  "folder or put them in shared/data/predictions beside the checkout (README, Data); the site is "
                  "not built without their pages", file=sys.stderr)
        if status or failed:
            return 1
    STAGED.mkdir(parents=True, exist_ok=True)
    for name, copy in chosen.items():
        dst = STAGED / f"{name}.ipynb"
        # copy only when changed, so an incremental build does not re-read unchanged notebooks
        if not dst.is_file() or dst.read_bytes() != copy.read_bytes():
            shutil.copyfile(copy, dst)
        print(f"docs: notebooks/{name} from {_shown(copy)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
