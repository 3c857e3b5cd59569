#!/usr/bin/env python3
"""Execute the notebooks in notebooks/ with nbclient (in full unless --fast), writing their figures to figures/.

Usage: run_notebooks.py [--fast] [--out DIR] [NAME ...]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbclient
import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def run_notebook(path: Path, *, fast: bool, out_dir: Path | None = None, timeout: int = 3600) -> nbformat.NotebookNode:
    """Execute one notebook with cwd = notebooks/; raises nbclient's CellExecutionError on any cell error."""
    os.environ["EFFSTATS_FAST"] = "1" if fast else "0"
    os.environ.setdefault("EFFSTATS_FIGURES", str(ROOT / "figures"))
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # quiet ipykernel debugger warning
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out_dir / path.name)
    return nb


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("names", nargs="*", help="notebook names (default: all)")
    ap.add_argument("--fast", action="store_true", help="FAST mode (what the tests run)")
    ap.add_argument("--out", type=Path, help="directory for the executed copies")
    args = ap.parse_args(argv)
    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    if args.names:
        paths = [p for p in paths if p.stem in args.names or p.name in args.names]
    (ROOT / "figures").mkdir(exist_ok=True)
    for p in paths:
        t = time.perf_counter()
        print(f"executing {p.name} ({'fast' if args.fast else 'full'}) ...", flush=True)
        run_notebook(p, fast=args.fast, out_dir=args.out)
        print(f"  done in {time.perf_counter() - t:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
